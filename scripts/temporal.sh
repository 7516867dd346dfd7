#!/usr/bin/env bash
# Finds or builds the Temporal CLI (which carries the development server), in this order:
#   1. $TEMPORAL_CLI_PATH   2. `temporal` on PATH   3. the per-user tool cache
#   4. a build from source with Go (cached, so a second run costs nothing)
#   5. the official release download the Temporal SDK itself uses (only where the internet is reachable)
# Prints the binary's path on stdout and where it came from on stderr. Exit 3 when nothing works.
# Usage: scripts/temporal.sh [--print-path] [--quiet] [-- temporal args...]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
quiet=0
for arg in "$@"; do [ "$arg" = "--quiet" ] && quiet=1; done
# Notes on where the binary came from; build progress and errors always show.
found() { [ "$quiet" = 1 ] || say "$1"; }

# v1.5.1 is the newest release `go install` accepts: later ones carry a `replace` directive it refuses.
TEMPORAL_CLI_VERSION=v1.5.1
cache_dir="$REELFLOW_TOOL_CACHE/temporal-$TEMPORAL_CLI_VERSION"

works() { [ -x "$1" ] && "$1" --version >/dev/null 2>&1; }

find_temporal() {
  if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then
    works "$TEMPORAL_CLI_PATH" || die "TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH is not a working temporal binary" 3
    found "temporal: from TEMPORAL_CLI_PATH ($TEMPORAL_CLI_PATH)"; echo "$TEMPORAL_CLI_PATH"; return
  fi
  if command -v temporal >/dev/null 2>&1 && works "$(command -v temporal)"; then
    found "temporal: from PATH ($(command -v temporal))"; command -v temporal; return
  fi
  if works "$cache_dir/temporal"; then
    found "temporal: from the tool cache ($cache_dir/temporal)"; echo "$cache_dir/temporal"; return
  fi
  mkdir -p "$cache_dir" 2>/dev/null || die "cannot create the tool cache $cache_dir (set REELFLOW_TOOL_CACHE to a writable directory)" 3
  if command -v go >/dev/null 2>&1; then
    say "temporal: building the Temporal CLI $TEMPORAL_CLI_VERSION with Go (a few minutes, once; cached in $cache_dir)"
    # The same flags as go_install_tool (scripts/go.sh) builds the Temporal server with: the two share
    # most of their code, and Go's build cache reuses it only when the flags agree.
    if GOBIN="$cache_dir" GOFLAGS="-mod=mod -trimpath" CGO_ENABLED=0 go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >&2 \
        && works "$cache_dir/temporal"; then
      say "temporal: built with Go ($cache_dir/temporal)"; echo "$cache_dir/temporal"; return
    fi
    say "temporal: the Go build failed; trying the official download"
  fi
  local url="https://temporal.download/cli/archive/latest?platform=linux&arch=$(uname -m | sed 's/x86_64/amd64/;s/aarch64/arm64/')"
  if command -v curl >/dev/null 2>&1 && curl -fsSL --max-time 120 "$url" -o "$cache_dir/cli.tar.gz" 2>/dev/null \
      && tar -xzf "$cache_dir/cli.tar.gz" -C "$cache_dir" temporal && works "$cache_dir/temporal"; then
    rm -f "$cache_dir/cli.tar.gz"
    say "temporal: downloaded ($cache_dir/temporal)"; echo "$cache_dir/temporal"; return
  fi
  rm -f "$cache_dir/cli.tar.gz"
  die "cannot provide the Temporal CLI. Do one of these:
  1. install Go (https://go.dev/dl) and run this again: it builds the CLI once with
     go install github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION
  2. put a temporal binary on PATH, or point TEMPORAL_CLI_PATH at one
  3. skip the embedded server: set TEMPORAL_ADDRESS to a running Temporal service" 3
}

path=$(find_temporal)
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; exec "$path" "$@"; fi
  shift
done
echo "$path"
