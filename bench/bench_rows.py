"""bench_rows.py - what the Python bench scripts share: the ROW line that bench/run.sh reads
(bench_util.h's format, one tab-separated line per row) and the timing loops.

Why one module: each figure is only worth its baseline from the same run, measured the same
way. Contenders are timed in turn, sample by sample, so that a burst of load on this shared
machine hits both alike, and the median of the samples is kept.
"""

import statistics
import time


def _num(v):
    return "null" if v is None else "%.6g" % v


def row(name, unit, ours, base, target, met, note, ratio=None):
    """Prints one row: pdext's figure, the baseline's, their ratio, the target and whether it
    was met. met: None (no target), a bool, or a function of the ratio. ratio: the row's
    ratio when it is not ours / base (the median of paired samples' ratios)."""
    if ratio is None:
        ratio = None if (ours is None or not base) else ours / base
    if callable(met):
        met = None if ratio is None else met(ratio)
    met = "null" if met is None else ("true" if met else "false")
    print("ROW\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t-\t%s"
          % (name, unit, _num(ours), _num(base), _num(ratio), target, met, note), flush=True)


def per_call(fn, n, *args, clock=time.perf_counter):
    """Seconds per call of fn(*args), over n calls in a row."""
    t0 = clock()
    for _ in range(n):
        fn(*args)
    return (clock() - t0) / n


def interleaved_medians(samplers, samples):
    """{key: sampler} where sampler() measures one sample; each sampler runs once per round,
    in turn, for `samples` rounds. Returns {key: median}."""
    got = {k: [] for k in samplers}
    for _ in range(samples):
        for k, sample in samplers.items():
            got[k].append(sample())
    return {k: statistics.median(v) for k, v in got.items()}


def per_call_synced(fn, n, sync):
    """Seconds per call of fn() over n calls, the clock stopped after sync(last result): for
    hosts that queue work (MindSpore's PyNative), so that the queued work is counted."""
    t0 = time.perf_counter()
    r = None
    for _ in range(n):
        r = fn()
    sync(r)
    return (time.perf_counter() - t0) / n
