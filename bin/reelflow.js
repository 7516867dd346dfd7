#!/usr/bin/env node
'use strict';
// The reelflow command. Runs the compiled build; `npm run build` (or `npm run setup`) makes it.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const main = join(__dirname, '..', 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write('reelflow: not built yet: run `npm run setup` in ' + join(__dirname, '..') + '\n');
  process.exit(2);
}
require(main);
