#!/usr/bin/env bash
# bench/run.sh - runs every pdext benchmark of a release build, prints one table row per
# figure (pdext's median, the baseline's median, the ratio, the target, met or not, and
# "noisy" where the spread is large), and writes the same rows to bench/results.json with a
# description of the machine.
#
# Usage: bench/run.sh [BUILD_DIR]
#   BUILD_DIR  a build of this tree (default: $PDEXT_BENCH_BUILD_DIR, else <repo>/build-bench).
#              If it has not been configured yet, it is configured as a release build (-O2, no
#              sanitizers, -DPDEXT_BUILD_BENCH=ON); it is then brought up to date with ninja.
# Environment: PDEXT_BENCH_RESULTS moves results.json; PDEXT_BENCH_ONLY="op_call threads"
# runs only those programs (a framework's name: its rows, e.g. "onnxruntime jax"); PDEXT_BENCH_SMOKE=1
# runs each in its smoke mode (tiny sizes, one iteration: checks the plumbing, the figures mean
# nothing); PDEXT_BENCH_NO_BUILD=1 uses the programs as they are; PDEXT_BENCH_FRAMEWORK_PYTHON
# (a python with the frameworks: torch, jax, onnxruntime + onnx, paddle, mindspore) runs the
# framework rows; TMPDIR is where the benchmarks keep their private JIT caches.
#
# Each program (build/bench/bench_<area>) prints "ROW<TAB>..." lines on stdout, one per figure
# (format in bench/bench_util.h), and its progress and spreads on stderr.
#
# jit_cold (rows jit_cold_build, jit_cold_build_same_flags, jit_cold_build_user_O2) alternates
# five cold builds per repetition (pdext with its default flags, `cc -O2`, `cc` with the JIT's
# flags, pdext with user flag -O2, `cc` with the JIT's flags then -O2); its notes give the CPU
# time of each process tree, the steadier figure on a shared machine, and split each pdext
# figure into the compiler's own work at the flags it gets (the JIT's vectorizing defaults
# cost more than -O2) and the tool's overhead (bench/README.md).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-${PDEXT_BENCH_BUILD_DIR:-$root/build-bench}}
results=${PDEXT_BENCH_RESULTS:-$root/bench/results.json}
programs=${PDEXT_BENCH_ONLY:-"op_call jit_warm jit_cold bandwidth memory threads parallel strided gpu aot device paddle_front check pipeline python"}
# A framework's name in PDEXT_BENCH_ONLY names its rows (a script, not a program); with no
# PDEXT_BENCH_ONLY, every framework's rows run.
framework_rows=""
for name in onnxruntime jax torch paddle mindspore ms_extension; do
    if [[ -z ${PDEXT_BENCH_ONLY:-} || " $programs " == *" $name "* ]]; then
        framework_rows+=" $name"
    fi
    programs=$(echo " $programs " | sed "s/ $name / /g")
done
jobs=${PDEXT_BENCH_JOBS:-2}

smoke=()
[[ ${PDEXT_BENCH_SMOKE:-0} == 1 ]] && smoke=(--smoke)

if [[ ${PDEXT_BENCH_NO_BUILD:-0} == 1 ]]; then
    :
elif [[ ! -f $build/build.ninja ]]; then
    echo "bench: configuring a release build in $build" >&2
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_C_FLAGS_RELEASE="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" \
        -DPDEXT_SANITIZE=OFF -DPDEXT_BUILD_BENCH=ON >&2
fi
if [[ ${PDEXT_BENCH_NO_BUILD:-0} != 1 ]]; then
    targets=()
    for p in $programs; do targets+=("bench_$p"); done
    [[ -n ${PDEXT_BENCH_FRAMEWORK_PYTHON:-} ]] && targets+=(pdext_cmd pdext_python) # framework rows
    cmake --build "$build" --target "${targets[@]}" -- -j"$jobs" >&2
fi

cache_value() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt" 2>/dev/null | head -n1; }
build_type=$(cache_value CMAKE_BUILD_TYPE)
sanitize=$(cache_value PDEXT_SANITIZE)
if [[ $build_type != Release ]]; then
    echo "bench: WARNING: $build is a '$build_type' build, not Release: figures are not representative" >&2
