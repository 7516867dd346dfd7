// Output names checked where they will be written, before anything is created: a name that only
// fails at write time fails after a paid render. A name N is stored as N plus the extension the
// video's content type gives (activities/download.ts), first as N.<ext>.part (with N.<ext>.part.json
// beside it).
import { lstatSync, readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { PART_SUFFIX, VIDEO_EXTENSIONS } from '../domain/output';

// The longest extension a downloaded video can get is what a name must leave room for.
/** What a stored name may end with: a video extension, then maybe the part and its record. */
const STORED_SUFFIXES = VIDEO_EXTENSIONS.flatMap((ext) => [ext, `${ext}${PART_SUFFIX}`, `${ext}${PART_SUFFIX}.json`]);
/** Bytes in one path segment on Linux, macOS and Windows file systems alike. */
const MAX_SEGMENT_BYTES = 255;
/** S3's limit on a whole key; the output prefix takes part of it. */
const MAX_S3_KEY_BYTES = 1024;
/** Names that belong to reelflow's own files at the top of the output location. */
const RESERVED_TOP = { local: ['posters'], s3: ['manifest', 'posters'] } as const;

type Storage = keyof typeof RESERVED_TOP;

const bytes = (text: string): number => Buffer.byteLength(text, 'utf8');

/** Characters Windows refuses in a file name (and macOS's Finder shows `:` as `/`); `/` stays a folder. */
const UNSAFE_IN_NAMES = /[<>:"|?*]/g;

/**
 * A placeholder value as it may stand in a file name: each character unsafe on common file systems
 * becomes `-` (as in item keys: `16:9` -> `16-9`); `replaced` lists them for the warning.
 */
export function nameSafeValue(value: string): { value: string; replaced: string[] } {
  const replaced = [...new Set(value.match(UNSAFE_IN_NAMES) ?? [])];
  return { value: replaced.length > 0 ? value.replace(UNSAFE_IN_NAMES, '-') : value, replaced };
}

/** What is wrong with one rendered name for this storage, or undefined. */
export function storedNameProblem(name: string, storage: Storage, s3Prefix = ''): string | undefined {
  const segments = name.split('/');
  const top = segments[0]!;
  if (segments.length > 1 && (RESERVED_TOP[storage] as readonly string[]).includes(top)) {
    return `starts with the folder "${top}/", which reelflow uses for its own files`;
  }
  const room = Math.max(...VIDEO_EXTENSIONS.map(bytes)) + bytes(PART_SUFFIX);
  for (const [i, segment] of segments.entries()) {
    const limit = i === segments.length - 1 ? MAX_SEGMENT_BYTES - room : MAX_SEGMENT_BYTES;
    if (bytes(segment) > limit) {
      return (
        `has a ${i === segments.length - 1 ? 'file name' : 'folder name'} of ${bytes(segment)} bytes in UTF-8; at most ${limit} fit ` +
        `(${MAX_SEGMENT_BYTES} per name${i === segments.length - 1 ? `, less room for "${VIDEO_EXTENSIONS[2]}${PART_SUFFIX}"` : ''})`
      );
    }
  }
  if (storage === 's3' && bytes(s3Prefix) + bytes(name) + room > MAX_S3_KEY_BYTES) {
    return `with the prefix "${s3Prefix}" makes an S3 key over ${MAX_S3_KEY_BYTES} bytes`;
  }
  return undefined;
}

/**
 * The names of one job, checked against each other: the same name twice, a name that needs a
 * folder where another writes a file (`grp` is stored as `grp.mp4`, so `grp.mp4/x` cannot be), and
 * names that differ only in case or in Unicode normalization (`café` as NFC and as NFD: one file on
 * macOS, and alike to the eye everywhere: a warning).
 */
export class OutputNameSet {
  private readonly owners = new Map<string, string>();
  private readonly byFolded = new Map<string, string>();
  private readonly folders = new Map<string, string>();

  /** Records `name` for `owner`; an error, a warning, or nothing. */
  claim(name: string, owner: string): { error?: string; warning?: string } {
    const first = this.owners.get(name);
    if (first !== undefined)
      return { error: `would write the same output "${name}" as ${first}; make output.name unique, e.g. with {index} or {id}` };
    for (const ext of VIDEO_EXTENSIONS) {
      const folderOwner = this.folders.get(`${name}${ext}`);
      if (folderOwner !== undefined) return { error: `writes "${name}${ext}", a folder that ${folderOwner} needs for its output` };
    }
    const segments = name.split('/');
    for (let i = 1; i < segments.length; i++) {
      const folder = segments.slice(0, i).join('/');
      const ext = VIDEO_EXTENSIONS.find((e) => folder.endsWith(e));
      const fileOwner = ext === undefined ? undefined : this.owners.get(folder.slice(0, -ext.length));
      if (fileOwner !== undefined) return { error: `needs the folder "${folder}", where ${fileOwner} writes its video` };
    }
    this.owners.set(name, owner);
    for (let i = 1; i < segments.length; i++) this.folders.set(segments.slice(0, i).join('/'), owner);
    const folded = name.normalize('NFC').toLowerCase();
    const alike = this.byFolded.get(folded);
    if (alike === undefined) this.byFolded.set(folded, name);
    else if (alike.normalize('NFC') === name.normalize('NFC'))
      return {
        warning:
          `output "${name}" differs from "${alike}" only in Unicode normalization (NFC/NFD): they look the same, ` +
          'and macOS stores them as one file',
      };
    else return { warning: `output "${name}" differs from "${alike}" only in case: on macOS and Windows they are the same file` };
    return {};
  }

  /**
   * The claimed name that a local output directory `dir` would store at `file` (a video, its part
   * or the part's record), with its owner; undefined when none would. Used to keep a job from
   * replacing its own inputs (the job file, items_from, local references).
   */
  storedAt(dir: string, file: string): { name: string; owner: string } | undefined {
    const rel = relative(dir, file);
    if (rel === '' || rel.startsWith(`..${sep}`) || rel === '..' || join(dir, rel) !== file) return undefined;
    const asName = rel.split(sep).join('/');
    for (const suffix of STORED_SUFFIXES) {
      if (!asName.endsWith(suffix)) continue;
      const name = asName.slice(0, -suffix.length);
      const owner = this.owners.get(name);
      if (owner !== undefined) return { name, owner };
    }
    return undefined;
  }
}

/**
 * Links planted on the way to where local outputs are stored (docs/files.md): a folder of a name
 * that is a link (`out/clips -> ../elsewhere`), or a link where the manifest or a video would be
 * written. Storage refuses them too, but only once the item's render is paid; here they are named
 * before anything starts. Each folder is looked at once (lstat, readdir), so 200,000 names in one
 * folder cost one listing.
 */
export class PlantedLinks {
  /** Per folder (relative, `/`-separated): the link on its way, or the names in it that are links. */
  private readonly folders = new Map<string, { via: string } | { links: ReadonlySet<string> } | undefined>();

  constructor(private readonly dir: string) {}

  /** What is wrong with the manifest's path: a link, or a file with other hard links (`~/.bashrc`'s). */
  manifest(manifestFile: string): string | undefined {
    const path = join(this.dir, manifestFile);
    const seen = this.folder('');
    if (seen && 'links' in seen && seen.links.has(manifestFile)) return `${path} is a symbolic link`;
    try {
      const { nlink } = lstatSync(path);
      return nlink > 1 ? `${path} is a file with ${nlink - 1} other hard link(s)` : undefined;
    } catch {
      return undefined;
    }
  }

  /** The first link on the way to `name`'s stored file (any video extension), or undefined. */
  onTheWay(name: string): string | undefined {
    const cut = name.lastIndexOf('/');
    const seen = this.folder(cut < 0 ? '' : name.slice(0, cut));
    if (!seen) return undefined;
    if ('via' in seen) return seen.via;
    const base = name.slice(cut + 1);
    const linked = VIDEO_EXTENSIONS.find((ext) => seen.links.has(`${base}${ext}`));
    return linked === undefined ? undefined : join(this.dir, ...`${name}${linked}`.split('/'));
  }

  private folder(folder: string): { via: string } | { links: ReadonlySet<string> } | undefined {
    if (this.folders.has(folder)) return this.folders.get(folder);
    let found: { via: string } | { links: ReadonlySet<string> } | undefined;
    const cut = folder.lastIndexOf('/');
    const parent = folder === '' ? undefined : this.folder(cut < 0 ? '' : folder.slice(0, cut));
    if (parent && 'via' in parent) found = parent;
    else if (folder !== '' && !parent) found = undefined;
    else {
      const path = join(this.dir, ...(folder === '' ? [] : folder.split('/')));
      found = this.look(path);
    }
    this.folders.set(folder, found);
    return found;
  }

  /** A link at `path`, or the links in the folder at `path`; undefined when it does not exist yet. */
  private look(path: string): { via: string } | { links: ReadonlySet<string> } | undefined {
    try {
      if (path !== this.dir && lstatSync(path).isSymbolicLink()) return { via: path };
      const links = readdirSync(path, { withFileTypes: true })
        .filter((entry) => entry.isSymbolicLink())
        .map((entry) => entry.name);
      return { links: new Set(links) };
    } catch {
      return undefined;
    }
  }
}
