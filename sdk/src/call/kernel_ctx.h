/*
 * kernel_ctx.h - the state of one op call (struct pd_kernel_ctx), shared by the runner
 * (runner.c fills it, runs the op, checks and hands back the outputs), the context functions
 * of the table (ctx.c: inputs, attrs, outputs, inferred shapes; ctx_arena.c: tensors and
 * scratch owned by the call) and error unwinding (unwind.c). Private to libpdext.
 *
 * Speed. A context lives on the runner's stack and is not zeroed as a whole: the runner
 * initializes only the slots the op declares. Plain outputs keep their one item inline,
 * vector outputs draw items from a small inline pool, and the first few call-owned tensors sit
 * in an inline array, so that a call of a small op allocates nothing but its output's memory.
 * Bigger vectors and more tensors spill to the heap; everything is released when the call
 * ends, whether it succeeded or not.
 */
#ifndef PD_KERNEL_CTX_H
#define PD_KERNEL_CTX_H

#include "ops/pd_registry_internal.h"
#include "tensor/pending.h"

#include <setjmp.h>

/* The frame a call's op code unwinds to (runner.c arms it, unwind.c jumps). A plain GCC or
 * Clang build uses __builtin_setjmp, which saves three words: the runner arms one frame per
 * call, and sigsetjmp's full register save cost 2.5 ns more per call (op_call bench). Sanitizer
 * builds keep sigsetjmp, whose longjmp the sanitizers intercept to keep their shadow stacks
 * right. Arm and jump must be in different functions (the builtins' rule; the runner's
 * frame is armed in a function of its own anyway). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define PD__FRAME_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__GNUC__)
#define PD__FRAME_SANITIZED 1
#endif
#ifdef PD__FRAME_SANITIZED
typedef sigjmp_buf pd__frame;
#define PD__FRAME_ARM(frame) sigsetjmp(frame, 0)
#define PD__FRAME_JUMP(frame) siglongjmp(frame, 1)
#else
typedef void *pd__frame[5];
#define PD__FRAME_ARM(frame) __builtin_setjmp(frame)
#define PD__FRAME_JUMP(frame) __builtin_longjmp(frame, 1)
#endif

#define PD__CTX_INLINE_TENSORS 4 /* call-owned tensors kept in the context itself */
#define PD__CTX_POOL_ITEMS 8     /* output items for vector outputs kept in the context */

/* The tensors bound to one declared input: a slice of the host's pd_arg array. */
typedef struct pd__in_slot {
    const pd_tensor *tensors;
    int32_t count; /* 0 for an absent optional input */
    int64_t bytes; /* byte size of its one tensor, if the binder's fast case worked it out; -1 */
} pd__in_slot;

/* One output tensor of a call, with what the infer step said about it. The tensor lives in
 * `own`, or, for a plain output the host asked for with an undefined tensor, in the host's
 * tensor itself (pd__out_item_direct), so that handing it over copies nothing; a failed call
 * leaves that one undefined again (all zero, as PD_TENSOR_UNDEFINED). */
typedef struct pd__out_item {
    pd_tensor *t;               /* &own or the host's tensor: undefined until set; once defined
                                 * it holds a reference */
    pd_data_type dtype;         /* inferred dtype; PD_UNDEFINED when unknown */
    int32_t ndim;               /* inferred rank; -1 when the shape is unknown */
    int64_t shape[PD_MAX_DIMS]; /* inferred shape[0..ndim-1] */
    int64_t bytes;              /* byte size of that dtype and shape, if known (the plain
                                 * inference of an input the binder sized); else -1 */
    pd_tensor own;
} pd__out_item;

/* One declared output. */
typedef struct pd__out_slot {
    pd__out_item *items; /* `count` items: &one, pool entries or heap */
    int32_t count;       /* items of the output (1 for a plain output) */
    int32_t capacity;    /* items available at `items` */
    int32_t host_arg;    /* index of the host's output pd_arg for it, -1 if not asked for */
    bool may_stay_unset; /* optional, or the gradient of an absent optional input */
    /* The host's defined tensors the output is to be written into (its pd_arg's `tensors`
     * when the first is defined; NULL: the call makes the output): pd_output makes an item
     * as a borrowed view of its destination, and the hand-over copies any item the kernel
     * made some other way (pd_set_output, inplace) into it. The host's tensors are never
     * changed, only their memory. */
    const pd_tensor *dest;
    int32_t n_dest;
    pd__out_item one; /* storage of a plain output's item */
} pd__out_slot;

