#!/usr/bin/env bash
# Provisions new-api (github.com/QuantumNous/new-api), the Go gateway the gateway tests run
# reelflow against, built from the Go module proxy's source into the per-user tool cache, so a
# second run costs nothing.
#
#   scripts/new-api.sh --print-path   print the binary path (build it first if missing)
#   scripts/new-api.sh --build        build it if missing (progress on stderr)
#
# Exit codes: 0 ok, 2 usage, 3 cannot provision (no Go toolchain, download or build failed).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

# The tagged release whose shapes test/gateways/OBSERVED.md records (create answers {"task_id": ...}, the finished
# video's address in fail_reason).
NEW_API_MODULE=github.com/QuantumNous/new-api
NEW_API_VERSION=v0.10.0
dest_dir="$REELFLOW_TOOL_CACHE/new-api-$NEW_API_VERSION"
bin="$dest_dir/new-api"

build() {
  if [ -x "$bin" ]; then return 0; fi
  command -v go >/dev/null 2>&1 || die "cannot build new-api: no Go on PATH (install Go >= 1.25: https://go.dev/dl)" 3
  mkdir -p "$dest_dir"
  lock_tool "$dest_dir"
  if [ -x "$bin" ]; then return 0; fi
  say "building new-api $NEW_API_VERSION with $(go version | awk '{print $3}') into $dest_dir (a few minutes on a cold cache)..."
  local start=$SECONDS tmp src
  tmp="$(mktemp -d "$dest_dir/.build.XXXXXX")"
  # `go install module@version` cannot work: main.go embeds web/dist, the frontend's build output,
  # which the module does not carry. Build a writable copy of the module's source instead.
  src="$(GOFLAGS=-mod=mod go mod download -json "$NEW_API_MODULE@$NEW_API_VERSION" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  [ -n "$src" ] && [ -f "$src/main.go" ] || { rm -rf "$tmp"; die "cannot download $NEW_API_MODULE@$NEW_API_VERSION from the Go module proxy" 3; }
  cp -R "$src" "$tmp/src"
  chmod -R u+w "$tmp/src"
  # The tests need the API, not the web console: a placeholder page satisfies both embed lines.
  mkdir -p "$tmp/src/web/dist"
  printf '<!doctype html>\n<title>New API</title>\n<!--umami-->\n<!--Google Analytics-->\n<p>web console not built (reelflow test build)</p>\n' \
    > "$tmp/src/web/dist/index.html"
  # new-api listens on every interface (`server.Run(":" + port)`); the tests must listen on
  # loopback only, so the test build binds 127.0.0.1. Fail rather than build a binary that does not.
  sed -i 's|server.Run(":" + port)|server.Run("127.0.0.1:" + port)|' "$tmp/src/main.go"
  grep -q 'server.Run("127.0.0.1:" + port)' "$tmp/src/main.go" \
    || { rm -rf "$tmp"; die "cannot make new-api $NEW_API_VERSION listen on 127.0.0.1 only: main.go no longer has server.Run(\":\" + port)" 3; }
  if ! (cd "$tmp/src" && GOFLAGS=-mod=mod GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X '$NEW_API_MODULE/common.Version=$NEW_API_VERSION'" -o "$tmp/new-api" . \
      2> >(sed 's/^/reelflow: go: /' >&2)); then
    rm -rf "$tmp"
    die "cannot build new-api $NEW_API_VERSION (see above); is the Go module proxy reachable?" 3
  fi
  mv -f "$tmp/new-api" "$bin"
  rm -rf "$tmp"
  say "built $bin in $((SECONDS - start))s"
}

tool_main build "$bin" 9 "$@"
