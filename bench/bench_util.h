/*
 * bench_util.h - what every benchmark program shares: a clock, medians and spreads, the
 * result row format that bench/run.sh turns into the table and results.json, child processes
 * (timed commands, the program itself re-run in a "child mode" for new-process figures), a
 * private JIT cache, and JIT loading of the two example ops.
 *
 * A benchmark program measures pdext and its baseline in the same run, interleaving their
 * repetitions where it can so that a burst of load on this shared machine hits both alike,
 * and prints one row per figure on stdout (everything else goes to stderr):
 *
 *     ROW \t name \t unit \t pdext \t baseline \t ratio \t target \t met \t noisy \t note
 *
 * Numbers are printed with %.6g, or "null" when there is none; met is "true", "false" or
 * "null" (not applicable, e.g. no GPU); noisy is "noisy" or "-".
 *
 * `--smoke` (bench_smoke) asks for tiny sizes and one iteration: the test suite runs every
 * program that way so that the benchmarks keep building and running; no time is asserted.
 */
#ifndef PDEXT_BENCH_UTIL_H
#define PDEXT_BENCH_UTIL_H

#include "pdext.h"
#include "pdext_jit.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Set by bench_init from `--smoke`. */
extern bool bench_smoke;

/* Monotonic clock in nanoseconds. */
uint64_t bench_now_ns(void);
/* CPU time of the calling thread in nanoseconds (user + system, page faults included). The
 * single-threaded figures use it: on a shared machine it leaves out the time the thread
 * waited for a core, which says nothing about pdext or the baseline. */
uint64_t bench_cpu_ns(void);
/* Wall ns of one call of a one-input, one-output op on x through pd_op_run, its output
 * released; -1 (the error reported on stderr, naming the op) when the call fails. */
double bench_op_once_ns(const pd_op *op, pd_tensor *x);

/* Median and the 10th / 90th percentiles of a sample. */
typedef struct bench_stats {
    double median, p10, p90;
    int n;
} bench_stats;

/* Statistics of v[0..n-1] (sorted in place). n == 0 gives all zeros. */
bench_stats bench_stats_of(double *v, int n);
/* (p90 - p10) / median: how wide the sample is relative to its middle. */
double bench_spread(bench_stats s);
/* A spread above this marks a figure "noisy" in the table. */
#define BENCH_NOISY_SPREAD 0.20

/* Keeps the compiler from proving a value or a buffer unused (benchmark loops). */
static inline void bench_escape(const void *p) { __asm__ volatile("" : : "r"(p) : "memory"); }

/* How a row's "met" is judged. */
typedef enum bench_goal {
    BENCH_RATIO_AT_LEAST, /* ratio >= limit */
    BENCH_RATIO_AT_MOST,  /* ratio <= limit */
    BENCH_VALUE_AT_MOST,  /* pdext <= limit (absolute) */
    BENCH_ADDED_AT_MOST,  /* pdext - baseline <= limit */
    BENCH_NOT_APPLICABLE  /* met is null */
} bench_goal;

/* One figure. `ratio` is pdext / baseline. `target` is the human text of the goal ("<= 100 ns
 * added", ">= 0.85"); `note` (may be NULL) says anything else the reader needs. The figure is
 * noisy when either sample's spread exceeds BENCH_NOISY_SPREAD. */
typedef struct bench_row {
    const char *name;
    const char *unit;
    bench_stats pdext, baseline;
    bool have_pdext, have_baseline;
    const char *target;
    bench_goal goal;
    double limit;
    const char *note;
} bench_row;

/* Prints the ROW line (see the file comment). */
void bench_emit(const bench_row *row);
/* bench_emit with the row's ratio given: the median of the ratios of pdext's and the
 * baseline's samples taken as pairs (pairs[0..n-1], each pdext / baseline in the row's unit;
 * sorted in place). A pair shares the moment's background, so the ratio is not moved by load
 * that changed between pairs, as a ratio of two medians is: on this shared box the same
 * code on both sides of pipeline_chain_small read 0.88-1.14 as a ratio of medians of nine
 * 2 ms samples, 0.98-1.02 as the median of 41 pairs' ratios (bench/NOTES.md). */
