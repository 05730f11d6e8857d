/*
 * gpu_bench.c - figure 7, gpu_relu_bandwidth: custom_relu on a 64 MiB float32 GPU tensor
 * through the runner against a device-to-device cudaMemcpy of the same size, bytes read +
 * written per second. Target ratio >= 0.85.
 *
 * Only where a CUDA device exists: the CUDA runtime is reached with dlopen (as libpdext does),
 * so this program builds and runs everywhere; without libcudart or without a device the row
 * says "no device" and its met is null. The GPU kernel is the example's .cu source next to
 * relu.c, JIT-built with it.
 */
#include "bench_util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "gpu_relu_bandwidth"
#define TARGET "ratio >= 0.85"

typedef struct cuda {
    void *lib;
    int (*get_device_count)(int *);
    int (*malloc_)(void **, size_t);
    int (*free_)(void *);
    int (*memcpy_)(void *, const void *, size_t, int);
    int (*synchronize)(void);
} cuda;

enum { CUDA_MEMCPY_HOST_TO_DEVICE = 1, CUDA_MEMCPY_DEVICE_TO_DEVICE = 3 };

/* ISO C has no cast from an object pointer to a function pointer; POSIX guarantees the
 * representation is the same, so copy the bytes. */
static void load_symbol(void *lib, const char *name, void *fn_slot, size_t size)
{
    void *sym = dlsym(lib, name);
    memcpy(fn_slot, &sym, size);
}

static bool cuda_open(cuda *c)
{
    static const char *const names[] = {"libcudart.so", "libcudart.so.12", "libcudart.so.11.0",
                                        "/usr/local/cuda/lib64/libcudart.so"};
    memset(c, 0, sizeof *c);
    for (size_t i = 0; !c->lib && i < sizeof names / sizeof *names; ++i)
        c->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!c->lib)
        return false;
    load_symbol(c->lib, "cudaGetDeviceCount", &c->get_device_count, sizeof c->get_device_count);
    load_symbol(c->lib, "cudaMalloc", &c->malloc_, sizeof c->malloc_);
    load_symbol(c->lib, "cudaFree", &c->free_, sizeof c->free_);
    load_symbol(c->lib, "cudaMemcpy", &c->memcpy_, sizeof c->memcpy_);
    load_symbol(c->lib, "cudaDeviceSynchronize", &c->synchronize, sizeof c->synchronize);
    return c->get_device_count && c->malloc_ && c->free_ && c->memcpy_ && c->synchronize;
}

/* The example's CUDA source, if it has one. */
static const char *gpu_source(void)
{
    static const char *const candidates[] = {PDEXT_SOURCE_DIR "/examples/relu/relu.cu",
                                             PDEXT_SOURCE_DIR "/examples/relu/relu_gpu.cu",
                                             PDEXT_SOURCE_DIR "/examples/relu/relu_cuda.cu"};
    for (size_t i = 0; i < sizeof candidates / sizeof *candidates; ++i)
        if (access(candidates[i], R_OK) == 0)
            return candidates[i];
    return NULL;
}

static double seconds_of_call(cuda *c, const pd_op *op, pd_tensor *x)
{
    pd_arg in = pd_arg_of(x);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg oa = pd_arg_of(&out);
    c->synchronize();
    uint64_t t0 = bench_now_ns();
    pd_status st = pd_op_run(op, &in, 1, NULL, 0, &oa, 1);
    c->synchronize();
    pd_tensor_release(&out);
    uint64_t t1 = bench_now_ns();
    if (st != PD_OK) {
        bench_report_error("custom_relu on the GPU", st);
        return -1;
    }
    return (double)(t1 - t0) / 1e9;
}

static double seconds_of_memcpy(cuda *c, void *dst, const void *src, size_t bytes)
{
    c->synchronize();
    uint64_t t0 = bench_now_ns();
    int e = c->memcpy_(dst, src, bytes, CUDA_MEMCPY_DEVICE_TO_DEVICE);
    c->synchronize();
    return e ? -1 : (double)(bench_now_ns() - t0) / 1e9;
}

