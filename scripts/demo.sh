#!/usr/bin/env bash
# Quick start: renders jobs/demo.yaml end to end against the built-in gateway simulator with the
# embedded Temporal development server. Does every set-up step itself.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
use_supported_node
bash scripts/setup.sh
export GATEWAY_API_KEY="${GATEWAY_API_KEY:-sk-sim-local}"

sim_log=$(mktemp)
node bin/reelflow.js sim --port 8787 --port 8788 --render-time 3s..6s >"$sim_log" 2>&1 &
sim_pid=$!
trap 'kill $sim_pid 2>/dev/null || true; rm -f "$sim_log"' EXIT
for _ in $(seq 1 100); do
  [ "$(grep -c 'listening on' "$sim_log" || true)" -ge 2 ] && break
  kill -0 $sim_pid 2>/dev/null || die "the simulator did not start: $(cat "$sim_log")" 3
  sleep 0.1
done
say "simulator up on http://127.0.0.1:8787 and :8788"
node bin/reelflow.js run jobs/demo.yaml "$@"
