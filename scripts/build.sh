#!/usr/bin/env bash
# Compiles TypeScript to dist/ and bundles the workflows once. Skipped when dist/ is newer than
# every source file.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
stamp=dist/.build-stamp
sources=(jobfile gateway storage activities workflows worker cli sim package-lock.json tsconfig.json tsconfig.build.json)
if [ -f "$stamp" ] && [ -z "$(find "${sources[@]}" -newer "$stamp" -print -quit 2>/dev/null)" ]; then
  exit 0
fi
say "building (TypeScript to dist/, workflow bundle)"
rm -rf dist
npx tsc -p tsconfig.build.json
cp -r sim/assets dist/sim/ 2>/dev/null || true
npx tsx scripts/bundle-workflows.ts
touch "$stamp"
