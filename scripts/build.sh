#!/usr/bin/env bash
# Compiles TypeScript to dist/ and bundles the workflows once. Skipped when dist/ is newer than
# every source file.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
# One build at a time in this clone: two at once would share dist.new.
exec 8>.build.lock
if command -v flock >/dev/null 2>&1; then flock 8 || true; fi
stamp=dist/.build-stamp
sources=(domain jobfile gateway storage media activities workflows worker client cli sim package-lock.json tsconfig.json tsconfig.build.json)
if [ -f "$stamp" ] && [ -z "$(find "${sources[@]}" -newer "$stamp" -print -quit 2>/dev/null)" ]; then
  exit 0
fi
say "building (TypeScript to dist/, workflow bundle)"
# Build beside dist/ and swap it in at the end: a worker starting meanwhile never sees half a build.
rm -rf dist.new
npx tsc -p tsconfig.build.json --outDir dist.new
cp -r sim/assets dist.new/sim/ 2>/dev/null || true
npx tsx scripts/bundle-workflows.ts dist.new/workflow-bundle.js
touch dist.new/.build-stamp
rm -rf dist.old
[ -d dist ] && mv dist dist.old
mv dist.new dist
rm -rf dist.old
