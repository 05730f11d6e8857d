/*
 * copy_loop.c - the second bandwidth baseline: a plain read-write copy loop, built by the JIT
 * with its own default flags (bench_bandwidth loads it into the same module as the example
 * ops), so that the ops and this loop get the same code generation. It is not an op: the
 * benchmark finds the function with dlsym in the loaded module.
 *
 * GCC turns a copy loop into a call to memcpy (-ftree-loop-distribute-patterns, on at -O2 and
 * above); that would make this baseline memcpy again, so this one function is built without
 * that pattern replacement. The loop is still vectorized like the ops' loops.
 */
#include <stdint.h>

#if defined(__GNUC__) && !defined(__clang__)
#define PD_BENCH_NO_MEMCPY_IDIOM __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define PD_BENCH_NO_MEMCPY_IDIOM
#endif

__attribute__((visibility("default"))) PD_BENCH_NO_MEMCPY_IDIOM void
pd_bench_copy_floats(float *restrict dst, const float *restrict src, int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        dst[i] = src[i];
}
