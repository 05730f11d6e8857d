/*
 * pd_api_list.h - the one list of the functions in the runtime's table (pd_api, pd_api.h).
 *
 * Everything about a table function is written once, on its line here: its member name, its
 * signature, the arguments to forward, the value the C++ table returns when it fails, and the
 * names of the runtime functions that implement it. From this list pd_api.h generates the
 * members of struct pd_api, and the runtime generates its C table (sdk/src/api/api_table.c),
 * its C++ table (sdk/src/api/api_cxx.c) and the declarations of the implementing functions
 * (the end of sdk/src/call/kernel_ctx.h), in the same way as XLA FFI's _XLA_FFI_API_STRUCT_FIELD
 * list.
 *
 * PD_API_LIST(CTX, CTX_VOID, SAME) expands every entry with one of three macros:
 *   CTX(ret, member, params, args, failed, c_fn, cxx_fn)
 *       a context function. The C table holds c_fn, which ends the op call on failure. The
 *       C++ table holds cxx_fn, generated to call c_fn and return `failed` (with the error
 *       pending in the call) instead of ending the call: see pd_api.h, "Errors".
 *   CTX_VOID(member, params, args, c_fn, cxx_fn)
 *       the same for a function returning nothing (the C++ caller asks pending_error).
 *   SAME(ret, member, params, attrs, fn)
 *       a function both tables share (it never ends the call through a table of its own);
 *       `attrs` are the attributes of its member (noreturn, printf format).
 *
 * Growth. The list is append-only within an ABI major version: a new function is one new
 * line at the end (and its implementation), with a PD_ABI_MINOR bump; a module that may
 * meet an older runtime tests PD_API_HAS(api, member) before calling it. Blocks that belong
 * to another part of the runtime (a device's streams) do not go here: they hang off
 * pd_api.ext (pd_api_ext), so they never reshuffle this list.
 */
#ifndef PD_API_LIST_H
#define PD_API_LIST_H

