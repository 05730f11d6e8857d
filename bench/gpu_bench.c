/*
 * gpu_bench.c - the GPU rows, each against a same-run CUDA baseline:
 *   - gpu_relu_bandwidth: custom_relu on a 256 MiB float32 GPU tensor through the runner
 *     against a device-to-device cudaMemcpy of the same size, bytes read + written per
 *     second. Target ratio >= 0.85.
 *   - gpu_relu_call_overhead: a 1-element GPU custom_relu through pd_op_run against a raw
 *     launch of the same kernel on the same stream (the example's launcher, called directly),
 *     microseconds per call, both as back-to-back calls with one synchronize at the end.
 *     Target: at most 5 us added.
 *   - gpu_pinned_h2d / gpu_pinned_d2h: pd_tensor_copy_to between a 64 MiB GPU-pinned tensor
 *     and GPU memory (the result's memory from the device cache) against cudaMemcpy between
 *     the same pinned buffer and a cudaMalloc'd one. Target ratio >= 0.85.
 *
 * Only where a CUDA device exists: the CUDA runtime is reached with dlopen (as libpdext does),
 * so this program builds and runs everywhere; without libcudart or without a device the rows
 * say "no device" and their met is null. The GPU kernel is the example's relu_cuda.cu,
 * JIT-built with relu.c; the raw launch comes from a second module that includes the same
 * .cu and exports a C wrapper around its launcher.
 */
#include "bench_util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NAME "gpu_relu_bandwidth"
#define TARGET "ratio >= 0.85"
#define NAME_CALL "gpu_relu_call_overhead"
#define TARGET_CALL "<= 5 us added"
#define NAME_H2D "gpu_pinned_h2d"
#define NAME_D2H "gpu_pinned_d2h"

typedef struct cuda {
    void *lib;
    int (*get_device_count)(int *);
    int (*malloc_)(void **, size_t);
    int (*free_)(void *);
    int (*memcpy_)(void *, const void *, size_t, int);
    int (*synchronize)(void);
} cuda;

enum {
    CUDA_MEMCPY_HOST_TO_DEVICE = 1,
    CUDA_MEMCPY_DEVICE_TO_HOST = 2,
    CUDA_MEMCPY_DEVICE_TO_DEVICE = 3
};

/* The example's launcher, exported by the raw-launch module (see raw_launcher). */
typedef const char *(*raw_relu_fn)(pd_data_type dtype, const void *x, void *out, int64_t n,
                                   void *stream);

/* ISO C has no cast from an object pointer to a function pointer; POSIX guarantees the
 * representation is the same, so copy the bytes. */
static void load_symbol(void *lib, const char *name, void *fn_slot, size_t size)
{
    void *sym = dlsym(lib, name);
    memcpy(fn_slot, &sym, size);
}

static bool cuda_open(cuda *c)
{
    static const char *const names[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                        "libcudart.so.11.0", "/usr/local/cuda/lib64/libcudart.so"};
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
    const int64_t n = bench_smoke ? 1024 : (int64_t)64 << 20;
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
                       "custom_relu on 256 MiB float32 on GPU 0 vs device-to-device cudaMemcpy"};
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

/* The raw launch: a module whose .cu includes the example's relu_cuda.cu and exports a C
 * wrapper of its launcher (the module also defines an op, as every module must). */
static raw_relu_fn raw_launcher(pd_registry *reg)
{
    char text[1024];
    snprintf(text, sizeof text,
             "#include \"extension.h\"\n"
             "#include \"%s\"\n"
             "extern \"C\" __attribute__((visibility(\"default\"))) const char *\n"
             "bench_raw_relu(pd_data_type t, const void *x, void *o, int64_t n, void *s)\n"
             "{ return relu_cuda_forward(t, x, o, n, s); }\n"
             "static void bench_raw_noop(pd_kernel_ctx *ctx) { (void)ctx; }\n"
             "PD_BUILD_OP(bench_raw_noop, .inputs = {\"X\"}, .outputs = {\"Out\"},\n"
             "            .kernel = bench_raw_noop);\n",
             gpu_source());
    char *path = bench_write_source("bench_raw_relu.cu", text);
    pd_module *mod = NULL;
    const char *src[] = {path};
    raw_relu_fn fn = NULL;
    if (path && bench_jit_load(reg, "bench_raw_relu", src, 1, NULL, &mod) == PD_OK) {
        void *lib = dlopen(pd_module_path(mod), RTLD_NOW | RTLD_NOLOAD);
        if (lib) {
            load_symbol(lib, "bench_raw_relu", &fn, sizeof fn);
            dlclose(lib); /* the module keeps it loaded */
        }
    }
    free(path);
    return fn;
}

