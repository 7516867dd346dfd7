# Makes a Go toolchain available to the scripts that build test servers from source (sourced after
# lib.sh, not run). With no Go on PATH, fetches the official toolchain, which the Go module proxy
# serves as the module golang.org/toolchain, into the tool cache (a second run reuses it). A Go on
# PATH that is older than a module needs fetches the newer one itself (GOTOOLCHAIN=auto).
#
#   ensure_go   returns non-zero when no toolchain is on PATH and none could be fetched
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
