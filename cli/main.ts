// Entry point. `--verbose` must be known before the logger is created, so it is read first.
if (process.argv.includes('--verbose')) process.env.REELFLOW_VERBOSE = '1';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { main } = require('./program') as typeof import('./program');
void main(process.argv);