void bench_emit_paired(const bench_row *row, double *pairs, int n);
/* A row for a figure that could not be measured: values null, met false (or null when
 * `applicable` is false), the reason as note. An applicable one makes bench_finish fail. */
void bench_emit_missing(const char *name, const char *unit, const char *target, bool applicable,
                        const char *reason);

/* Parses `--smoke`; unless this is a child run (`--child...` as first argument) makes a
 * private JIT cache directory and points PDEXT_CACHE_DIR at it for this process and its
 * children. Returns the index of the first argument it did not consume. */
int bench_init(int argc, char **argv);
/* Removes the private cache (if bench_init made it). Returns main's exit status: 1 if any
 * applicable figure could not be measured (bench_emit_missing), else 0. */
int bench_finish(void);
/* The private cache directory (PDEXT_CACHE_DIR). */
const char *bench_cache_dir(void);
/* A new empty directory under the cache directory (malloc'd path; NULL on failure). */
char *bench_make_dir(const char *prefix);
/* rm -rf path (best effort). */
void bench_remove_tree(const char *path);

/* Runs argv[0] (a path, or a name looked up in PATH) with stdout and stderr sent to
 * /dev/null, unless `capture` is given: then stdout is read into it (NUL-terminated, at most
 * cap-1 bytes) and stderr passes through (children report their errors there). Returns the
 * wall time from spawn to reaped exit in ns, or -1 if it could not start or exited non-zero. */
double bench_spawn(char *const argv[], char *capture, size_t cap);
/* User + system CPU time of the last bench_spawn's process and all its descendants (ns). */
extern double bench_spawn_cpu_ns;
/* This program's own path (/proc/self/exe), for re-running it in a child mode. */
const char *bench_self(void);

/* Examples shipped with the SDK, by absolute path. */
#define BENCH_RELU_SOURCE PDEXT_SOURCE_DIR "/examples/relu/relu.c"
#define BENCH_CONCAT_SOURCE PDEXT_SOURCE_DIR "/examples/concat/concat.c"
#define BENCH_SDK_INCLUDE PDEXT_SOURCE_DIR "/sdk/include"

/* pd_jit_load of `sources` as module `name` with the JIT's default flags into `reg`
 * (build_dir NULL: the cache). On failure prints the error to stderr. */
pd_status bench_jit_load(pd_registry *reg, const char *name, const char *const *sources,
                         int32_t n_sources, const char *build_dir, pd_module **out);

/* Prints "what: <pd_last_error()>" to stderr and returns status (for `return bench_fail(...)`). */
pd_status bench_report_error(const char *what, pd_status status);

/* Size in bytes of the last-level data cache of CPU 0: the largest `size` among
 * /sys/devices/system/cpu/cpu0/cache/index<N>/ entries of type Data or Unified at the highest
 * level; else sysconf(_SC_LEVEL3_CACHE_SIZE), _SC_LEVEL2_CACHE_SIZE; else 32 MiB. `from` (may
 * be NULL) gets where the figure came from ("sysfs L3", "sysconf L2", "assumed"). */
size_t bench_llc_bytes(const char **from);
/* Bytes per buffer for a bandwidth figure that must stream from memory: 4x the last-level
 * cache, at least 64 MiB, rounded up to a MiB (64 KiB in smoke mode). */
size_t bench_stream_bytes(void);

/* Writes `text` to <cache dir>/<file_name> (an op source generated by a benchmark, so that the
 * JIT builds it with its own flags). Returns the malloc'd path, NULL on failure (reported). */
char *bench_write_source(const char *file_name, const char *text);

/* Fills a float32 buffer with values of random sign and magnitude in [0.5, 1.5)
 * (fixed seed, so that every run sees the same data). */
void bench_fill_random_signs(float *x, int64_t n);

#endif /* PDEXT_BENCH_UTIL_H */
