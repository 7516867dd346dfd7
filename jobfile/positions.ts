// Source positions of a parsed YAML job file: from a value's path to file:line:column.
import { isAlias, isMap, isScalar, isSeq, type Document, type LineCounter, type Node, type Pair, type YAMLError } from 'yaml';
import type { JobFileError } from './plan';

export type Path = readonly PropertyKey[];

export interface Position {
  line: number;
  column: number;
}

/** Where a path points: the value, its key, or (when the key is missing) the nearest map around it. */
export type Anchor = 'value' | 'key';

export class YamlPositions {
  constructor(
    readonly file: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  private pos(offset: number): Position {
    const { line, col } = this.lines.linePos(offset);
    return { line, column: col };
  }

  private resolve(node: unknown): unknown {
    return isAlias(node) ? node.resolve(this.doc) : node;
  }

  /** Position of the value at `path` (or its key, or the closest existing parent). */
  at(path: Path, anchor: Anchor = 'value'): Position {
    let node: unknown = this.doc.contents;
    let pair: Pair | undefined;
    for (const seg of path) {
      node = this.resolve(node);
      if (isMap(node)) {
        const found = node.items.find((p) => {
          const k: unknown = p.key;
          return (isScalar(k) ? String(k.value) : String(k)) === String(seg);
        });
        if (!found) return this.start(node, 'parent');
        pair = found;
        node = found.value;
      } else if (isSeq(node) && typeof seg === 'number' && seg < node.items.length) {
        pair = undefined;
        node = node.items[seg];
      } else {
        return this.start(node, 'parent');
      }
    }
    if (anchor === 'key' && pair && isScalar(pair.key) && pair.key.range) return this.pos(pair.key.range[0]);
    const target = node as Node | null | undefined;
    const empty = !target || (isScalar(target) && target.value === null && target.range && target.range[0] === target.range[1]);
    if (empty && pair && isScalar(pair.key) && pair.key.range) return this.pos(pair.key.range[0]);
    return this.start(target, 'value');
  }

  private start(node: unknown, _why: string): Position {
    const n = node as Node | null | undefined;
    if (n && n.range) return this.pos(n.range[0]);
    return { line: 1, column: 1 };
  }

  error(path: Path, message: string, anchor: Anchor = 'value'): JobFileError {
    return { file: this.file, ...this.at(path, anchor), ...namingKey(path, message) };
  }
}

/**
 * The message names the key it is about (`defaults.seconds: ...`), unless it already does: it must
 * read right where the position is lost (a pasted log line, `--json` output).
 */
export function namingKey(path: Path, message: string): { path?: string; message: string } {
  if (path.length === 0) return { message };
  let label = '';
  for (const seg of path) label += typeof seg === 'number' ? `[${seg}]` : label ? `.${String(seg)}` : String(seg);
  if (message.includes(label)) return { path: label, message };
  // "seconds must be ..." at items[3].seconds reads "items[3].seconds must be ...".
  const last = path[path.length - 1];
  if (typeof last === 'string' && message.startsWith(`${last} `)) return { path: label, message: `${label}${message.slice(last.length)}` };
  return { path: label, message: `${label}: ${message}` };
}

/** YAML syntax errors in the same form as validation errors. */
export function yamlError(file: string, e: YAMLError): JobFileError {
  const where = e.linePos?.[0];
  const message = e.message.replace(/ at line \d+, column \d+:[\s\S]*$/, '').trim();
  return { file, line: where?.line ?? 1, column: where?.col ?? 1, message: `YAML: ${message}` };
}
