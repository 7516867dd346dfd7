# Shared helpers for the project's shell scripts (sourced, not run).
say() { printf 'reelflow: %s\n' "$*" >&2; }
# die MESSAGE [EXIT_STATUS]
die() { printf 'reelflow: %s\n' "$1" >&2; exit "${2:-1}"; }
# The per-user tool cache: survives fresh clones, so a second set-up costs nothing.
REELFLOW_TOOL_CACHE="${REELFLOW_TOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/reelflow/tools}"
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo -n "$@"; else return 1; fi; }

# Takes the lock that serialises provisioning one tool (parallel test runs, several engineers):
# `lock_tool DIR` locks DIR.lock for the rest of the script. Where flock is missing, runs unlocked.
lock_tool() {
  mkdir -p "$(dirname "$1")"
  exec 9>"$1.lock"
  if command -v flock >/dev/null 2>&1; then flock 9 || true; fi
}

# The command line of every provisioning script: `tool_main PROVISION_FN PATH USAGE_END "$@"` runs
# --print-path (provision, then print PATH), --build (provision) or --help (the script's header
# comment, lines 2 to USAGE_END); anything else is a usage error, exit 2.
tool_main() {
  local provision="$1" path="$2" usage="2,${3}p"
  shift 3
  case "${1:-}" in
    --print-path) "$provision"; printf '%s\n' "$path" ;;
    --build) "$provision" ;;
    -h|--help) sed -n "$usage" "$0" | sed 's/^# \{0,1\}//' ;;
    '') sed -n "$usage" "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    *) die "unknown option: $1 (use --print-path or --build)" 2 ;;
  esac
}

# Puts a supported Node.js (22 or 24) first on PATH when the `node` found there is older or
# missing, so `npm test` and `npm run demo` work on a machine whose Node is 20 (past its end of
# life: the worker's restart in place needs 22.15 or later). Node 24 comes from the npm registry
# through scripts/node.sh, cached in the tool cache. A supported Node already on PATH is kept.
use_supported_node() {
  local major
  major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
  [ "$major" -ge 22 ] && return 0
  local bin
  bin=$(bash "$(dirname "${BASH_SOURCE[0]}")/node.sh" --print-path) || die "no supported Node.js (22 or 24) and none could be fetched" 3
  say "node: $(node --version 2>/dev/null || echo 'none') on PATH is older than the supported lines (22, 24); using $("$bin" --version) from $bin"
  export PATH="$(dirname "$bin"):$PATH"
}
