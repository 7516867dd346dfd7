#!/usr/bin/env bash
# Provisions the second real S3-compatible server the S3 tests run against (beside MinIO, from
# scripts/s3-server.sh): Versity's S3 gateway (versitygw) with its POSIX backend, built from source
# with the Go toolchain from the Go module proxy into the per-user tool cache. A cold build takes
# about 3 minutes on 2 cores; a second run costs nothing. (SeaweedFS was the first choice: the Go
# module proxy answers 403 "not available" for github.com/seaweedfs/seaweedfs, at any version.)
#
#   scripts/versitygw.sh --print-path   print the binary path (build it first if missing)
#   scripts/versitygw.sh --build        build it if missing (progress on stderr)
#
# Exit codes: 0 ok, 2 usage, 3 cannot provision (no Go toolchain obtainable, build failed).
# Override the pinned version with REELFLOW_VERSITYGW_VERSION (a Go module version).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=go.sh
. "$here/go.sh"

# Its go.mod has no `replace` directive, so `go install module@version` works; it needs Go >= 1.25.
VERSITYGW_VERSION="${REELFLOW_VERSITYGW_VERSION:-v1.8.0}"
dest_dir="$REELFLOW_TOOL_CACHE/versitygw-$VERSITYGW_VERSION"
bin="$dest_dir/versitygw"

build() {
  go_install_tool versitygw github.com/versity/versitygw/cmd/versitygw "$VERSITYGW_VERSION" "$bin"
}

tool_main build "$bin" 12 "$@"
