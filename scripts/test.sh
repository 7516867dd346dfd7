#!/usr/bin/env bash
# The whole test suite, set-up included: dependencies, the Temporal CLI, ffmpeg, the workflow bundle,
# then unit, integration and end-to-end tests on Node's built-in test runner (through tsx).
# Usage: npm test [-- FILE_OR_DIR ...]   (default: everything under test/)
#        npm run test:chaos               (the full resilience suite)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
use_supported_node

bash scripts/setup.sh --for-tests
export REELFLOW_TEMPORAL_CLI="$(bash scripts/temporal.sh --print-path)"

# --chaos: the full resilience suite alone (200 items, every fault); plain runs include a trimmed one.
if [ "${1:-}" = "--chaos" ]; then
  shift
  export REELFLOW_CHAOS_FULL=1
  set -- test/chaos "$@"
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(test)
mapfile -t files < <(find "${targets[@]}" -name '*.test.ts' | sort)
[ ${#files[@]} -gt 0 ] || die "no test files under: ${targets[*]}"

mkdir -p test-output
# Files run one per core; each integration file starts what it needs (simulator, Temporal) itself.
# The spec reporter on stdout; each file's wall time, longest first, on stderr at the end.
exec node --import tsx --test --test-concurrency="${REELFLOW_TEST_CONCURRENCY:-2}" \
  --test-timeout="${REELFLOW_TEST_TIMEOUT_MS:-600000}" \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=./test/support/file-durations.mjs --test-reporter-destination=stderr "${files[@]}"
