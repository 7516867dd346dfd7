#!/usr/bin/env bash
# Provisions the Temporal server itself (not the CLI's development server) for the TLS tests: the
# CLI's `server start-dev` has no TLS option, so test/e2e/tls.test.ts runs the real server with a
# configuration of its own (TLS, API keys, another namespace). Built with Go from the Go module
# proxy into the per-user tool cache: about 6 minutes on 2 cores cold, nothing on a second run.
#
#   scripts/temporal-server.sh --print-path   print the binary path (build it first if missing)
#   scripts/temporal-server.sh --build        build it if missing (progress on stderr)
#
# Exit codes: 0 ok, 2 usage, 3 cannot provision (no Go toolchain obtainable, build failed).
# Override the pinned version with REELFLOW_TEMPORAL_SERVER_VERSION (the server the CLI embeds).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=go.sh
. "$here/go.sh"

TEMPORAL_SERVER_VERSION="${REELFLOW_TEMPORAL_SERVER_VERSION:-v1.29.1}"
dest_dir="$REELFLOW_TOOL_CACHE/temporal-server-$TEMPORAL_SERVER_VERSION"
bin="$dest_dir/temporal-server"

build() {
  go_install_tool "the Temporal server" go.temporal.io/server/cmd/server "$TEMPORAL_SERVER_VERSION" "$bin" -mod=mod
}

tool_main build "$bin" 12 "$@"
