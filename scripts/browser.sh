#!/usr/bin/env bash
# Ensures Debian's Chromium is installed for the real-browser tests; never downloads a browser
# build of its own (playwright's download is unreachable here and not what users run).
# Usage: bash scripts/browser.sh [--print-path]
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

CHROMIUM=/usr/bin/chromium
case "${1:-}" in
  --print-path | "") ;;
  *) say "usage: scripts/browser.sh [--print-path]"; exit 2 ;;
esac

if [ ! -x "$CHROMIUM" ]; then
  say "installing Debian's chromium (apt-get)"
  export DEBIAN_FRONTEND=noninteractive
  # A fresh machine may have no package lists yet; retry after an update.
  as_root apt-get install -y --no-install-recommends chromium >&2 \
    || { as_root apt-get update >&2 && as_root apt-get install -y --no-install-recommends chromium >&2; } \
    || { say "could not install chromium: run as root or with passwordless sudo (apt-get install chromium)"; exit 3; }
  [ -x "$CHROMIUM" ] || { say "chromium installed but $CHROMIUM is missing"; exit 3; }
fi

if [ "${1:-}" = --print-path ]; then
  printf '%s\n' "$CHROMIUM"
else
  say "chromium ready: $("$CHROMIUM" --version 2>/dev/null || echo "$CHROMIUM")"
fi
