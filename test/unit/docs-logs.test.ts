// docs/logs.md documents every log event reelflow emits, and no other: the table's names and the
// names in activities/log-events.ts are the same set, and each name is written by some line of the
// code (its constant is used outside the list itself).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { LogEvent } from '../../activities/log-events';

const root = join(__dirname, '..', '..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

describe('docs/logs.md', () => {
  it('documents exactly the events of activities/log-events.ts', () => {
    const text = readFileSync(join(root, 'docs', 'logs.md'), 'utf8');
    const documented = [...text.matchAll(/^\| `([a-z]+\.[a-z_]+)` \|/gm)].map((m) => m[1]!);
    assert.equal(new Set(documented).size, documented.length, 'an event documented twice');
    assert.deepEqual([...documented].sort(), Object.values(LogEvent).sort());
  });

  it('every listed event is emitted by the code, and no line names an event outside the list', () => {
    const code = ['activities', 'workflows', 'worker', 'gateway', 'client', 'review', 'cli']
      .flatMap((dir) => sources(join(root, dir)))
      .filter((path) => !path.endsWith(join('activities', 'log-events.ts')))
      .map((path) => readFileSync(path, 'utf8'))
      .join('\n');
    for (const [name, value] of Object.entries(LogEvent)) {
      assert.ok(code.includes(`LogEvent.${name}`), `${value} (LogEvent.${name}) is written nowhere`);
    }
    // An event named by a string of its own would escape the list and the docs.
    assert.deepEqual(
      [...code.matchAll(/\bevent: '([^']+)'/g)].map((m) => m[1]),
      [],
    );
  });
});