/* Heap overflow of the inline tensor array. */
typedef struct pd__tensor_chunk {
    struct pd__tensor_chunk *next;
    int32_t used, capacity;
    pd_tensor tensors[];
} pd__tensor_chunk;

/* Where the call is: table functions check that they are used at the right time. */
typedef enum pd__phase {
    PD__PHASE_INFER = 0, /* defaults, infer_shape, infer_dtype */
    PD__PHASE_KERNEL = 1
} pd__phase;

struct pd_kernel_ctx {
    const pd_op *op;
    pd__phase phase;
    int32_t n_inputs, n_outputs, n_attrs; /* copies of the op's counts */
    int32_t n_unbound; /* outputs the host did not ask for (set by the runner's binder) */
    bool has_dest;     /* some output slot has a destination (pd__out_slot.dest) */
    bool inputs_ready; /* the binder saw every input dense and inside its storage, and the op
                        * takes no strided input: the runner's input step has nothing to do */

    pd__in_slot in[PD_MAX_INPUTS];
    pd_attr attrs[PD_MAX_ATTRS]; /* in declared order, named by their declarations */
    pd__out_slot out[PD_MAX_OUTPUTS];

    /* Call-owned memory (ctx_arena.c); the fields below `arena` are set up by its first use. */
    bool arena; /* the call has used its arena: pool items, tensors or heap blocks */
    int32_t pool_used;
    pd__out_item pool[PD__CTX_POOL_ITEMS];
    int32_t n_tensors;
    pd_tensor tensors[PD__CTX_INLINE_TENSORS];
    pd__tensor_chunk *chunks; /* more tensors, newest first */
    void *heap;               /* scratch and spilled item arrays: a list of blocks */

    /* Unwinding (unwind.c). */
    pd_kernel_ctx *outer; /* the call this one interrupted on this thread, if any */
    pd__frame frame;      /* where a throw lands */
    pd_status err_status; /* what the throw reports */
    char *err_message;    /* formatted, heap (NULL: out of memory while formatting) */
    const char *err_file; /* PD_CHECK / PD_THROW site; NULL for table functions */
    int err_line;
    /* C++ op code (api_cxx.c): an error a function of the C++ table raised ends the call
     * even if the module's code catches the exception it becomes (the function that failed
     * may have stopped half way): err_set says so; err_handed once pending_error gave it to
     * the module, or the module reported it itself with report_error. */
    bool err_set;
    bool err_handed;

    /* The op's workspace (pd_op_def.workspace, ctx_arena.c): made once per call, on first
     * use by the kernel or by the executor's allocate stage. */
    bool workspace_made;
    void *workspace;
};

/* Makes an output item undefined, in its own tensor, with nothing inferred (no reference is
 * dropped). */
static inline void pd__out_item_reset(pd__out_item *it)
{
    it->t = &it->own;
    it->own.data = NULL;
    it->own.storage = NULL;
    it->own.dtype = PD_UNDEFINED;
    it->own.ndim = 0;
    it->dtype = PD_UNDEFINED;
    it->ndim = -1;
    it->bytes = -1;
}

/* The host's output tensor `host` can take the item's tensor itself: it is undefined (no
 * data, no storage, no dtype, rank 0), so it holds nothing that would be lost and nothing a
 * failed call must give back but an undefined tensor. */
static inline bool pd__out_tensor_free(const pd_tensor *host)
{
    return host->data == NULL && host->storage == NULL && host->dtype == PD_UNDEFINED &&
           host->ndim == 0;
}

/* Makes an output item undefined, with nothing inferred, in the host's (free) tensor. */
static inline void pd__out_item_direct(pd__out_item *it, pd_tensor *host)
{
    it->t = host;
    it->dtype = PD_UNDEFINED;
    it->ndim = -1;
    it->bytes = -1;
}

/* Makes the item's tensor, as inferred, over `storage` (whose reference it takes) on `place`:
 * all of it zeroed (the entries past ndim, offset, reserved, PD_LAYOUT_DENSE), then what is
 * not zero; the dims and their dense strides (tensor/layout.c's rule: a zero dim counts as 1)
 * in one pass over the dims the tensor has. The runner's outputs (ctx.c) and the executor's
 * (exec/submit.c) are made this way. */