static int measure(cuda *c, pd_registry *reg)
{
    const int64_t n = bench_smoke ? 1024 : (int64_t)16 << 20;
    const size_t bytes = (size_t)n * sizeof(float);
    const int warmup = bench_smoke ? 1 : 3, samples = bench_smoke ? 1 : 21;
    const pd_op *op = pd_op_find(reg, "custom_relu");
    pd_tensor x = PD_TENSOR_UNDEFINED;
    void *a = NULL, *b = NULL;
    float *host = malloc(bytes);
    double *p = calloc(samples, sizeof *p), *q = calloc(samples, sizeof *q);
    int rc = 1, k = 0;
    if (!op || !host || !p || !q) {
        bench_emit_missing(NAME, "GB/s", TARGET, true, "no custom_relu");
        goto done;
    }
    if (pd_tensor_empty(&x, PD_FLOAT32, pd_place_gpu(0), 1, &n) != PD_OK) {
        bench_emit_missing(NAME, "GB/s", TARGET, true, pd_last_error());
        goto done;
    }
    bench_fill_random_signs(host, n);
    if (c->memcpy_(pd_data(&x), host, bytes, CUDA_MEMCPY_HOST_TO_DEVICE) || c->malloc_(&a, bytes) ||
        c->malloc_(&b, bytes) || c->memcpy_(a, pd_data(&x), bytes, CUDA_MEMCPY_DEVICE_TO_DEVICE)) {
        bench_emit_missing(NAME, "GB/s", TARGET, true, "CUDA allocation or copy failed");
        goto done;
    }
    for (int i = 0; i < warmup; ++i)
        if (seconds_of_call(c, op, &x) < 0 || seconds_of_memcpy(c, b, a, bytes) < 0)
            break;
    double moved = 2.0 * (double)bytes / 1e9;
    for (; k < samples; ++k) {
        double tp = seconds_of_call(c, op, &x), tb = seconds_of_memcpy(c, b, a, bytes);
        if (tp <= 0 || tb <= 0)
            break;
        p[k] = moved / tp;
        q[k] = moved / tb;
    }
    if (k == samples) {
        bench_row r = {NAME,
                       "GB/s",
                       bench_stats_of(p, k),
                       bench_stats_of(q, k),
                       true,
                       true,
                       TARGET,
                       BENCH_RATIO_AT_LEAST,
                       0.85,
                       "custom_relu on 64 MiB float32 on GPU 0 vs device-to-device cudaMemcpy"};
        bench_emit(&r);
        rc = 0;
    } else {
        bench_emit_missing(NAME, "GB/s", TARGET, true, "a GPU run failed (see stderr)");
    }
done:
    if (a)
        c->free_(a);
    if (b)
        c->free_(b);
    pd_tensor_release(&x);
    free(host);
    free(p);
    free(q);
    return rc;
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    cuda c;
    int count = 0;
    if (!cuda_open(&c) || c.get_device_count(&count) != 0 || count <= 0) {
        bench_emit_missing(NAME, "GB/s", TARGET, false, "no device");
    } else if (!gpu_source()) {
        bench_emit_missing(NAME, "GB/s", TARGET, true, "examples/relu has no .cu source");
    } else {
        pd_registry *reg = NULL;
        pd_module *mod = NULL;
        const char *src[] = {BENCH_RELU_SOURCE, gpu_source()};
        if (pd_registry_create(&reg) == PD_OK &&
            bench_jit_load(reg, "bench_relu_gpu", src, 2, NULL, &mod) == PD_OK)
            measure(&c, reg);
        else
            bench_emit_missing(NAME, "GB/s", TARGET, true, "JIT load of the GPU relu failed");
        pd_registry_destroy(reg);
    }
    if (c.lib)
        dlclose(c.lib);
    return bench_finish();
}
