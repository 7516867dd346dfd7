# Makes a Go toolchain available to the scripts that build test servers from source, and builds them
# (sourced after lib.sh, not run). With no Go on PATH, fetches the official toolchain, which the Go module proxy
# serves as the module golang.org/toolchain, into the tool cache (a second run reuses it). A Go on
# PATH that is older than a module needs fetches the newer one itself (GOTOOLCHAIN=auto).
#
#   ensure_go         returns non-zero when no toolchain is on PATH and none could be fetched
#   go_install_tool   builds one tool into the tool cache (below)
GO_TOOLCHAIN_VERSION="${REELFLOW_GO_TOOLCHAIN:-1.25.8}"
ensure_go() {
  command -v go >/dev/null 2>&1 && return 0
  local arch os goroot proxy url tmp
  case "$(uname -m)" in x86_64|amd64) arch=amd64 ;; aarch64|arm64) arch=arm64 ;; *) return 1 ;; esac
  os="$(uname -s | tr '[:upper:]' '[:lower:]')"
  goroot="$REELFLOW_TOOL_CACHE/go-$GO_TOOLCHAIN_VERSION.$os-$arch"
  if [ ! -x "$goroot/bin/go" ]; then
    command -v curl >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 || return 1
    mkdir -p "$REELFLOW_TOOL_CACHE"
    lock_tool "$goroot"
    if [ ! -x "$goroot/bin/go" ]; then
      proxy="${GOPROXY:-https://proxy.golang.org}"; proxy="${proxy%%,*}"
      case "$proxy" in direct|off) proxy=https://proxy.golang.org ;; esac
      url="$proxy/golang.org/toolchain/@v/v0.0.1-go$GO_TOOLCHAIN_VERSION.$os-$arch.zip"
      say "no Go on PATH: fetching the Go $GO_TOOLCHAIN_VERSION toolchain from the module proxy..."
      tmp="$(mktemp -d "$REELFLOW_TOOL_CACHE/.go.XXXXXX")"
      curl -fsSL "$url" -o "$tmp/go.zip" && python3 -m zipfile -e "$tmp/go.zip" "$tmp/x" || { rm -rf "$tmp"; return 1; }
      chmod +x "$tmp/x/golang.org/toolchain@v0.0.1-go$GO_TOOLCHAIN_VERSION.$os-$arch/bin/"* \
        "$tmp/x/golang.org/toolchain@v0.0.1-go$GO_TOOLCHAIN_VERSION.$os-$arch/pkg/tool/"*/* 2>/dev/null || true
      rm -rf "$goroot"
      mv "$tmp/x/golang.org/toolchain@v0.0.1-go$GO_TOOLCHAIN_VERSION.$os-$arch" "$goroot"
      rm -rf "$tmp"
    fi
  fi
  export PATH="$goroot/bin:$PATH" GOTOOLCHAIN=local
}

# go_install_tool WHAT PACKAGE VERSION BIN [GOFLAGS]: builds PACKAGE@VERSION with `go install`
# (static, CGO off) into BIN, whose folder is the tool's entry in the tool cache: once, under the
# tool's lock, through a temporary folder so that BIN is never half written. Exit 3 if it cannot.
go_install_tool() {
  local what="$1" package="$2" version="$3" bin="$4" flags="${5:-}"
  [ -x "$bin" ] && return 0
  ensure_go || die "cannot build $what: no Go toolchain on PATH and none could be fetched from the Go module proxy" 3
  local dir tmp start=$SECONDS
  dir="$(dirname "$bin")"
  mkdir -p "$dir"
  lock_tool "$dir"
  [ -x "$bin" ] && return 0
  say "building $what $version with $(go version | awk '{print $3}') into $dir (minutes on a cold cache)..."
  tmp="$(mktemp -d "$dir/.build.XXXXXX")"
  if ! GOBIN="$tmp" GOFLAGS="${GOFLAGS:-} -trimpath $flags" GOTOOLCHAIN="${GOTOOLCHAIN:-auto}" CGO_ENABLED=0 \
      go install "$package@$version" 2> >(sed 's/^/reelflow: go: /' >&2); then
    rm -rf "$tmp"
    die "cannot build $what: 'go install $package@$version' failed (see above); is the Go module proxy reachable?" 3
  fi
  mv -f "$tmp/$(basename "$package")" "$bin"
  rm -rf "$tmp"
  say "built $bin in $((SECONDS - start))s"
}
