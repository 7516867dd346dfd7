// How many values a YAML document holds once its aliases are expanded, counted on the parsed nodes
// before anything is built from them. An alias costs nothing to parse but everything after it
// (schema, expansion, error messages) walks its value once per use: 999 aliases of a 5,000-entry
// list made a 200 KB job file take seconds and hundreds of megabytes (docs/limits-input.md).
import { type Document, isAlias, isCollection, isPair, isScalar, type LineCounter, type Node } from 'yaml';
import type { JobFileError } from './plan';

/** Values that aliases may add to a job file, in all. Written values cost only their bytes. */
export const MAX_ALIAS_VALUES = 100_000;

/**
 * An error at the alias whose use passes MAX_ALIAS_VALUES, or at an alias inside the value it
 * names (a loop); undefined when the document is within bounds. Maps, lists and scalars each count
 * as one value; keys count only when they are themselves collections or aliases.
 */
export function aliasExpansionProblem(doc: Document, lines: LineCounter, file: string): JobFileError | undefined {
  const anchors = new Map<string, Node>();
  const sizes = new Map<Node, number>();
  const open = new Set<Node>();
  let added = 0;
  const at = (node: Node, message: string): JobFileError => {
    const { line, col } = lines.linePos(node.range?.[0] ?? 0);
    return { file, line, column: col, message };
  };

  // In document order, as an alias names the latest anchor before it.
  const size = (node: unknown): number | JobFileError => {
    if (isAlias(node)) {
      const source = anchors.get(node.source);
      if (source === undefined) return 0; // the parser has reported an unknown anchor
      if (open.has(source)) return at(node, `the alias *${node.source} is inside the value it names: a loop`);
      const adds = sizes.get(source) ?? 0;
      added += adds;
      if (added > MAX_ALIAS_VALUES) {
        return at(
          node,
          `aliases add more than ${MAX_ALIAS_VALUES} values to the job file (this *${node.source} adds ${adds}); ` +
            `at most ${MAX_ALIAS_VALUES} may be repeated through aliases: write shared settings once in defaults or models, or list items in an items_from file`,
        );
      }
      return adds;
    }
    const n = node as Node | null | undefined;
    if (!n) return 0;
    if (n.anchor) anchors.set(n.anchor, n);
    let total = 1;
    if (isCollection(n)) {
      open.add(n);
      for (const item of n.items) {
        const parts = isPair(item) ? [isScalar(item.key) ? null : item.key, item.value] : [item];
        for (const part of parts) {
          const s = size(part);
          if (typeof s !== 'number') return s;
          total += s;
        }
      }
      open.delete(n);
    }
    sizes.set(n, total);
    return total;
  };
  const result = size(doc.contents);
  return typeof result === 'number' ? undefined : result;
}
