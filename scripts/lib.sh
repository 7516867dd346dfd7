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
