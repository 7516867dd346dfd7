#!/usr/bin/env bash
# Provisions the first of the real S3-compatible servers the S3 tests run against: MinIO,
# built from source with the Go toolchain (only package registries are needed: the Go module
# proxy). The binary lands in the per-user tool cache, so a second run costs nothing. The second
# server is Versity's S3 gateway (scripts/versitygw.sh).
#
#   scripts/s3-server.sh --print-path   print the binary path (build it first if missing)
#   scripts/s3-server.sh --build        build it if missing (progress on stderr)
#
# Exit codes: 0 ok, 2 usage, 3 cannot provision (no Go toolchain obtainable, build failed).
# Override the pinned version with REELFLOW_MINIO_VERSION (a Go module version or pseudo-version).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"
# shellcheck source=go.sh
. "$here/go.sh"

# A pseudo-version of minio's master (MinIO publishes no semver tags); its go.mod has no
# `replace` directive, so `go install module@version` works.
MINIO_VERSION="${REELFLOW_MINIO_VERSION:-v0.0.0-20260212201848-7aac2a2c5b7c}"
dest_dir="$REELFLOW_TOOL_CACHE/minio-$MINIO_VERSION"
bin="$dest_dir/minio"

build() {
  go_install_tool "the S3 test server (MinIO)" github.com/minio/minio "$MINIO_VERSION" "$bin"
}

tool_main build "$bin" 11 "$@"
