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
  if [ -x "$bin" ]; then return 0; fi
  ensure_go || die "cannot build the S3 test server: no Go toolchain on PATH and none could be fetched from the Go module proxy (install golang >= 1.24)" 3
  mkdir -p "$dest_dir"
  lock_tool "$dest_dir"
  if [ -x "$bin" ]; then return 0; fi
  say "building MinIO $MINIO_VERSION with $(go version | awk '{print $3}') into $dest_dir (several minutes on a cold cache)..."
  local tmp
  tmp="$(mktemp -d "$dest_dir/.build.XXXXXX")"
  local start=$SECONDS
  if ! GOBIN="$tmp" GOFLAGS="${GOFLAGS:-} -trimpath" GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" CGO_ENABLED=0 \
      go install -v "github.com/minio/minio@$MINIO_VERSION" 2> >(sed 's/^/reelflow: go: /' >&2); then
    rm -rf "$tmp"
    die "cannot build the S3 test server: 'go install github.com/minio/minio@$MINIO_VERSION' failed (see above); is the Go module proxy reachable?" 3
  fi
  mv -f "$tmp/minio" "$bin"
  rm -rf "$tmp"
  say "built $bin in $((SECONDS - start))s"
}

tool_main build "$bin" 11 "$@"