/* Seconds per call of `calls` back-to-back 1-element relus, through the runner (raw NULL)
 * or the raw launcher, with one synchronize at the end. */
static double seconds_per_call(cuda *c, const pd_op *op, raw_relu_fn raw, pd_tensor *x,
                               pd_tensor *out, void *stream, int calls)
{
    pd_arg in = pd_arg_of(x);
    c->synchronize();
    uint64_t t0 = bench_now_ns();
    for (int i = 0; i < calls; ++i) {
        if (raw) {
            if (raw(PD_FLOAT32, pd_data(x), pd_data(out), 1, stream) != NULL)
                return -1;
        } else {
            pd_tensor o = PD_TENSOR_UNDEFINED;
            pd_arg oa = pd_arg_of(&o);
            if (pd_op_run(op, &in, 1, NULL, 0, &oa, 1) != PD_OK)
                return bench_report_error("custom_relu on the GPU", PD_ERR_OP_FAILED), -1;
            pd_tensor_release(&o);
        }
    }
    c->synchronize();
    return (double)(bench_now_ns() - t0) / 1e9 / calls;
}

static void measure_call(cuda *c, pd_registry *reg, pd_registry *raw_reg)
{
    const int calls = bench_smoke ? 10 : 2000, samples = bench_smoke ? 1 : 11;
    const int64_t one = 1;
    const pd_op *op = pd_op_find(reg, "custom_relu");
    raw_relu_fn raw = raw_launcher(raw_reg);
    pd_tensor x = PD_TENSOR_UNDEFINED, out = PD_TENSOR_UNDEFINED;
    pd_stream_t *stream = pd_stream_current(pd_place_gpu(0)); /* where op calls run */
    double p[16], q[16];
    int k = 0;
    if (!op || !raw || !stream ||
        pd_tensor_full(&x, PD_FLOAT32, pd_place_gpu(0), 1, &one, -1.0) != PD_OK ||
        pd_tensor_empty(&out, PD_FLOAT32, pd_place_gpu(0), 1, &one) != PD_OK) {
        bench_emit_missing(NAME_CALL, "us", TARGET_CALL, true,
                           "the raw launcher or the GPU tensors could not be made");
    } else {
        void *handle = pd_stream_handle(stream);
        seconds_per_call(c, op, NULL, &x, &out, handle, calls); /* warm: cache, module */
        seconds_per_call(c, op, raw, &x, &out, handle, calls);
        for (; k < samples; ++k) {
            double tp = seconds_per_call(c, op, NULL, &x, &out, handle, calls);
            double tb = seconds_per_call(c, op, raw, &x, &out, handle, calls);
            if (tp <= 0 || tb <= 0)
                break;
            p[k] = tp * 1e6;
            q[k] = tb * 1e6;
        }
        if (k == samples) {
            bench_row r = {NAME_CALL,
                           "us",
                           bench_stats_of(p, k),
                           bench_stats_of(q, k),
                           true,
                           true,
                           TARGET_CALL,
                           BENCH_ADDED_AT_MOST,
                           5.0,
                           "1-element float32 custom_relu through pd_op_run (output from the "
                           "device cache) vs its launcher called directly, same stream"};
            bench_emit(&r);
        } else {
            bench_emit_missing(NAME_CALL, "us", TARGET_CALL, true, "a GPU run failed (see stderr)");
        }
    }
    pd_tensor_release(&out);
    pd_tensor_release(&x);
}

/* Seconds of one pinned <-> GPU copy: copy_to (pdext) or cudaMemcpy (baseline). */
static double seconds_of_pinned_copy(cuda *c, bool to_device, bool baseline, pd_tensor *pinned,
                                     pd_tensor *gpu, void *dev, size_t bytes)
{
    c->synchronize();
    uint64_t t0 = bench_now_ns();
    if (baseline) {
        int e = to_device ? c->memcpy_(dev, pd_data(pinned), bytes, CUDA_MEMCPY_HOST_TO_DEVICE)
                          : c->memcpy_(pd_data(pinned), dev, bytes, CUDA_MEMCPY_DEVICE_TO_HOST);
        if (e)
            return -1;
    } else {
        pd_tensor t = PD_TENSOR_UNDEFINED;
        pd_status st = to_device ? pd_tensor_copy_to(&t, pinned, pd_place_gpu(0))
                                 : pd_tensor_copy_to(&t, gpu, pd_place_gpu_pinned());
        if (st != PD_OK)
            return bench_report_error("copy_to", st), -1;
        pd_tensor_release(&t); /* back to its cache: the next copy reuses it */
    }
    c->synchronize();
    return (double)(bench_now_ns() - t0) / 1e9;
}

