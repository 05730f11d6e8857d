#!/usr/bin/env bash
# check.sh - runs the commands of README.md against an INSTALLED pdext and checks the results:
# `pdext bundle`, the CMake build with find_package(pdext), a run with no compiler on PATH
# and no cache directory, `nm` showing no op function exported, and the pkg-config build
# (fully static). Exits non-zero on the first difference.
#
#   examples/inference/check.sh PREFIX [WORK_DIR]
#
# PREFIX is where pdext is installed (e.g. /usr/local); WORK_DIR (default: a new temporary
# directory) receives the bundle and the binaries. Nothing is written inside the source tree.
set -euo pipefail

[ $# -ge 1 ] || { echo "usage: $0 PREFIX [WORK_DIR]" >&2; exit 2; }
PREFIX=$(cd "$1" && pwd)
WORK=${2:-$(mktemp -d)}
mkdir -p "$WORK"
WORK=$(cd "$WORK" && pwd)
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$PREFIX/bin:$PATH"
fail() { echo "inference check: $*" >&2; exit 1; }

EXPECTED="output.npy: float32 [4 x 3]
  0 0 2
  3.25 0 0.5
  0 0 2
  3.25 0 0.5"

cd "$HERE"
# 1. The bundle (README step 1).
pdext bundle -o "$WORK/libinferops.a" ../relu/relu.c ../concat/concat.c
for f in libinferops.a inferops.h inferops.pc; do
    [ -f "$WORK/$f" ] || fail "pdext bundle did not write $WORK/$f"
done

# 2. The program, with CMake and find_package(pdext) (README step 2).
cmake -S . -B "$WORK" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null
cmake --build "$WORK" >/dev/null

# 3. A run with no compiler on PATH and a fresh HOME without a cache (README step 3).
home=$(mktemp -d)
got=$(cd "$WORK" && env -i PATH=/nonexistent HOME="$home" ./infer "$HERE/input.npy" output.npy)
[ "$got" = "$EXPECTED" ] || fail "infer printed:
$got
expected:
$EXPECTED"
[ -z "$(ls -A "$home")" ] || fail "infer wrote into HOME: $(ls -A "$home")"
rm -rf "$home"

# 4. No op function is exported (README step 4).
if nm -g --defined-only "$WORK/infer" | grep -E 'relu|concat|pdext_module_info'; then
    fail "infer exports op functions (above)"
fi
if nm -D --defined-only "$WORK/infer" | grep -E 'relu|concat'; then
    fail "infer's dynamic symbol table has op functions (above)"
fi

# 5. The pkg-config flavour, fully static (README "Without CMake"), when a static libc exists.
if [ -e "$(cc -print-file-name=libc.a)" ]; then
    export PKG_CONFIG_PATH="$WORK:$(dirname "$(find "$PREFIX"/lib* -name pdext.pc -path '*/pkgconfig/*' | head -n 1)")"
    # shellcheck disable=SC2046
    cc -O2 -static infer.c $(pkg-config --static --cflags --libs inferops) -o "$WORK/infer-static" 2>/dev/null
    got=$(cd "$WORK" && env -i PATH=/nonexistent ./infer-static "$HERE/input.npy" output.npy)
    [ "$got" = "$EXPECTED" ] || fail "infer-static printed:
$got"
fi
echo "inference check: the example built against $PREFIX runs with no compiler and exports no op function: ok"
