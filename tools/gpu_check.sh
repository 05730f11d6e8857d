#!/usr/bin/env bash
# tools/gpu_check.sh - the checks that need a real GPU, in one short run on a machine that has
# one (CI has none: there these tests skip, saying why, and the simulated device runs the device
# paths). Builds a release tree with the CUDA plug-in and the Python front for this machine's
# python3, runs the CUDA ctest suites (when GoogleTest is there), the framework fronts' CUDA
# tests (torch, JAX, ONNX Runtime: each skips where its framework has no CUDA), the Python
# device tests on the real plug-in, and the GPU bench rows. Logs go to $OUT (default
# /tmp/pdext-gpu-check); the exit status is that of the first failing step.
#
# Usage: tools/gpu_check.sh [BUILD_DIR]
set -u
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-/tmp/pdext-gpu-build}
out=${OUT:-/tmp/pdext-gpu-check}
mkdir -p "$out"
status=0
step() { # step NAME COMMAND...: runs it, its output in $out/NAME.log, and says how it went
    local name=$1 t0=$SECONDS rc=0
    shift
    "$@" >"$out/$name.log" 2>&1 || rc=$?
    printf '%-14s rc=%d  %3ds  %s\n' "$name" "$rc" "$((SECONDS - t0))" \
        "$(grep -E 'passed|failed|tests passed|skipped|ROW' "$out/$name.log" | tail -n 3 | tr '\n' ' ' | cut -c1-300)"
    ((rc == 0 || status != 0)) || status=$rc
    return "$rc"
}

nvidia-smi -L 2>&1 | head -n 2
py=$(command -v python3)
tests=ON
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPDEXT_BUILD_TESTS=ON \
    -DPDEXT_BUILD_BENCH=ON -DPython3_EXECUTABLE="$py" >"$out/cmake.log" 2>&1 || {
    tests=OFF # no GoogleTest here: the product, the Python front and the bench only
    cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPDEXT_BUILD_TESTS=OFF \
        -DPDEXT_BUILD_BENCH=ON -DPython3_EXECUTABLE="$py" >"$out/cmake.log" 2>&1 || {
        tail -n 30 "$out/cmake.log"
        exit 1
    }
}
targets=(pdext_cmd pdext_python bench_gpu)
[[ $tests == ON ]] && targets+=(device_cuda_test jit_cuda_test aot_cuda_test py_gpu_ops)
step build cmake --build "$build" --target "${targets[@]}" -- -j"$(nproc)" || exit 1

if [[ $tests == ON ]]; then
    step ctest_cuda ctest --test-dir "$build" -R '^(DeviceCuda|JitCuda|AotCuda)' \
        --output-on-failure -j4
fi
export PYTHONPATH=$build/python PDEXT_CACHE_DIR=$out/cache PDEXT_COMMAND=$build/cli/pdext
export PDEXT_BUILD_DIR=$build PDEXT_FRAMEWORKS=none
cd "$root/tests/python" || exit 1
pytest_file() { # pytest_file NAME FILE [-k EXPR]
    local name=$1
    shift
    step "$name" "$py" -m pytest -q -rs -p no:cacheprovider "$@"
}
pytest_file torch_cuda test_torch_library.py -k cuda
pytest_file jax_cuda test_jax.py -k cuda
pytest_file ort_cuda test_onnxruntime_cuda.py
step gpu_bench "$build/bench/bench_gpu"
exit "$status"
