// Entry point. `--verbose` must be known before the logger is created, so it is read first and
// the program (which creates the logger through its imports) is loaded after.
import type { main as Main } from './program';

if (process.argv.includes('--verbose')) process.env.REELFLOW_VERBOSE = '1';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { main } = require('./program') as { main: typeof Main };
void main(process.argv);
