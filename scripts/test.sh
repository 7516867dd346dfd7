#!/usr/bin/env bash
# The whole test suite, set-up included: dependencies, the Temporal CLI, ffmpeg, the workflow bundle,
# then unit, integration and end-to-end tests on Node's built-in test runner (through tsx).
# Usage: npm test [-- FILE_OR_DIR ...]   (default: everything under test/)
#        npm run test:chaos               (the full resilience suite)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
use_supported_node

bash scripts/setup.sh --for-tests-quick
export REELFLOW_TEMPORAL_CLI="$(bash scripts/temporal.sh --print-path)"
# The servers built from source (S3, the Temporal server, the gateways) build beside the first tests,
# at a lower priority; a file that needs one before it is ready waits for it (each script holds a
# lock while it builds), and those files run last. A warm tool cache makes this a no-op. A run of
# chosen files builds only what they need, when they need it.
mkdir -p test-output
if [ $# -eq 0 ]; then
  setsid nice -n 10 bash scripts/setup.sh --test-servers >test-output/test-servers.log 2>&1 &
  servers_pid=$!
  trap 'kill -- "-$servers_pid" 2>/dev/null || true' EXIT
fi

# --chaos: the full resilience suite alone (200 items, every fault); plain runs include a trimmed one.
if [ "${1:-}" = "--chaos" ]; then
  shift
  export REELFLOW_CHAOS_FULL=1
  set -- test/chaos "$@"
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(test)
mapfile -t found < <(find "${targets[@]}" -name '*.test.ts' | sort)
[ ${#found[@]} -gt 0 ] || die "no test files under: ${targets[*]}"
files=()
late=()
for file in "${found[@]}"; do
  if grep -qE "support/(s3-server|tls-temporal|gateways)'" "$file"; then late+=("$file"); else files+=("$file"); fi
done
files+=("${late[@]}")
# Files run one per core; each integration file starts what it needs (simulator, Temporal) itself.
# The spec reporter on stdout; each file's wall time, longest first, on stderr at the end.
node --import tsx --test --test-concurrency="${REELFLOW_TEST_CONCURRENCY:-2}" \
  --test-timeout="${REELFLOW_TEST_TIMEOUT_MS:-600000}" \
  --test-reporter=spec --test-reporter-destination=stdout \
  --test-reporter=./test/support/file-durations.mjs --test-reporter-destination=stderr "${files[@]}"
