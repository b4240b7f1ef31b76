#!/bin/sh
# make test-harness, part one: the Makefile's builds use every core unless
# the command line gives -j, and make test's runs are serial.
#  - make (all), started without -j, starts its build with -j$(nproc);
#  - with -j1 or -j3 on the command line, it adds no -j of its own (the
#    sub-make inherits the caller's);
#  - make test's run phase is a sub-make with TEST_RUNS_SERIAL=1, under
#    which the Makefile declares .NOTPARALLEL (and only then);
#  - make test's build phase builds every program of TEST_PROGRAMS (a rule's
#    prerequisites are expanded where it stands, before later variables);
#  - a kernel whose ptxas report shows spills fails its build every time:
#    its object is removed, not left for the next make to take as built
#    (an nvcc stand-in that writes the object and reports a spill).
# Each make here is asked with -n, starting afresh (no MAKEFLAGS of the
# make test that runs this).
# usage: check-make.sh MAKE
set -eu
make=$1
n=$(nproc)
fail() { echo "check-make: $*" >&2; exit 1; }
fresh() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL -u TEST_RUNS_SERIAL "$make" --no-print-directory "$@"; }

line=$(fresh -n all | grep -e '--no-print-directory.* lib$') || fail "make -n all starts no sub-make for lib"
case " $line " in *" -j$n "*) ;; *) fail "make without -j: want -j$n, got: $line" ;; esac
echo "[       OK ] make without -j builds with -j$n"
for j in -j1 -j3; do
    line=$(fresh -n $j all | grep -e '--no-print-directory.* lib$') || fail "make -n $j all starts no sub-make for lib"
    case " $line " in *" -j"*) fail "make $j: the sub-make must inherit $j, got: $line" ;; esac
    echo "[       OK ] make $j builds with the caller's $j"
done

db=$(fresh -pn test-headers 2>/dev/null) || fail "make -pn test-headers failed"
echo "$db" | grep -q -e '--no-print-directory.* TEST_RUNS_SERIAL=1 \$(TEST_RUNS)' \
    || fail "make test's recipe does not run TEST_RUNS in a sub-make with TEST_RUNS_SERIAL=1"
! echo "$db" | grep -q '^\.NOTPARALLEL:' || fail ".NOTPARALLEL without TEST_RUNS_SERIAL"
fresh -pn TEST_RUNS_SERIAL=1 test-headers 2>/dev/null | grep -q '^\.NOTPARALLEL:' \
    || fail "no .NOTPARALLEL under TEST_RUNS_SERIAL=1"
echo "[       OK ] make test runs TEST_RUNS one at a time"

want=$(fresh --eval='check-make-print: ; @echo $(TEST_PROGRAMS)' check-make-print | tr ' ' '\n' | sort)
got=$(echo "$db" | sed -n 's/^test-programs: //p' | tr ' ' '\n' | sort)
[ -n "$want" ] && [ "$got" = "$want" ] \
    || fail "test-programs builds: $(echo $got); TEST_PROGRAMS names: $(echo $want)"
echo "[       OK ] make test's build phase builds all of TEST_PROGRAMS"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/nvcc" <<'STANDIN'
#!/bin/sh
while [ $# -gt 0 ]; do [ "$1" = "-o" ] && out=$2; shift; done
echo object > "$out"
echo "ptxas info    : 8 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads" >&2
STANDIN
chmod +x "$tmp/nvcc"
obj=$tmp/build/obj/kernels/scale.o
for try in 1 2; do
    ! fresh BUILD="$tmp/build" NVCC="$tmp/nvcc" "$obj" > "$tmp/out" 2>&1 || fail "make $try: a spilling kernel built"
    grep -q "register spills in src/kernels/scale.cu" "$tmp/out" || fail "make $try: no spill message: $(cat "$tmp/out")"
    [ ! -e "$obj" ] || fail "make $try: the spilling kernel's object was left behind"
done
echo "[       OK ] a kernel that spills fails every make, its object removed"
