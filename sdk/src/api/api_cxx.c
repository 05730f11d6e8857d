/*
 * api_cxx.c - the function table for C++ op code (pd_api.cxx): the context functions of the
 * runtime's table, each run under a guard of its own, so that a failure returns to the caller
 * instead of jumping to the runner.
 *
 * Why. In C a failing table function ends the op call with a siglongjmp to the runner. In C++
 * that jump would cross the kernel's frames without running their destructors. A function of
 * this table arms a per-thread guard (pd__cxx_guard) before it calls the real one; a throw
 * inside lands back in it, after only runtime C frames, and it returns NULL, -1 or nothing
 * with the error pending in the call. pd_api.h's C++ wrappers see that value, take the error
 * with pending_error and throw it as pd::op_error; the module's invoke hook catches it.
 * Calls through this table cost one sigsetjmp (no system call: no signal mask is saved).
 *
 * The functions are listed in the order pd_api declares them.
 */
#include "call/kernel_ctx.h"

/* Arms the guard; where a throw comes back to, returning `failed`. Only the parameters and
 * `failed` (a constant) are read after the jump, and none of them changes after sigsetjmp. */
#define GUARD(failed)                                                                          \
    sigjmp_buf guard;                                                                          \
    pd__cxx_guard = &guard;                                                                    \
    if (sigsetjmp(guard, 0) != 0)                                                              \
    return failed
#define UNGUARD() (pd__cxx_guard = NULL)

/* A guarded function returning a value: NULL or -1 when the real one failed. */
#define GUARDED(type, name, failed, params, args)                                              \
    static type cxx_##name params                                                              \
    {                                                                                          \
        GUARD(failed);                                                                         \
        type result = pd__ctx_##name args;                                                     \
        UNGUARD();                                                                             \
        return result;                                                                         \
    }
/* A guarded function returning nothing: the caller asks pending_error. */
#define GUARDED_VOID(name, params, args)                                                       \
    static void cxx_##name params                                                              \
    {                                                                                          \
        GUARD();                                                                               \
        pd__ctx_##name args;                                                                   \
        UNGUARD();                                                                             \
    }

typedef pd_kernel_ctx ctx_t;

GUARDED(const char *, op_name, NULL, (ctx_t *ctx), (ctx))
GUARDED(int32_t, input_count, -1, (ctx_t *ctx, int32_t i), (ctx, i))
GUARDED(const pd_tensor *, input, NULL, (ctx_t *ctx, int32_t i, int32_t k), (ctx, i, k))
GUARDED(int32_t, input_index, -1, (ctx_t *ctx, const char *name), (ctx, name))
GUARDED(int32_t, output_index, -1, (ctx_t *ctx, const char *name), (ctx, name))
GUARDED(const pd_attr *, attr, NULL, (ctx_t *ctx, int32_t i), (ctx, i))
GUARDED(int32_t, attr_index, -1, (ctx_t *ctx, const char *name), (ctx, name))
GUARDED(int32_t, output_count, -1, (ctx_t *ctx, int32_t i), (ctx, i))
GUARDED(pd_tensor *, output, NULL, (ctx_t *ctx, int32_t i, int32_t k), (ctx, i, k))
GUARDED_VOID(set_output, (ctx_t *ctx, int32_t i, int32_t k, const pd_tensor *t), (ctx, i, k, t))
GUARDED_VOID(set_output_count, (ctx_t *ctx, int32_t i, int32_t n), (ctx, i, n))
GUARDED_VOID(set_output_shape, (ctx_t *ctx, int32_t i, int32_t k, int32_t ndim, const int64_t *s),
             (ctx, i, k, ndim, s))
GUARDED_VOID(set_output_dtype, (ctx_t *ctx, int32_t i, int32_t k, pd_data_type dt), (ctx, i, k, dt))
GUARDED(pd_tensor *, empty, NULL,
        (ctx_t *ctx, pd_data_type dt, pd_place p, int32_t ndim, const int64_t *s),
        (ctx, dt, p, ndim, s))
GUARDED(pd_tensor *, full, NULL,
        (ctx_t *ctx, pd_data_type dt, pd_place p, int32_t ndim, const int64_t *s, double v),
        (ctx, dt, p, ndim, s, v))
GUARDED(pd_tensor *, copy_to, NULL, (ctx_t *ctx, const pd_tensor *t, pd_place p), (ctx, t, p))
GUARDED(pd_tensor *, cast, NULL, (ctx_t *ctx, const pd_tensor *t, pd_data_type dt), (ctx, t, dt))
GUARDED(pd_tensor *, slice, NULL, (ctx_t *ctx, const pd_tensor *t, int64_t b, int64_t e),
        (ctx, t, b, e))
GUARDED(pd_tensor *, reshape, NULL,
        (ctx_t *ctx, const pd_tensor *t, int32_t ndim, const int64_t *s), (ctx, t, ndim, s))
GUARDED(pd_tensor *, contiguous, NULL, (ctx_t *ctx, const pd_tensor *t), (ctx, t))
GUARDED(void *, scratch, NULL, (ctx_t *ctx, size_t bytes), (ctx, bytes))
/* ABI 2.0: strided views. */
GUARDED(pd_tensor *, slice_step, NULL,
        (ctx_t *ctx, const pd_tensor *t, int32_t axis, int64_t b, int64_t e, int64_t step),
        (ctx, t, axis, b, e, step))
GUARDED(pd_tensor *, permute, NULL, (ctx_t *ctx, const pd_tensor *t, int32_t ndim, const int32_t *d),
        (ctx, t, ndim, d))
GUARDED(pd_tensor *, expand, NULL, (ctx_t *ctx, const pd_tensor *t, int32_t ndim, const int64_t *s),
        (ctx, t, ndim, s))

const pd_api pd__cxx_api = {
    .struct_size = sizeof(pd_api),
    .abi_major = PD_ABI_MAJOR,
    .abi_minor = PD_ABI_MINOR,
    .throw_error = pd__api_throw_error,
    .op_name = cxx_op_name,
    .input_count = cxx_input_count,
    .input = cxx_input,
    .input_index = cxx_input_index,
    .output_index = cxx_output_index,
    .attr = cxx_attr,
    .attr_index = cxx_attr_index,
    .output_count = cxx_output_count,
    .output = cxx_output,
    .set_output = cxx_set_output,
    .set_output_count = cxx_set_output_count,
    .set_output_shape = cxx_set_output_shape,
    .set_output_dtype = cxx_set_output_dtype,
    .empty = cxx_empty,
    .full = cxx_full,
    .copy_to = cxx_copy_to,
    .cast = cxx_cast,
    .slice = cxx_slice,
    .reshape = cxx_reshape,
    .contiguous = cxx_contiguous,
    .scratch = cxx_scratch,
    .cxx = &pd__cxx_api,
    .pending_error = pd__ctx_pending_error,
    .report_error = pd__ctx_report_error,
    /* ABI 2.0: places and strided views (place functions never fail: no guard needed). */
    .place_custom = pd_place_custom,
    .device_type_name = pd__device_type_label,
    .slice_step = cxx_slice_step,
    .permute = cxx_permute,
    .expand = cxx_expand,
};
