#!/usr/bin/env bash
# tools/check-format.sh - checks that pdext's C, C++ and CUDA sources follow the house style
# written down in .clang-format, and with --fix rewrites them to it.
#
# Usage: tools/check-format.sh [--fix] [FILE...]
#   With no FILE: every .c .h .cc .cpp .hpp .cu .cuh file under sdk/, jit/, cli/, tests/,
#   examples/ and bench/ (templates/ holds text with placeholders, not C, and is left out).
#   --fix  rewrite the files in place (clang-format -i) instead of checking them.
# Environment: CLANG_FORMAT names the program (default clang-format); JOBS the parallel runs
# (default: nproc).
#
# Exit status: 0 when every file is formatted, 1 when some are not (each is listed, with the
# command that fixes it), 2 when clang-format is missing. The style was written for
# clang-format 14 (Debian 12); other versions may format a few constructs differently.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
clang_format=${CLANG_FORMAT:-clang-format}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}

fix=0
if [[ ${1:-} == --fix ]]; then
    fix=1
    shift
fi

if ! command -v "$clang_format" >/dev/null 2>&1; then
    echo "check-format: $clang_format not found (Debian package clang-format)" >&2
    exit 2
fi

files=()
if (($# > 0)); then
    files=("$@")
else
    while IFS= read -r -d '' f; do
        files+=("$f")
    done < <(find sdk jit cli tests examples bench -type f \
        \( -name '*.c' -o -name '*.h' -o -name '*.cc' -o -name '*.cpp' -o -name '*.hpp' \
        -o -name '*.cu' -o -name '*.cuh' \) -print0 | sort -z)
fi

if ((fix)); then
    printf '%s\0' "${files[@]}" | xargs -0 -P"$jobs" -n8 "$clang_format" -i --style=file
    echo "check-format: formatted ${#files[@]} files"
    exit 0
fi

# One clang-format per file; each prints "<places that differ> <file>" in one short write, so
# parallel runs cannot interleave their lines. --dry-run prints one "code should be
# clang-formatted" warning per place; any other message (an unreadable file, a .clang-format
# clang-format rejects) is an error of its own.
report=$(printf '%s\0' "${files[@]}" | CLANG_FORMAT=$clang_format xargs -0 -P"$jobs" -I{} sh -c '
    out=$("$CLANG_FORMAT" --style=file --dry-run "$1" 2>&1) || { printf "ERROR %s: %s\n" "$1" "$out"; exit 0; }
    n=$(printf "%s\n" "$out" | grep -c "code should be clang-formatted")
    if [ "$n" -gt 0 ]; then printf "%7d %s\n" "$n" "$1"; fi' sh {})
if printf '%s\n' "$report" | grep -q '^ERROR '; then
    printf '%s\n' "$report" | grep -A3 '^ERROR ' >&2
    exit 2
fi
bad=$(printf '%s\n' "$report" | sed '/^$/d' | sort -k2)
if [[ -n $bad ]]; then
    echo "check-format: these files do not follow .clang-format (places that differ, file):"
    printf '%s\n' "$bad"
    echo "check-format: see the changes with '$clang_format --style=file FILE | diff FILE -';"
    echo "              apply them with 'tools/check-format.sh --fix [FILE...]'"
    exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format ($("$clang_format" --version | head -n1))"
