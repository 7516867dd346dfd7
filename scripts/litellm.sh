#!/usr/bin/env bash
# Provisions the LiteLLM proxy for the gateway tests: PyPI's `litellm[proxy]` at a pinned version,
# in a Python virtual environment in the per-user tool cache, so a second run costs nothing.
#
#   scripts/litellm.sh --print-path   print the `litellm` executable (install it first if missing)
#   scripts/litellm.sh --build        install it if missing (progress on stderr)
#
# Exit codes: 0 ok, 2 usage, 3 cannot provision (no Python >= 3.10 with venv, pip install failed).
# Override the pinned version with REELFLOW_LITELLM_VERSION.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
. "$here/lib.sh"

# The 1.106 line is the one the gateway findings were made with (PyPI serves no 1.107: withdrawn,
# reported as a compromised release). 1.106.2 is its newest release that installs: 1.106.3 and
# later require certifi>=2026.10.19, which PyPI did not serve when this was pinned.
LITELLM_VERSION="${REELFLOW_LITELLM_VERSION:-1.106.2}"
dest_dir="$REELFLOW_TOOL_CACHE/litellm-$LITELLM_VERSION"
bin="$dest_dir/bin/litellm"
# Written last: a virtual environment cannot be moved into place once complete (its scripts name
# their own path), so an interrupted install is recognised by this file's absence.
done_marker="$dest_dir/.installed"

install() {
  if [ -f "$done_marker" ] && [ -x "$bin" ]; then return 0; fi
  python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))' 2>/dev/null \
    || die "cannot install LiteLLM: it needs python3 >= 3.10 on PATH, with its venv module" 3
  lock_tool "$dest_dir"
  if [ -f "$done_marker" ] && [ -x "$bin" ]; then return 0; fi
  rm -rf "$dest_dir"
  say "installing litellm[proxy]==$LITELLM_VERSION from PyPI into $dest_dir (a minute or two, once)..."
  local start=$SECONDS
  python3 -m venv "$dest_dir" >&2 \
    || { rm -rf "$dest_dir"; die "cannot create a Python virtual environment (python3 -m venv); install python3-venv" 3; }
  if ! "$dest_dir/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
      "litellm[proxy]==$LITELLM_VERSION" 2> >(sed 's/^/reelflow: pip: /' >&2) >&2; then
    rm -rf "$dest_dir"
    die "cannot install LiteLLM: 'pip install litellm[proxy]==$LITELLM_VERSION' failed (see above); is PyPI reachable?" 3
  fi
  [ -x "$bin" ] || { rm -rf "$dest_dir"; die "pip installed LiteLLM but $bin is missing" 3; }
  touch "$done_marker"
  say "installed $bin in $((SECONDS - start))s"
}

tool_main install "$bin" 9 "$@"
