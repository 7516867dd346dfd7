#!/usr/bin/env bash
# Everything a fresh clone needs, idempotent and quick when already done:
# npm dependencies, ffmpeg (real MP4s and poster frames), the Temporal CLI, the build.
# --for-tests adds what the test suite needs: Debian's Chromium and tmux, Temporal's Java test server,
# two real S3-compatible servers (MinIO, versitygw), the Temporal server for the TLS tests and the
# two real gateways (LiteLLM, new-api); --for-tests-quick the first three, --test-servers the rest.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
start=$(date +%s)

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  say "installing npm dependencies"
  npm ci --no-audit --no-fund --loglevel=error >&2
fi

if ! command -v ffmpeg >/dev/null 2>&1; then
  say "installing ffmpeg from Debian's packages (real MP4s, poster frames)"
  { as_root apt-get install -y -qq ffmpeg >/dev/null 2>&1 || { as_root apt-get update -qq >/dev/null 2>&1 && as_root apt-get install -y -qq ffmpeg >/dev/null 2>&1; }; } \
    || say "ffmpeg could not be installed: the simulator serves its shipped sample video and reports use placeholders"
fi

bash scripts/temporal.sh --print-path >/dev/null
bash scripts/build.sh

# The quick part of the tests' set-up: Debian packages and the Java test server, which most files need.
if [ "${1:-}" = "--for-tests" ] || [ "${1:-}" = "--for-tests-quick" ]; then
  bash scripts/browser.sh --print-path >/dev/null
  bash scripts/test-server.sh --print-path >/dev/null
  command -v tmux >/dev/null 2>&1 || { as_root apt-get install -y -qq tmux >/dev/null 2>&1 || { as_root apt-get update -qq >/dev/null 2>&1 && as_root apt-get install -y -qq tmux >/dev/null 2>&1; }; } || say "tmux could not be installed: the progress display's terminal test needs it"
fi
# The servers a few test files need, built from source (minutes each on a cold cache). `npm test`
# builds them beside the first tests (--for-tests-quick, then --test-servers in the background).
if [ "${1:-}" = "--for-tests" ] || [ "${1:-}" = "--test-servers" ]; then
  bash scripts/temporal-server.sh --print-path >/dev/null
  bash scripts/s3-server.sh --print-path >/dev/null
  bash scripts/versitygw.sh --print-path >/dev/null
  bash scripts/new-api.sh --print-path >/dev/null
  bash scripts/litellm.sh --print-path >/dev/null
fi
say "set-up done in $(( $(date +%s) - start )) s"