/* clang-format off */
#define PD_API_LIST(CTX, CTX_VOID, SAME)                                                        \
    /* Ends the current op call with a formatted message; [file:line] is appended. Outside an  \
     * op call (a bug in the caller) it prints the message and aborts: there is no frame to    \
     * return to. Leading white space of the formatted message is dropped; an empty message    \
     * becomes "An error occurred.". Inside a pd_parallel_for chunk it ends the loop (see      \
     * parallel_for). */                                                                       \
    SAME(void, throw_error, (const char *file, int line, const char *fmt, va_list ap),         \
         PD_NORETURN_ATTR, pd__api_throw_error)                                                \
    /* The op's registered name ("custom_relu_grad" for a grad op). */                         \
    CTX(const char *, op_name, (pd_kernel_ctx *ctx), (ctx), NULL,                              \
        pd__ctx_op_name, pd__cxx_op_name)                                                      \
    /* Inputs. `index` is the declared position. input_count: tensors bound to it (1 for a     \
     * plain input, any number for a vector, 0 for an absent optional). input: the item-th     \
     * tensor, or NULL when item >= input_count (an absent optional input). */                 \
    CTX(int32_t, input_count, (pd_kernel_ctx *ctx, int32_t index), (ctx, index), -1,           \
        pd__ctx_input_count, pd__cxx_input_count)                                              \
    CTX(const pd_tensor *, input, (pd_kernel_ctx *ctx, int32_t index, int32_t item),           \
        (ctx, index, item), NULL, pd__ctx_input, pd__cxx_input)                                \
    /* Declared position of an input or output by name (with or without its @VECTOR /          \
     * @OPTIONAL suffix); throws if there is none. */                                          \
    CTX(int32_t, input_index, (pd_kernel_ctx *ctx, const char *name), (ctx, name), -1,         \
        pd__ctx_input_index, pd__cxx_input_index)                                              \
    CTX(int32_t, output_index, (pd_kernel_ctx *ctx, const char *name), (ctx, name), -1,        \
        pd__ctx_output_index, pd__cxx_output_index)                                            \
    /* Attributes, in declared order, with the declared types. Throws on a bad index. */       \
    CTX(const pd_attr *, attr, (pd_kernel_ctx *ctx, int32_t index), (ctx, index), NULL,        \
        pd__ctx_attr, pd__cxx_attr)                                                            \
    CTX(int32_t, attr_index, (pd_kernel_ctx *ctx, const char *name), (ctx, name), -1,          \
        pd__ctx_attr_index, pd__cxx_attr_index)                                                \
    /* Outputs. output_count: items of a declared output (1 unless a vector output's count     \
     * was set). output: the item-th output tensor: the one set with set_output, the bound     \
     * input for an inplace output, or else a new tensor of the inferred shape and dtype on    \
     * the place of the first input. set_output makes `t` that output (the call keeps its own  \
     * reference, so `t` may be a context tensor or an input). */                              \
    CTX(int32_t, output_count, (pd_kernel_ctx *ctx, int32_t index), (ctx, index), -1,          \
        pd__ctx_output_count, pd__cxx_output_count)                                            \
    CTX(pd_tensor *, output, (pd_kernel_ctx *ctx, int32_t index, int32_t item),                \
        (ctx, index, item), NULL, pd__ctx_output, pd__cxx_output)                              \
    CTX_VOID(set_output,                                                                       \
             (pd_kernel_ctx *ctx, int32_t index, int32_t item, const pd_tensor *t),            \
             (ctx, index, item, t), pd__ctx_set_output, pd__cxx_set_output)                    \
    /* Infer functions: the number of items of a vector output, and each item's shape and      \
     * dtype. */                                                                               \
    CTX_VOID(set_output_count, (pd_kernel_ctx *ctx, int32_t index, int32_t count),             \
             (ctx, index, count), pd__ctx_set_output_count, pd__cxx_set_output_count)          \
    CTX_VOID(set_output_shape,                                                                 \
             (pd_kernel_ctx *ctx, int32_t index, int32_t item, int32_t ndim,                   \
              const int64_t *shape),                                                           \
             (ctx, index, item, ndim, shape), pd__ctx_set_output_shape,                        \
             pd__cxx_set_output_shape)                                                         \
    CTX_VOID(set_output_dtype,                                                                 \
             (pd_kernel_ctx *ctx, int32_t index, int32_t item, pd_data_type dtype),            \
             (ctx, index, item, dtype), pd__ctx_set_output_dtype, pd__cxx_set_output_dtype)    \
    /* Tensors owned by the call. full: every element is `value` (complex: value + 0i). */     \
    CTX(pd_tensor *, empty,                                                                    \
        (pd_kernel_ctx *ctx, pd_data_type dtype, pd_place place, int32_t ndim,                 \
         const int64_t *shape),                                                                \
        (ctx, dtype, place, ndim, shape), NULL, pd__ctx_empty, pd__cxx_empty)                  \
    CTX(pd_tensor *, full,                                                                     \
        (pd_kernel_ctx *ctx, pd_data_type dtype, pd_place place, int32_t ndim,                 \
         const int64_t *shape, double value),                                                  \
        (ctx, dtype, place, ndim, shape, value), NULL, pd__ctx_full, pd__cxx_full)             \
    CTX(pd_tensor *, copy_to, (pd_kernel_ctx *ctx, const pd_tensor *src, pd_place place),      \
        (ctx, src, place), NULL, pd__ctx_copy_to, pd__cxx_copy_to)                             \
    CTX(pd_tensor *, cast, (pd_kernel_ctx *ctx, const pd_tensor *src, pd_data_type dtype),     \
        (ctx, src, dtype), NULL, pd__ctx_cast, pd__cxx_cast)                                   \
    /* Rows [begin, end) along axis 0, sharing storage. */                                     \
    CTX(pd_tensor *, slice,                                                                    \
        (pd_kernel_ctx *ctx, const pd_tensor *src, int64_t begin, int64_t end),                \
        (ctx, src, begin, end), NULL, pd__ctx_slice, pd__cxx_slice)                            \
    /* Same storage, new shape; one dimension may be -1 (inferred). */                         \
    CTX(pd_tensor *, reshape,                                                                  \
        (pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim, const int64_t *shape),        \
        (ctx, src, ndim, shape), NULL, pd__ctx_reshape, pd__cxx_reshape)                       \
    CTX(pd_tensor *, contiguous, (pd_kernel_ctx *ctx, const pd_tensor *src), (ctx, src),       \
        NULL, pd__ctx_contiguous, pd__cxx_contiguous)                                          \
    /* `bytes` of 64-byte aligned scratch memory, freed when the call ends. */                 \
    CTX(void *, scratch, (pd_kernel_ctx *ctx, size_t bytes), (ctx, bytes), NULL,               \
        pd__ctx_scratch, pd__cxx_scratch)                                                      \
    /* For C++ op code: hands over the pending error of the call (once): its message (valid    \
     * until the call ends or fails again), status and [file:line] (*file NULL when the error  \
     * has none); NULL if none is pending. `status`, `file` and `line` may be NULL. */         \
    SAME(const char *, pending_error,                                                          \
         (pd_kernel_ctx *ctx, pd_status *status, const char **file, int *line), ,              \
         pd__ctx_pending_error)                                                                \
    /* For C++ op code: records the error that ends the call, and returns (the invoke hook of  \
     * extension.h; inside a pd_parallel_for chunk it ends the loop instead). `file` may be    \
     * NULL (no [file:line]). */                                                               \
    SAME(void, report_error,                                                                   \
         (pd_kernel_ctx *ctx, pd_status status, const char *file, int line, const char *fmt,   \
          ...),                                                                                \
         PD_PRINTF(5, 6), pd__ctx_report_error)                                                \
    /* Runs fn(arg, begin, end) over chunks that cover [0, n) exactly once, on the runtime's   \
     * thread pool (pd_parallel_for in pd_api.h says how). A throw inside fn stops the loop;   \
     * once every running chunk has returned, the call ends with that error. */                \
    CTX_VOID(parallel_for,                                                                     \
             (pd_kernel_ctx *ctx, int64_t n, int64_t grain, pd_parallel_fn fn, void *arg),     \
             (ctx, n, grain, fn, arg), pd__ctx_parallel_for, pd__cxx_parallel_for)             \
    /* pd_place_custom (pd_place.h): never fails; an unknown name gives an undefined place. */ \
    SAME(pd_place, place_custom, (const char *type_name, int32_t device_id), , pd_place_custom)\
    /* The registered name of custom device type number `type`; "undefined" for a number that  \
     * is no registered custom type. */                                                        \
    SAME(const char *, device_type_name, (int32_t type), , pd__device_type_label)              \
    /* Views sharing src's storage (pdext.h has the rules: pd_tensor_slice_step,               \
     * pd_tensor_permute, pd_tensor_expand); they throw on bad arguments. */                   \
    CTX(pd_tensor *, slice_step,                                                               \
        (pd_kernel_ctx *ctx, const pd_tensor *src, int32_t axis, int64_t begin, int64_t end,   \
         int64_t step),                                                                        \
        (ctx, src, axis, begin, end, step), NULL, pd__ctx_slice_step, pd__cxx_slice_step)      \
    CTX(pd_tensor *, permute, (pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,         \
                               const int32_t *dims),                                           \
        (ctx, src, ndim, dims), NULL, pd__ctx_permute, pd__cxx_permute)                        \
    CTX(pd_tensor *, expand, (pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,          \
                              const int64_t *shape),                                           \
        (ctx, src, ndim, shape), NULL, pd__ctx_expand, pd__cxx_expand)                          \
    /* The device handle of the stream the call runs on (cudaStream_t for CUDA, the device's  \
     * own handle for a custom device; NULL on the CPU): launch the kernel's work on it. The  \
     * call's device is its first input's; the stream is the host thread's current stream    \
     * for that device or the device's default stream (pd_device.h). */                       \
    CTX(void *, stream, (pd_kernel_ctx *ctx), (ctx), NULL, pd__ctx_stream, pd__cxx_stream)    \
    /* The call's workspace (pd_op_def.workspace): the bytes the op's workspace function      \
     * asked for, on the op's place, valid until the call ends; NULL for 0 bytes. Throws if    \
     * the op has no workspace function, outside the kernel, or when it cannot be allocated.   \
     * ABI 2.2. */                                                                             \
    CTX(void *, workspace, (pd_kernel_ctx *ctx), (ctx), NULL, pd__ctx_workspace,             \
        pd__cxx_workspace) \
    /* Tensor functions (pd_math.h has the rules): op is a pd_binary_op. */                    \
    CTX(pd_tensor *, binary,                                                                   \
        (pd_kernel_ctx *ctx, int32_t op, const pd_tensor *a, const pd_tensor *b),              \
        (ctx, op, a, b), NULL, pd__ctx_binary, pd__cxx_binary)                                 \
    CTX(pd_tensor *, binary_scalar,                                                            \
        (pd_kernel_ctx *ctx, int32_t op, const pd_tensor *a, double value, bool scalar_first), \
        (ctx, op, a, value, scalar_first), NULL, pd__ctx_binary_scalar, pd__cxx_binary_scalar) \
    CTX(pd_tensor *, matmul,                                                                   \
        (pd_kernel_ctx *ctx, const pd_tensor *a, const pd_tensor *b, bool transpose_a,         \
         bool transpose_b),                                                                    \
        (ctx, a, b, transpose_a, transpose_b), NULL, pd__ctx_matmul, pd__cxx_matmul)           \
    CTX(pd_tensor *, sum,                                                                      \
        (pd_kernel_ctx *ctx, const pd_tensor *x, int32_t naxes, const int64_t *axes,           \
         bool keepdim, pd_data_type dtype),                                                    \
        (ctx, x, naxes, axes, keepdim, dtype), NULL, pd__ctx_sum, pd__cxx_sum)                 \
    CTX_VOID(fill, (pd_kernel_ctx *ctx, pd_tensor *t, double value), (ctx, t, value),          \
             pd__ctx_fill, pd__cxx_fill)                                                       \
    /* The Paddle C++ front (pd_paddle_op.h): checks the op a builder recorded, once (the      \
     * first call fills op's results and state), and returns 0 when its declarations agree,    \
     * else the length of the message every call of the op fails with, writing as much of it  \
     * as fits into message[cap] (NUL-terminated, as snprintf). Outside an op call too.        \
     * ABI 2.3. */                                                                             \
    SAME(int32_t, paddle_op_check, (pd_paddle_op *op, char *message, size_t cap), ,            \
         pd__paddle_op_check)
/* clang-format on */

#endif /* PD_API_LIST_H */