fi
if [[ $sanitize == ON ]]; then
    echo "bench: WARNING: $build is built with sanitizers: figures are not representative" >&2
fi

rows=$(mktemp)
trap 'rm -f "$rows"' EXIT
status=0
count_rows() { grep -c '^ROW' "$rows" || true; }
for p in $programs; do
    echo "bench: running bench_$p" >&2
    before=$(count_rows)
    rc=0
    "$build/bench/bench_$p" "${smoke[@]}" >>"$rows" || rc=$?
    if (( rc != 0 )); then
        status=1
        # A program that died without reporting (or mid-way: a signal) still gets a row, so
        # that nothing is silently left out of the table.
        if (( rc > 1 )) || [[ $(count_rows) == "$before" ]]; then
            printf 'ROW\tbench_%s\t-\tnull\tnull\tnull\t-\tfalse\t-\texited with status %d\n' \
                "$p" "$rc" >>"$rows"
        fi
    fi
done

# The Python front's pipeline rows (bench/pipeline_python.py), where the front is built (not
# in a sanitizer build: its extension imports only with libasan preloaded, as its tests do).
if [[ " $programs " == *" pipeline "* && -d $build/python/pdext && $sanitize == ON ]]; then
    echo "bench: pipeline_python.py skipped: $build's Python extension is built with" \
        "sanitizers (it imports only with libasan preloaded)" >&2
elif [[ " $programs " == *" pipeline "* && -d $build/python/pdext ]]; then
    echo "bench: running pipeline_python.py" >&2
    PYTHONPATH=$build/python PDEXT_CACHE_DIR=${TMPDIR:-/tmp}/pdext-bench-python-$$ \
        /usr/bin/python3 "$root/bench/pipeline_python.py" "${smoke[@]}" >>"$rows" || status=1
    rm -rf "${TMPDIR:-/tmp}/pdext-bench-python-$$"
fi

# The framework rows: one script per framework (pdext's front beside the framework's own op),
# run by a Python that has the framework (PDEXT_BENCH_FRAMEWORK_PYTHON, e.g. the framework
# venv's python, which ./setup.sh bench passes). pdext comes from this build's python/ when its
# extension imports under that Python (the build was made for it), else from that Python's own
# install; the ONNX Runtime rows build their library with this build's pdext command. Rows whose
# framework or pdext is missing are skipped, saying so.
declare -A fw_script=([onnxruntime]=onnxruntime_bench.py [jax]=jax_bench.py
    [torch]=torch_bench.py [paddle]=paddle_bench.py [mindspore]=mindspore_bench.py
    [ms_extension]=ms_extension_python.py)
declare -A fw_import=([onnxruntime]="onnx, onnxruntime" [jax]=jax [torch]=torch
    [paddle]=paddle [mindspore]=mindspore [ms_extension]="mindspore, pybind11")
run_framework_rows() {
    local name=$1 script=$root/bench/${fw_script[$1]} py=${PDEXT_BENCH_FRAMEWORK_PYTHON:-}
    local path="" cache=${TMPDIR:-/tmp}/pdext-bench-$1-$$
    [[ -f $script ]] || return 0
    if [[ -z $py ]] || ! "$py" -c "import ${fw_import[$name]}" >/dev/null 2>&1; then
        echo "bench: $name rows skipped: set PDEXT_BENCH_FRAMEWORK_PYTHON to a python with" \
            "${fw_import[$name]}" >&2
        return 0
    fi
    if PYTHONPATH=$build/python "$py" -c 'import pdext' >/dev/null 2>&1; then
        path=$build/python
    elif ! "$py" -c 'import pdext' >/dev/null 2>&1; then
        echo "bench: $name rows skipped: $py imports neither this build's pdext nor its own" >&2
        return 0
    fi
    # Outside smoke mode the CustomOpBuilder rows also time a cold build with both builders.
    local extra=()
    [[ $name == ms_extension && ${PDEXT_BENCH_SMOKE:-0} != 1 ]] && extra=(--cold)
    echo "bench: running ${fw_script[$name]}" >&2
    PYTHONPATH=$path PDEXT_COMMAND=$build/cli/pdext PDEXT_CACHE_DIR=$cache \
        "$py" "$script" "${smoke[@]}" "${extra[@]}" >>"$rows" || status=1
    rm -rf "$cache"
}
for name in $framework_rows; do
    run_framework_rows "$name"
