// Workflow log lines (docs/logs.md: job.* and item.* events) are written when a workflow runs, not
// again when a worker replays its history: replaying every recorded history writes none of them.
// (A replaying worker marks every task as replay, so the other side, the lines a workflow writes
// when it runs, is checked by test/e2e/logs.test.ts.)
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { DefaultLogger, Runtime, Worker, type LogEntry } from '@temporalio/worker';
import { workflowBundlePath } from '../../worker/bundle';

const dir = join(__dirname, '..', 'fixtures', 'histories');
const entries: LogEntry[] = [];
Runtime.install({ logger: new DefaultLogger('DEBUG', (entry) => entries.push(entry)) });

interface HistoryJson {
  events: Array<{ eventType: string | number }>;
}

async function replay(histories: Array<{ workflowId: string; json: HistoryJson }>): Promise<LogEntry[]> {
  entries.length = 0;
  const results = Worker.runReplayHistories(
    { workflowBundle: { codePath: workflowBundlePath } },
    histories.map(({ workflowId, json }) => ({ workflowId, history: historyFromJSON(json) })),
  );
  for await (const result of results) assert.equal(result.error, undefined, `${result.workflowId}: ${String(result.error)}`);
  return entries.filter((e) => e.meta?.event !== undefined);
}

describe('workflow log lines and replay', () => {
  const index = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as Record<string, string>;
  const load = (file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as HistoryJson;

  it('replaying every recorded history writes no event line', async () => {
    const files = readdirSync(dir).filter((f) => f.endsWith('.json') && f !== 'index.json');
    const events = await replay(files.map((file) => ({ workflowId: index[file]!, json: load(file) })));
    assert.deepEqual(events, []);
    // The control: the logger that saw none of them is the one the replaying worker wrote to.
    assert.ok(entries.some((e) => e.message === 'Worker state changed'));
  });
});