static inline void pd__out_item_make(pd__out_item *it, pd_storage *storage, const pd_place *place)
{
    pd_tensor *t = it->t;
    pd__tensor_clear(t);
    t->data = storage->ptr;
    t->storage = storage;
    t->dtype = it->dtype;
    t->ndim = it->ndim;
    t->place = *place;
    int64_t stride = 1;
    for (int32_t d = it->ndim - 1; d >= 0; --d) {
        int64_t n = it->shape[d];
        t->shape[d] = n;
        t->strides[d] = stride;
        if (n > 0)
            stride *= n;
    }
}

/* --- runner.c ------------------------------------------------------------------------------ */

/* How often this thread's calls took the runner's fast cases: an input bound by position with
 * one good tensor for a plain declaration, an output of one item handed over as inferred, and
 * the default inference of an op with nothing but plain outputs (pd_op.plain_infer). Counted
 * so that tests can prove the fast cases run; per thread, so counting costs an increment of
 * memory no other thread touches. */
typedef struct pd__runner_stats_t {
    uint64_t fast_inputs;
    uint64_t fast_outputs;
    uint64_t plain_infers;
    uint64_t ready_inputs; /* calls whose input step the binder's checks made unnecessary */
} pd__runner_stats_t;
extern _Thread_local pd__runner_stats_t pd__runner_stats __attribute__((tls_model("initial-exec")));

/* --- unwind.c ------------------------------------------------------------------------------ */

/* This thread's innermost running call (NULL outside any). initial-exec: a plain
 * %fs-relative access instead of a __tls_get_addr call on every op call; one pointer fits
 * easily in the static TLS surplus glibc keeps for libraries loaded with dlopen. */
extern _Thread_local pd_kernel_ctx *pd__current_call __attribute__((tls_model("initial-exec")));

/* Makes ctx the innermost running call of this thread (remembering the one it interrupts),
 * and back. Inline: every op call does both, and each is two moves. */
static inline void pd__ctx_enter(pd_kernel_ctx *ctx)
{
    ctx->outer = pd__current_call;
    pd__current_call = ctx;
}
static inline void pd__ctx_leave(pd_kernel_ctx *ctx) { pd__current_call = ctx->outer; }
/* Set while a function of the C++ table runs (api_cxx.c): a throw lands there instead of in
 * the runner's frame, and the error stays pending. Per thread, not per call: no op call
 * starts inside a table function. */
extern _Thread_local sigjmp_buf *pd__cxx_guard __attribute__((tls_model("initial-exec")));
/* Table function for PD_CHECK / PD_THROW. */
PD_NORETURN_ATTR void pd__api_throw_error(const char *file, int line, const char *fmt, va_list ap);
/* Ends the innermost running call with `status` and a message (no [file:line]): how table
 * functions fail. */
PD__SIBLING_API PD_NORETURN_ATTR void pd__ctx_throw(pd_status status, const char *fmt, ...)
    PD_PRINTF(2, 3);
/* For C++ op code: records an error in the call without leaving it (pd_api.report_error), and
 * hands a pending one over (pd_api.pending_error). */
void pd__ctx_report_error(pd_kernel_ctx *ctx, pd_status status, const char *file, int line,
                          const char *fmt, ...) PD_PRINTF(5, 6);
const char *pd__ctx_pending_error(pd_kernel_ctx *ctx, pd_status *status, const char **file,
                                  int *line);
/* The message of a caught throw, as the host sees it: "<op>: <message> [file:line]"; records
 * it as this thread's last error, frees it and returns the status. */
pd_status pd__ctx_report(pd_kernel_ctx *ctx);

/* --- ctx.c (the context functions of the table are declared from its list, below) ---------- */

/* The place outputs are made on and the call's stream belongs to: the first bound input's,
 * CPU for an op without inputs. Inline: the runner asks it on every call. */
static inline const pd_place *pd__ctx_first_input_place(const pd_kernel_ctx *ctx)
{
    static const pd_place cpu = {PD_PLACE_CPU, 0};
    for (int32_t i = 0; i < ctx->n_inputs; ++i)
        if (ctx->in[i].count > 0)
            return &ctx->in[i].tensors[0].place;
    return &cpu;
}

