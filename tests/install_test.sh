#!/usr/bin/env bash
# install_test.sh - checks an INSTALLED pdext the way its users meet it, with nothing from the
# source tree but the example sources:
#
#   1. the relu and concat example ops build with plain `cc -shared -fPIC -I<prefix>/include/pdext`
#      (no -lpdext) into modules that do not depend on libpdext;
#   2. examples/host/host.c builds with `cc host.c $(pkg-config --cflags --libs pdext)` against
#      libpdext.so, and with `cc -static ... $(pkg-config --static --cflags --libs pdext)`
#      against libpdext.a;
#   3. a CMake project (tests/cmake_consumer) finds the package with find_package(pdext),
#      links pdext::pdext and pdext::pdext_static, builds the example ops with
#      pdext_add_op_library and a static bundle with pdext_add_bundle;
#   4. the installed `pdext` command runs from the prefix and lists both modules' ops;
#   5. the inference example, word for word from its README;
#   6. the link line a bundle's header prints links a working program, as printed.
# Every host program built in 2 and 3 runs on both modules and must get the right numbers and
# error messages (host.c checks them and exits non-zero on any mismatch).
#
# Usage:
#   PREFIX=/usr/local tests/install_test.sh     check what `./setup.sh` installed there
#   tests/install_test.sh --stage BUILD_DIR DIR  first `cmake --install BUILD_DIR --prefix DIR`
#                                                (ctest uses this, from the build tree)
# Environment: CC (default cc), CMAKE_GENERATOR (default Ninja when ninja is present).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CC=${CC:-cc}

fail() {
    printf 'install_test: FAIL: %s\n' "$*" >&2
    exit 1
}
step() { printf '\n--- %s\n' "$*"; }