done

# --- The machine --------------------------------------------------------------------------
first_line() { "$@" 2>/dev/null | head -n1 || true; }
cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo | head -n1)
cores=$(nproc 2>/dev/null || echo 0)
cc_version=$(first_line "${CC:-cc}" --version)
cxx_version=$(first_line "${CXX:-c++}" --version)
ninja_version=$(first_line ninja --version)
nvcc_version=$(nvcc --version 2>/dev/null | tail -n1 || true)
kernel=$(uname -sr)
loadavg=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || true)
when=$(date -u +%Y-%m-%dT%H:%M:%SZ)

mkdir -p "$(dirname "$results")"
awk -F'\t' -v results="$results" -v cpu="$cpu" -v cores="$cores" -v cc="$cc_version" \
    -v cxx="$cxx_version" -v ninja="$ninja_version" -v nvcc="$nvcc_version" -v kernel="$kernel" \
    -v loadavg="$loadavg" -v when="$when" -v build_type="$build_type" '
function esc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
function num(s) { return s == "null" ? "-" : sprintf("%.4g", s) }
function jnum(s) { return s == "null" ? "null" : s }
function jmet(s) { return (s == "true" || s == "false") ? s : "null" }
function yes(s) { return s == "true" ? "yes" : s == "false" ? "no" : "n/a" }
$1 == "ROW" {
    n++; name[n] = $2; unit[n] = $3; pd[n] = $4; base[n] = $5; ratio[n] = $6
    target[n] = $7; met[n] = $8; noisy[n] = $9; note[n] = $10
}
END {
    fmt = "%-33s %-8s %11s %11s %8s  %-17s %-4s %s\n"
    printf fmt, "figure", "unit", "pdext", "baseline", "ratio", "target", "met", "noisy"
    line = sprintf(fmt, "", "", "", "", "", "", "", ""); gsub(/./, "-", line)
    print substr(line, 1, 104)
    for (i = 1; i <= n; i++)
        printf fmt, name[i], unit[i], num(pd[i]), num(base[i]), num(ratio[i]), target[i],
               yes(met[i]), noisy[i] == "noisy" ? "noisy" : ""
    print ""
    for (i = 1; i <= n; i++)
        if (note[i] != "") printf "  %s: %s\n", name[i], note[i]
    printf "\nmachine: %s, %s cores, load %s; %s\n", cpu, cores, loadavg, cc

    printf "{\n  \"machine\": {\n" > results
    printf "    \"cpu\": \"%s\",\n    \"cores\": %d,\n", esc(cpu), cores > results
    printf "    \"kernel\": \"%s\",\n    \"loadavg\": \"%s\",\n", esc(kernel), esc(loadavg) > results
    printf "    \"c_compiler\": \"%s\",\n    \"cxx_compiler\": \"%s\",\n", esc(cc), esc(cxx) > results
    printf "    \"ninja\": \"%s\",\n    \"nvcc\": \"%s\",\n", esc(ninja), esc(nvcc) > results
    printf "    \"build_type\": \"%s\",\n    \"date\": \"%s\"\n  },\n", esc(build_type), when > results
    printf "  \"results\": [\n" > results
    for (i = 1; i <= n; i++)
        printf "    {\"name\": \"%s\", \"unit\": \"%s\", \"pdext\": %s, \"baseline\": %s, " \
               "\"ratio\": %s, \"target\": \"%s\", \"met\": %s}%s\n", esc(name[i]), esc(unit[i]),
               jnum(pd[i]), jnum(base[i]), jnum(ratio[i]), esc(target[i]), jmet(met[i]),
               i < n ? "," : "" > results
    printf "  ]\n}\n" > results
}' "$rows"
echo "bench: wrote $results" >&2
exit $status
