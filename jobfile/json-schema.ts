// The JSON Schema for editors, generated from the same zod definitions that validate job files.
import { z } from 'zod';
import { jobFileSchema } from './schema';

export function jobJsonSchema(): Record<string, unknown> {
  const generated = z.toJSONSchema(jobFileSchema, { io: 'input', target: 'draft-07', unrepresentable: 'any' }) as Record<string, unknown>;
  const { $schema, ...rest } = generated;
  return { $schema, ...rest };
}

export function jobJsonSchemaText(): string {
  return `${JSON.stringify(jobJsonSchema(), null, 2)}\n`;
}
