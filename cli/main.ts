// Entry point. `--verbose` must be known before the logger is created, so it is read first and
// the program (which creates the logger through its imports) is loaded after.
import type { main as Main } from './program';
import { commandRunsAWorker, restartWithMemoryBounds } from './worker-heap';

if (process.argv.includes('--verbose')) process.env.REELFLOW_VERBOSE = '1';
// A process that runs a worker starts again with its memory bounded (cli/worker-heap.ts): here,
// before anything else is loaded, so the first start costs almost nothing.
if (commandRunsAWorker(process.argv)) restartWithMemoryBounds();

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { main } = require('./program') as { main: typeof Main };
void main(process.argv);
