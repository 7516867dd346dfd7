// zod issues -> positioned errors that say what is allowed.
import type { z } from 'zod';
import type { JobFileError } from './plan';
import { type Anchor, namingKey, type Path } from './positions';
import { nearest, show } from './text';

/** Message marker for issues without a schema-specific message; issues.ts writes those. */
export const DEFAULT_MESSAGE = '\u0000';
export const parseOptions = { reportInput: true, error: (): string => DEFAULT_MESSAGE } as const;

export type Locate = (path: Path, message: string, anchor?: Anchor) => JobFileError;

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  valueType?: z.ZodType;
  innerType?: z.ZodType;
  in?: z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** The keys an object schema at `path` allows (empty when the path does not lead to an object). */
export function allowedKeysAt(schema: z.ZodType, path: Path): string[] {
  let s: z.ZodType | undefined = schema;
  let i = 0;
  while (s) {
    const def = defOf(s);
    if (def.innerType && ['optional', 'default', 'prefault', 'nullable', 'readonly', 'catch'].includes(def.type)) {
      s = def.innerType;
      continue;
    }
    if (def.type === 'pipe') {
      s = def.in;
      continue;
    }
    if (i === path.length) return def.type === 'object' && def.shape ? Object.keys(def.shape) : [];
    const seg = path[i++];
    if (def.type === 'object') s = def.shape?.[String(seg)];
    else if (def.type === 'array') s = def.element;
    else if (def.type === 'record') s = def.valueType;
    else return [];
  }
  return [];
}

/** `items[2].references[0]` for messages; "the job file" for the root. */
export function pathLabel(path: Path, root = 'the job file'): string {
  return namingKey(path, '').path ?? root;
}

function keyLabel(path: Path): string {
  const last = path[path.length - 1];
  if (typeof last === 'number') {
    const parent = path[path.length - 2];
    return `${parent === undefined ? '' : String(parent)}[${last}]`;
  }
  return last === undefined ? 'the job file' : String(last);
}

const EXPECTED: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a map',
  array: 'a list',
  record: 'a map',
  literal: 'a fixed value',
};

function generic(issue: z.core.$ZodIssue): string {
  const label = keyLabel(issue.path);
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case 'invalid_type':
      return `${label} must be ${EXPECTED[issue.expected] ?? issue.expected}, got ${show(input)}`;
    case 'too_small':
      if (issue.origin === 'array') return `${label} needs at least ${String(issue.minimum)} entries`;
      if (issue.origin === 'string') return `${label} must not be empty`;
      return `${label} must be at least ${String(issue.minimum)}, got ${show(input)}`;
    case 'too_big':
      if (issue.origin === 'array') return `${label} takes at most ${String(issue.maximum)} entries`;
      if (issue.origin === 'string') return `${label} must be at most ${String(issue.maximum)} characters`;
      return `${label} must be at most ${String(issue.maximum)}, got ${show(input)}`;
    case 'invalid_value':
      return `${label} must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${show(input)}`;
    case 'invalid_key': {
      const inner = issue.issues[0]?.message;
      return inner && inner !== DEFAULT_MESSAGE ? inner : `${show(input)} is not allowed as a key of ${keyLabel(issue.path.slice(0, -1))}`;
    }
    case 'invalid_union':
      return `${label} has an unexpected form, got ${show(input)}`;
    default:
      return `${label} is not valid, got ${show(input)}`;
  }
}

/** One positioned error per problem; an unknown-keys issue becomes one error per key. */
export function issuesToErrors(
  issues: readonly z.core.$ZodIssue[],
  schema: z.ZodType,
  locate: Locate,
  basePath: Path = [],
  root = 'the job file',
): JobFileError[] {
  const out: JobFileError[] = [];
  // A missing key that an unknown key in the same map is a typo of is reported once, as the typo.
  const typoFor = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const allowed = allowedKeysAt(schema, issue.path);
    for (const key of issue.keys) {
      const hint = nearest(key, allowed);
      if (hint) typoFor.add(JSON.stringify([...issue.path, hint]));
    }
  }
  for (const issue of issues) {
    const path = [...basePath, ...issue.path];
    if (issue.code === 'unrecognized_keys') {
      const allowed = allowedKeysAt(schema, issue.path);
      for (const key of issue.keys) {
        const hint = nearest(key, allowed);
        let message = hint
          ? `unknown key '${key}', did you mean '${hint}'?`
          : `unknown key '${key}' in ${pathLabel(path, root)}; allowed keys: ${allowed.join(', ')}`;
        if (/api.?key|token|secret|password/i.test(key)) message += ' (never put a key in a job file: use gateway.api_key_env)';
        out.push(locate([...path, key], message, 'key'));
      }
      continue;
    }
    const input = (issue as { input?: unknown }).input;
    if (issue.code === 'invalid_type' && input === undefined && issue.message === DEFAULT_MESSAGE) {
      if (typoFor.has(JSON.stringify(issue.path))) continue;
      const key = String(path[path.length - 1]);
      out.push(locate(path, `${pathLabel(path.slice(0, -1), root)} is missing required key '${key}'`));
      continue;
    }
    if (issue.code === 'invalid_key') {
      out.push(locate(path, generic(issue), 'key'));
      continue;
    }
    out.push(locate(path, issue.message === DEFAULT_MESSAGE ? generic(issue) : issue.message));
  }
  return out;
}
