#!/usr/bin/env bash
# The benchmarks (figures in BENCHMARKS.md): every one prints human lines, then as its last line one JSON figure.
# Usage: npm run bench                 all of them, in the order below
#        npm run bench -- NAME [ARGS]  one of them, ARGS passed on (e.g. npm run bench -- memory --items 2000)
# Each output is kept in test-output/bench/NAME.txt; the run ends with a table of the last lines.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

all=(sim storage plan-s3 validate cli-startup download reference-memory client-overhead key-route review-paint makespan chains throughput polls memory failover)
if [ $# -gt 0 ]; then
  name="$1"; shift
  [ -f "bench/$name.ts" ] || die "no benchmark named $name (have: ${all[*]})" 2
  names=("$name")
else
  names=("${all[@]}")
fi

# The worker under test is the built command (bin/reelflow.js), as users run it, on Node 24 (the line
# CI runs the whole suite on; the machine's own node may be older than the package supports).
bash scripts/build.sh >&2
node24="$(REELFLOW_NODE_VERSION=24 bash scripts/node.sh --print-path)"
PATH="$(dirname "$node24"):$PATH"
REELFLOW_TEMPORAL_CLI="$(bash scripts/temporal.sh --print-path)"
export REELFLOW_TEMPORAL_CLI
mkdir -p test-output/bench
say "machine: node $(node --version), $(nproc) cores, $(free -m | awk '/^Mem:/ {print $2 " MiB memory"}'), load $(cut -d' ' -f1-3 /proc/loadavg)"

failed=()
for n in "${names[@]}"; do
  say "bench $n ($(date -u +%H:%M:%S), load $(cut -d' ' -f1-3 /proc/loadavg))"
  start=$(date +%s)
  if node --import tsx "bench/$n.ts" "$@" 2>&1 | tee "test-output/bench/$n.txt"; then
    say "bench $n: done in $(( $(date +%s) - start )) s"
  else
    failed+=("$n")
    say "bench $n: FAILED after $(( $(date +%s) - start )) s"
  fi
done

say "figures (last line of each; full output in test-output/bench/):"
for n in "${names[@]}"; do
  printf '%-16s %s\n' "$n" "$(grep '^{' "test-output/bench/$n.txt" | tail -n 1 || true)" >&2
done
[ ${#failed[@]} -eq 0 ] || die "failed: ${failed[*]}"
