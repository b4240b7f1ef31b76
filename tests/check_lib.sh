# Sourced by the tests/check-*.sh scripts that print one "[       OK ]" or
# "[  FAILED  ]" line per check (tests/run.sh counts them): $tmp, a work
# folder removed at exit; `failed`, 1 once a check has failed; and
#   check WHAT COMMAND...   runs COMMAND, prints WHAT as passed or failed.
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT
failed=0
check() {
    what=$1
    shift
    if "$@"; then echo "[       OK ] $what"; else echo "[  FAILED  ] $what"; failed=1; fi
}
