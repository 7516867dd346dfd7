# Shared helpers for the project's shell scripts (sourced, not run).
say() { printf 'reelflow: %s\n' "$*" >&2; }
# die MESSAGE [EXIT_STATUS]
die() { printf 'reelflow: %s\n' "$1" >&2; exit "${2:-1}"; }
# The per-user tool cache: survives fresh clones, so a second set-up costs nothing.
REELFLOW_TOOL_CACHE="${REELFLOW_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reelflow/tools}"
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi; }