/* Resizes output `index` to `count` items (new items undefined, dropped ones released);
 * throws on out of memory. Used by set_output_count and by the runner's defaults. */
void pd__ctx_resize_output(pd_kernel_ctx *ctx, int32_t index, int32_t count);

/* Whether the host's destination `d` can receive item k of output o, made as dtype, ndim,
 * shape on `place` (pd__out_slot.dest): the same dtype, shape and place, dense, with data; if
 * not, *why says so, naming the output and both descriptions (without the op's name). */
bool pd__ctx_dest_fits(const pd_kernel_ctx *ctx, int32_t o, int32_t k, const pd_tensor *d,
                       pd_data_type dtype, int32_t ndim, const int64_t *shape, pd_place place,
                       char *why, size_t size);

/* --- ctx_arena.c: memory owned by the call ------------------------------------------------- */

pd_tensor *pd__ctx_contiguous(pd_kernel_ctx *ctx, const pd_tensor *src);
void *pd__ctx_scratch(pd_kernel_ctx *ctx, size_t bytes);
/* pd_workspace(ctx): the call's workspace, made on first use (throws naming the op when the
 * op has none, outside the kernel, or when it cannot be allocated). */
void *pd__ctx_workspace(pd_kernel_ctx *ctx);
/* Strided views for op code (ABI 2.0). */
pd_tensor *pd__ctx_slice_step(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t axis, int64_t begin,
                              int64_t end, int64_t step);
pd_tensor *pd__ctx_permute(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,
                           const int32_t *dims);
pd_tensor *pd__ctx_expand(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,
                          const int64_t *shape);

/* --- api_cxx.c: the table for C++ op code (pd_api.cxx) ------------------------------------ */

extern const pd_api pd__cxx_api;

/* `n` output items that live until the call ends; throws on out of memory. */
pd__out_item *pd__ctx_alloc_items(pd_kernel_ctx *ctx, int32_t n);
/* A new tensor on `place` of the given dtype/shape into *out (which must be undefined);
 * throws naming `who` on a bad shape, an unavailable place or out of memory. */
void pd__ctx_make_tensor(const char *who, pd_tensor *out, pd_data_type dtype, pd_place place,
                         int32_t ndim, const int64_t *shape);
/* Releases every call-owned tensor and frees scratch and spilled arrays (nothing if the call
 * never used its arena). */
void pd__ctx_arena_release(pd_kernel_ctx *ctx);

/* --- strided_inputs.c ------------------------------------------------------------------------ */

/* Before infer and kernel: refuses an input that reaches outside its storage, makes strided
 * inputs of the op's dense inputs contiguous (call-owned copies) and gives strided-accepting
 * inputs filled strides. Throws (the runner's frame must be armed) with a message naming the
 * input. */
void pd__ctx_prepare_inputs(pd_kernel_ctx *ctx);

/* --- ctx.c: pending inputs ------------------------------------------------------------------ */

/* What the synchronous runner does with inputs that may be pending: waits for each; the
 * error of a poisoned one ends the call (as the thread's last error). On a device it also
 * orders the call's stream after the stream that last used each input's (and destination's)
 * memory, where that is another one. */
pd_status pd__ctx_wait_inputs(const pd_kernel_ctx *ctx);

/* --- The implementations of the function table --------------------------------------------- */

/* Declared from the table's one list (pd_api_list.h), so that an implementation whose
 * signature drifts from its list line fails to compile, and a new entry needs no declaration
 * written by hand: ctx.c, ctx_arena.c, unwind.c and parallel.c define most of them, math/ and
 * device/ the rest, api/ puts them in the tables. */
#define PD__IMPL_DECLARE(ret, member, params, args, failed, c_fn, cxx_fn) ret c_fn params;
#define PD__IMPL_DECLARE_VOID(member, params, args, c_fn, cxx_fn) void c_fn params;
#define PD__IMPL_DECLARE_SAME(ret, member, params, attrs, fn) ret fn params attrs;
PD_API_LIST(PD__IMPL_DECLARE, PD__IMPL_DECLARE_VOID, PD__IMPL_DECLARE_SAME)
#undef PD__IMPL_DECLARE
#undef PD__IMPL_DECLARE_VOID
#undef PD__IMPL_DECLARE_SAME

#endif /* PD_KERNEL_CTX_H */
