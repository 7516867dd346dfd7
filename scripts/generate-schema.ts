// Writes schema/job.schema.json from the zod definitions in jobfile/schema.ts.
// `--check`: write nothing, exit 1 when the committed file is out of date (CI).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { jobJsonSchemaText } from '../jobfile/json-schema';

const target = join(__dirname, '..', 'schema', 'job.schema.json');
const wanted = jobJsonSchemaText();

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(target, 'utf8');
  } catch {
    // missing counts as out of date
  }
  if (current !== wanted) {
    process.stderr.write('schema/job.schema.json is out of date: run `npm run schema` and commit the result\n');
    process.exitCode = 1;
  } else {
    process.stdout.write('schema/job.schema.json is up to date\n');
  }
} else {
  writeFileSync(target, wanted);
  process.stdout.write(`wrote ${target}\n`);
}
