#!/usr/bin/env bash
# tools/check-tidy.sh - runs clang-tidy with the checks in .clang-tidy over pdext's product
# code (the C and C++ sources under sdk/src, jit and cli), every warning an error.
#
# Usage: tools/check-tidy.sh [BUILD_DIR] [FILE...]
#   BUILD_DIR  a configured build of this tree (default: build); its compile_commands.json
#              gives each file's flags. A build configured without it is re-configured with
#              -DCMAKE_EXPORT_COMPILE_COMMANDS=ON (setup.sh configures with it).
#   FILE...    only these files (default: every product source the build compiles; sources
#              the build does not compile, such as CUDA code without nvcc, are left out).
# Environment: CLANG_TIDY names the program (default clang-tidy); JOBS the parallel runs
# (default: nproc).
#
# Exit status: 0 when clang-tidy reports nothing, 1 when it reports something, 2 when
# clang-tidy or the build is missing.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
clang_tidy=${CLANG_TIDY:-clang-tidy}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
build=${1:-build}
shift || true
case $build in /*) ;; *) build=$root/$build ;; esac

if ! command -v "$clang_tidy" >/dev/null 2>&1; then
    echo "check-tidy: $clang_tidy not found (Debian package clang-tidy)" >&2
    exit 2
fi
db=$build/compile_commands.json
if [[ ! -f $db ]]; then
    if [[ ! -f $build/CMakeCache.txt ]]; then
        echo "check-tidy: $build is not a configured build; run cmake -S . -B $build first" >&2
        exit 2
    fi
    cmake -S "$root" -B "$build" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
fi

files=()
if (($# > 0)); then
    files=("$@")
else
    while IFS= read -r -d '' f; do
        # CMake writes one `"file": "<absolute path>"` line per compile.
        grep -qF "\"file\": \"$root/$f\"" "$db" && files+=("$f")
    done < <(find sdk/src jit cli -type f \( -name '*.c' -o -name '*.cc' \) -print0 | sort -z)
fi
if ((${#files[@]} == 0)); then
    echo "check-tidy: no product sources in $db" >&2
    exit 2
fi

# Four files per clang-tidy run amortises its start-up; -P spreads the runs over the cores.
# Flags GCC knows and clang does not must not become findings.
out=$(printf '%s\0' "${files[@]}" |
    xargs -0 -P"$jobs" -n4 "$clang_tidy" -p "$build" --quiet \
        --extra-arg=-Wno-unknown-warning-option 2>/dev/null) && rc=0 || rc=$?
if [[ -n $out ]] || ((rc != 0)); then
    printf '%s\n' "$out"
    echo "check-tidy: clang-tidy reported the above in ${#files[@]} files (checks: .clang-tidy)" >&2
    exit 1
fi
echo "check-tidy: ${#files[@]} files clean ($("$clang_tidy" --version | sed -n 's/.*version \([0-9.]*\).*/clang-tidy \1/p' | head -n1))"
