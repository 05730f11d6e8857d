#!/usr/bin/env bash
# bench/pipeline_load.sh - the executor's pipeline rows (bench_pipeline, pipeline_python.py)
# on a quiet machine and with one core busy: a busy loop pinned to the last CPU this shell may
# use, beside the bench (which may use every CPU). Builds alternate run by run, so that two
# builds (before / after a change) meet the same background. See bench/NOTES.md.
#
# Usage: bench/pipeline_load.sh RUNS BUILD_DIR...
#   prints: build<TAB>quiet|busy<TAB>run<TAB>row<TAB>pdext<TAB>baseline<TAB>ratio
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:?usage: pipeline_load.sh RUNS BUILD_DIR...}
shift
cpu=$(taskset -pc $$ | sed 's/.*: //; s/.*[,-]//')
pid=
# The busy loop must not outlive the script: a run cut short by a closed pipe once left its
# loop spinning on a core for half an hour, under every measurement after it.
stop_busy() { if [[ -n $pid ]]; then kill "$pid" 2>/dev/null || true; fi; }
trap stop_busy EXIT
trap 'exit 1' INT TERM PIPE
for run in $(seq 1 "$runs"); do
    for build in "$@"; do
        for load in quiet busy; do
            pid=
            if [[ $load == busy ]]; then
                taskset -c "$cpu" sh -c 'while :; do :; done' &
                pid=$!
            fi
            tag="$(basename "$build")\t$load\t$run\t"
            (cd "${TMPDIR:-/tmp}" && "$build/bench/bench_pipeline" 2>/dev/null) |
                grep '^ROW' | cut -f2,4,5,6 | sed "s/^/$tag/" || true
            if [[ -d $build/python/pdext ]]; then
                PYTHONPATH=$build/python PDEXT_CACHE_DIR=${TMPDIR:-/tmp}/pdext-load-$$ \
                    /usr/bin/python3 "$root/bench/pipeline_python.py" 2>/dev/null |
                    grep '^ROW' | cut -f2,4,5,6 | sed "s/^/$tag/" || true
            fi
            [[ -n $pid ]] && kill "$pid"
            pid=
        done
    done
done
rm -rf "${TMPDIR:-/tmp}/pdext-load-$$"