static void measure_pinned(cuda *c)
{
    const int64_t n = bench_smoke ? 1024 : (int64_t)16 << 20; /* 64 MiB of float32 */
    const size_t bytes = (size_t)n * sizeof(float);
    const int samples = bench_smoke ? 1 : 21;
    pd_tensor pinned = PD_TENSOR_UNDEFINED, gpu = PD_TENSOR_UNDEFINED;
    void *dev = NULL;
    bool ok = pd_tensor_full(&pinned, PD_FLOAT32, pd_place_gpu_pinned(), 1, &n, 1.0) == PD_OK &&
              pd_tensor_copy_to(&gpu, &pinned, pd_place_gpu(0)) == PD_OK &&
              c->malloc_(&dev, bytes) == 0;
    for (int dir = 0; dir < 2; ++dir) {
        bool h2d = dir == 0;
        const char *name = h2d ? NAME_H2D : NAME_D2H;
        if (!ok) {
            bench_emit_missing(name, "GB/s", TARGET, true, "pinned or GPU memory unavailable");
            continue;
        }
        double p[32], q[32];
        int k = 0;
        for (int w = 0; w < 2; ++w) { /* warm: the caches, the first-touch costs */
            seconds_of_pinned_copy(c, h2d, false, &pinned, &gpu, dev, bytes);
            seconds_of_pinned_copy(c, h2d, true, &pinned, &gpu, dev, bytes);
        }
        for (; k < samples; ++k) {
            double tp = seconds_of_pinned_copy(c, h2d, false, &pinned, &gpu, dev, bytes);
            double tb = seconds_of_pinned_copy(c, h2d, true, &pinned, &gpu, dev, bytes);
            if (tp <= 0 || tb <= 0)
                break;
            p[k] = (double)bytes / 1e9 / tp;
            q[k] = (double)bytes / 1e9 / tb;
        }
        if (k < samples) {
            bench_emit_missing(name, "GB/s", TARGET, true, "a GPU copy failed (see stderr)");
            continue;
        }
        bench_row r = {name,
                       "GB/s",
                       bench_stats_of(p, k),
                       bench_stats_of(q, k),
                       true,
                       true,
                       TARGET,
                       BENCH_RATIO_AT_LEAST,
                       0.85,
                       h2d ? "pd_tensor_copy_to of a 64 MiB gpu_pinned tensor to gpu:0 vs "
                             "cudaMemcpy from the same pinned buffer"
                           : "pd_tensor_copy_to of a 64 MiB gpu:0 tensor to gpu_pinned vs "
                             "cudaMemcpy into the same pinned buffer"};
        bench_emit(&r);
    }
    if (dev)
        c->free_(dev);
    pd_tensor_release(&gpu);
    pd_tensor_release(&pinned);
}

static void emit_all_missing(bool applicable, const char *why)
{
    bench_emit_missing(NAME, "GB/s", TARGET, applicable, why);
    bench_emit_missing(NAME_CALL, "us", TARGET_CALL, applicable, why);
    bench_emit_missing(NAME_H2D, "GB/s", TARGET, applicable, why);
    bench_emit_missing(NAME_D2H, "GB/s", TARGET, applicable, why);
}

int main(int argc, char **argv)
{
    bench_init(argc, argv);
    cuda c;
    int count = 0;
    if (!cuda_open(&c) || c.get_device_count(&count) != 0 || count <= 0) {
        emit_all_missing(false, "no device");
    } else if (!gpu_source()) {
        emit_all_missing(true, "examples/relu has no .cu source");
    } else {
        pd_registry *reg = NULL, *raw_reg = NULL;
        pd_module *mod = NULL;
        const char *src[] = {BENCH_RELU_SOURCE, gpu_source()};
        if (pd_registry_create(&reg) == PD_OK && pd_registry_create(&raw_reg) == PD_OK &&
            bench_jit_load(reg, "bench_relu_gpu", src, 2, NULL, &mod) == PD_OK) {
            measure(&c, reg);
            measure_call(&c, reg, raw_reg);
            measure_pinned(&c);
        } else {
            emit_all_missing(true, "JIT load of the GPU relu failed");
        }
        pd_registry_destroy(raw_reg);
        pd_registry_destroy(reg);
    }
    if (c.lib)
        dlclose(c.lib);
    return bench_finish();
}