if [ "${1:-}" = --stage ]; then
    [ $# -eq 3 ] || fail "usage: $0 --stage BUILD_DIR PREFIX"
    PREFIX=$3
    rm -rf "$PREFIX"
    step "Staging an install of $2 in $PREFIX"
    cmake --install "$2" --prefix "$PREFIX" >/dev/null
else
    PREFIX=${PREFIX:-/usr/local}
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/pdext-install-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# `pdext bundle` builds through the JIT's cache: a private one, not the user's.
export PDEXT_CACHE_DIR=$WORK/cache

# --- what was installed ---------------------------------------------------------------------

INCLUDE_DIR=$PREFIX/include/pdext
[ -f "$INCLUDE_DIR/extension.h" ] || fail "$INCLUDE_DIR/extension.h is missing: is pdext installed in $PREFIX?"
[ -f "$INCLUDE_DIR/pdext.h" ] || fail "$INCLUDE_DIR/pdext.h is missing"
# The library directory is lib/ for most prefixes, lib/<multiarch> for /usr on Debian.
PC_FILE=$(find "$PREFIX"/lib* -maxdepth 3 -name pdext.pc -path '*/pkgconfig/*' 2>/dev/null | head -n 1)
[ -n "$PC_FILE" ] || fail "no pkgconfig/pdext.pc under $PREFIX/lib*"
LIBDIR=$(dirname "$(dirname "$PC_FILE")")
for f in libpdext.so libpdext.a cmake/pdext/pdextConfig.cmake cmake/pdext/pdextConfigVersion.cmake \
    cmake/pdext/pdextTargets.cmake; do
    [ -e "$LIBDIR/$f" ] || fail "$LIBDIR/$f is missing"
done
PKG_CONFIG_PATH=$(dirname "$PC_FILE")${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export PKG_CONFIG_PATH
# A wheel's .pc files name their prefix relative to themselves (${pcfiledir}/../..).
[ "$(realpath -m "$(pkg-config --variable=prefix pdext)")" = "$(realpath -m "$PREFIX")" ] ||
    fail "pdext.pc says prefix=$(pkg-config --variable=prefix pdext), installed in $PREFIX"
echo "installed: $PREFIX (pkg-config pdext $(pkg-config --modversion pdext), $PC_FILE)"

# needs_libpdext FILE: whether FILE's dynamic section names libpdext.
needs_libpdext() { readelf -d "$1" 2>/dev/null | grep -q 'NEEDED.*libpdext'; }

# --- 1. op modules, built the way an author builds them -----------------------------------------

step "Building the example ops with plain cc (no -lpdext)"
for op in relu concat; do
    src=$ROOT/examples/$op/$op.c
    [ -f "$src" ] || fail "$src is missing"
    (
        set -x
        "$CC" -O2 -shared -fPIC -I"$INCLUDE_DIR" "$src" -o "$WORK/$op.so"
    )
    ! needs_libpdext "$WORK/$op.so" || fail "$op.so links libpdext; op modules must not"
done

step "Building the Paddle-front relu with \$(pkg-config --cflags pdext) (paddle/extension.h)"
[ -f "$INCLUDE_DIR/paddle/extension.h" ] || fail "$INCLUDE_DIR/paddle/extension.h is missing"
(
    set -x
    "${CXX:-c++}" -std=c++17 -O2 -shared -fPIC $(pkg-config --cflags pdext) \
        "$ROOT/examples/paddle/custom_relu_op.cc" -o "$WORK/custom_relu_op.so"
)
! needs_libpdext "$WORK/custom_relu_op.so" || fail "custom_relu_op.so links libpdext; op modules must not"

# run_host NAME [RELU CONCAT]: runs the host program $WORK/NAME on both modules (default: the
# ones built with plain cc).
run_host() {
    echo "running $1 ${2:+on $2 $3}"
    "$WORK/$1" "${2:-$WORK/relu.so}" "${3:-$WORK/concat.so}" >"$WORK/$1.log" 2>&1 || {
        cat "$WORK/$1.log"
        fail "$1 reported failures (above)"
    }
    tail -n 1 "$WORK/$1.log"
}

# --- 2. host programs through pkg-config ----------------------------------------------------------

HOST_SRC=$ROOT/examples/host/host.c

step "Host against libpdext.so: cc host.c \$(pkg-config --cflags --libs pdext)"
(
    set -x
    # shellcheck disable=SC2046  # pkg-config's output is a list of flags
    "$CC" -O2 -Wall -Wextra -Werror "$HOST_SRC" -o "$WORK/host" $(pkg-config --cflags --libs pdext)
)
needs_libpdext "$WORK/host" || fail "host does not link libpdext.so"
run_host host

step "Host against libpdext.a: cc -static host.c \$(pkg-config --static --cflags --libs pdext)"
# glibc warns that a static program calling dlopen needs the same glibc's shared libraries at
# run time: true, and exactly what the modules use. Show the link output only on failure.
# shellcheck disable=SC2046
if ! "$CC" -static -O2 -Wall -Wextra -Werror "$HOST_SRC" -o "$WORK/host_static" \
    $(pkg-config --static --cflags --libs pdext) >"$WORK/static-link.log" 2>&1; then
    cat "$WORK/static-link.log"
    fail "static link of host.c failed"
fi
! needs_libpdext "$WORK/host_static" || fail "host_static still links libpdext.so"
run_host host_static

# --- 3. host programs through the CMake package ---------------------------------------------------

step "Host through find_package(pdext): pdext::pdext and pdext::pdext_static"
generator=()
if [ -z "${CMAKE_GENERATOR:-}" ] && command -v ninja >/dev/null 2>&1; then
    generator=(-G Ninja)
fi
cmake -S "$ROOT/tests/cmake_consumer" -B "$WORK/consumer" "${generator[@]}" \
    -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release -DPDEXT_HOST_SOURCE="$HOST_SRC" \
    >"$WORK/consumer-configure.log" 2>&1 || {
    cat "$WORK/consumer-configure.log"
    fail "configuring tests/cmake_consumer against $PREFIX failed"
}
grep -F "pdext $(pkg-config --modversion pdext) found in $LIBDIR/cmake/pdext" \
    "$WORK/consumer-configure.log" || {
    cat "$WORK/consumer-configure.log"
    fail "find_package(pdext) did not find the package installed in $PREFIX"
}
cmake --build "$WORK/consumer" >"$WORK/consumer-build.log" 2>&1 || {
    cat "$WORK/consumer-build.log"
    fail "building tests/cmake_consumer failed"
}
needs_libpdext "$WORK/consumer/host_shared" || fail "pdext::pdext did not link libpdext.so"
! needs_libpdext "$WORK/consumer/host_static" || fail "pdext::pdext_static linked libpdext.so"
run_host consumer/host_shared
run_host consumer/host_static
for op in relu concat; do
    ! needs_libpdext "$WORK/consumer/lib${op}_op.so" ||
        fail "pdext_add_op_library made lib${op}_op.so link libpdext; op modules must not"
done
run_host consumer/host_shared "$WORK/consumer/librelu_op.so" "$WORK/consumer/libconcat_op.so"

# check_infer PROGRAM: runs an inference program on examples/inference/input.npy.
INFER_EXPECTED="output.npy: float32 [4 x 3]
  0 0 2
  3.25 0 0.5
  0 0 2
  3.25 0 0.5"
check_infer() {
    local got
    got=$(cd "$WORK" && env -i PATH=/nonexistent "$1" "$ROOT/examples/inference/input.npy" output.npy) ||
        fail "$1 failed: $got"
    [ "$got" = "$INFER_EXPECTED" ] || fail "$1 printed:
$got
expected:
$INFER_EXPECTED"
    echo "$(basename "$1"): ok"
}
check_infer "$WORK/consumer/infer_bundle"
got=$(cd "$WORK" && env -i PATH=/nonexistent "$WORK/consumer/aot_bundle_host") ||
    fail "aot_bundle_host (a bundle with a MindSpore AOT function) failed: $got"
[ "$got" = "2.5 4.5 6.5 8.5" ] || fail "aot_bundle_host printed '$got', expected 2.5 4.5 6.5 8.5"
# An inference program: neither it nor anything it loads needs the JIT or zlib.
if command -v ldd >/dev/null 2>&1; then
    needs=$(ldd "$WORK/consumer/aot_bundle_host") || fail "ldd aot_bundle_host failed: $needs"
    case "$needs" in
    *libpdext_jit* | *libz.so*) fail "aot_bundle_host needs the JIT or zlib at run time:
$needs" ;;
    esac
fi
echo "aot_bundle_host: ok"

# --- 4. the installed command -----------------------------------------------------------------

step "The installed pdext command lists the modules"
PDEXT=$PREFIX/bin/pdext
[ -x "$PDEXT" ] || fail "$PDEXT is missing"
# It finds libpdext through its $ORIGIN-relative run path, whatever LD_LIBRARY_PATH says.
env -u LD_LIBRARY_PATH "$PDEXT" --version
for op in relu concat; do
    env -u LD_LIBRARY_PATH "$PDEXT" list "$WORK/$op.so" >"$WORK/list-$op.log" 2>&1 || {
        cat "$WORK/list-$op.log"
        fail "pdext list $op.so failed"
    }
    grep -q "^custom_${op}_grad" "$WORK/list-$op.log" || {
        cat "$WORK/list-$op.log"
        fail "pdext list $op.so does not show custom_${op}_grad"
    }
    head -n 1 "$WORK/list-$op.log"
done

# --- 5. the inference example (issue 4), word for word from its README ----------------------------

step "examples/inference: pdext bundle, find_package build, run with no compiler and no cache"
"$ROOT/examples/inference/check.sh" "$PREFIX" "$WORK/inference" >"$WORK/inference.log" 2>&1 || {
    cat "$WORK/inference.log"
    fail "examples/inference/check.sh against $PREFIX failed"
}
tail -n 1 "$WORK/inference.log"

# --- 6. a bundle's printed link line -------------------------------------------------------------

step "The link line in the bundle's header (pdext_add_bundle's inferops.h) works as printed"
BUNDLE_DIR=$WORK/consumer/pdext_bundle_inferops
# The two lines after "Build:" that start with "cc main.c", without the comment marks and the
# line continuation; <this dir> and main.c filled in as a user would.
line=$(sed -n '/^ \*     cc main.c/,/^ \*        \$(pkg-config/p' "$BUNDLE_DIR/inferops.h" |
    sed -e 's/^ \* *//' -e 's/ *\\$//' | tr '\n' ' ')
case $line in "cc main.c "*) ;; *) fail "no link line in $BUNDLE_DIR/inferops.h: '$line'" ;; esac
line=${line//<this dir>/$BUNDLE_DIR}
line=${line/main.c/$ROOT/examples/inference/infer.c}
echo "$line -o $WORK/infer_printed"
eval "$line -o '$WORK/infer_printed'" || fail "the printed link line failed: $line"
check_infer "$WORK/infer_printed"

echo
echo "install_test: the SDK installed in $PREFIX builds and runs hosts and op modules: ok"
