import { MANIFEST_FILE, PART_SUFFIX } from '../../domain/output';
import { StorageError } from './errors';

/**
 * What is wrong with an object name, or undefined when it is one: names are relative,
 * `/`-separated, without control characters, and never escape the output location. The job file
 * validator already guarantees this for names reelflow makes; storage checks again because it is
 * the last line of defence, and a manifest row read back is checked the same way
 * (storage/manifest/codec.ts): a handed folder's manifest may name anything.
 */
export function objectNameProblem(name: string): string | undefined {
  const bad =
    name === '' ||
    name.startsWith('/') ||
    name.includes('\\') ||
    // eslint-disable-next-line no-control-regex
    /[\u0000-\u001f\u007f]/.test(name) ||
    name.split('/').some((segment) => segment === '' || segment === '.' || segment === '..');
  if (bad) return 'must be a relative path inside the output location, without control characters';
  if (name === MANIFEST_FILE || name.endsWith(PART_SUFFIX)) return "is reserved for reelflow's own files";
  return undefined;
}

export function checkObjectName(name: string): string {
  const problem = objectNameProblem(name);
  if (problem) throw new StorageError(`invalid output name ${JSON.stringify(name)}: ${problem}`);
  return name;
}
