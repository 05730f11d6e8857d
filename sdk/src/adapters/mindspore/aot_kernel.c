/*
 * aot_kernel.c - the kernel and infer functions of every AOT op: trampolines that turn the
 * running call into MindSpore's calling convention, the per-signature state (AotExtra, FInit,
 * workspaces) and MindSpore's dtype names and TypeIds.
 *
 * Signatures. FInit may size workspaces from the shapes and read attrs, so its result belongs
 * to one signature: the inputs' dtypes and shapes and the call's attr values, serialized into
 * a key. A function without FInit has one entry for all calls (its AotExtra holds nothing but
 * what the call's attrs give, read through the current call), so its calls build no key. Each
 * signature gets one entry (pd_aoti_entry) with its own AotExtra; FInit runs once for it, before
 * the first call with it. Entries live until the op is unloaded (then their kernel data is
 * destroyed through its virtual destructor), so a call with a known signature allocates nothing but
 * its outputs (and its workspace block, which is the call's scratch). Lookups walk the published
 * list without a lock; adding an entry and running FInit hold the op's mutex, which is never held
 * across a jump.
 *
 * Errors. The library's functions run through aot_call.cc, which catches their exceptions;
 * back here, in C, failures end the call with pd__ctx_throw, after every lock is released and
 * every message freed. Outputs, shapes and scratch go through the runtime's function table
 * (this library is libpdext's sibling, not part of it), whose C functions unwind the same way.
 */
#include "adapters/mindspore/aot_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The attrs the library's getters read: those of the innermost call into a library on this
 * thread. initial-exec, as the runner's thread-locals (kernel_ctx.h): every call sets and
 * restores it, and a %fs-relative access costs a move where the general model calls
 * __tls_get_addr. */
static _Thread_local const pd_aoti_attr_view *current_attrs
    __attribute__((tls_model("initial-exec")));

const pd_aoti_attr_view *pd_aoti_current_attrs(void) { return current_attrs; }

/* --- dtypes ------------------------------------------------------------------------------ */

/* MindSpore's dtype names, by pdext dtype: a table, since every call names each of its
 * tensors' dtypes. */
static const char *const dtype_names[PD_NUM_DTYPES] =
    {[PD_BOOL] = "bool",       [PD_INT8] = "int8",           [PD_UINT8] = "uint8",
     [PD_INT16] = "int16",     [PD_UINT16] = "uint16",       [PD_INT32] = "int32",
     [PD_UINT32] = "uint32",   [PD_INT64] = "int64",         [PD_UINT64] = "uint64",
     [PD_FLOAT16] = "float16", [PD_BFLOAT16] = "bfloat16",   [PD_FLOAT32] = "float32",
     [PD_FLOAT64] = "float64", [PD_COMPLEX64] = "complex64", [PD_COMPLEX128] = "complex128"};

static inline const char *dtype_name(pd_data_type dtype)
{
    return (unsigned)dtype < PD_NUM_DTYPES ? dtype_names[dtype] : NULL;
}

const char *pd_aot_dtype_name(pd_data_type dtype) { return dtype_name(dtype); }

/* MindSpore's TypeId numbers (mindapi/base/type_id.h, MindSpore 2.x). */
enum {
    MS_BOOL = 30,
    MS_INT = 31,
    MS_INT8 = 32,
    MS_INT16 = 33,
    MS_INT32 = 34,
    MS_INT64 = 35,
    MS_UINT = 36,
    MS_UINT8 = 37,
    MS_UINT16 = 38,
    MS_UINT32 = 39,
    MS_UINT64 = 40,
    MS_FLOAT = 41,
    MS_FLOAT16 = 42,
    MS_FLOAT32 = 43,
    MS_FLOAT64 = 44,
    MS_BFLOAT16 = 45,
    MS_DOUBLE = 46,
    MS_COMPLEX = 47,
    MS_COMPLEX64 = 48,
    MS_COMPLEX128 = 49
};

pd_data_type pd_aot_dtype_of_type_id(int32_t id)
{
    switch (id) {
    case MS_BOOL: return PD_BOOL;
    case MS_INT8: return PD_INT8;
    case MS_INT16: return PD_INT16;
    case MS_INT:
    case MS_INT32: return PD_INT32;
    case MS_INT64: return PD_INT64;
    case MS_UINT8: return PD_UINT8;
    case MS_UINT16: return PD_UINT16;
    case MS_UINT:
    case MS_UINT32: return PD_UINT32;
    case MS_UINT64: return PD_UINT64;
    case MS_FLOAT16: return PD_FLOAT16;
    case MS_FLOAT:
    case MS_FLOAT32: return PD_FLOAT32;
    case MS_FLOAT64:
    case MS_DOUBLE: return PD_FLOAT64;
    case MS_BFLOAT16: return PD_BFLOAT16;
    case MS_COMPLEX:
    case MS_COMPLEX64: return PD_COMPLEX64;
    case MS_COMPLEX128: return PD_COMPLEX128;
    default: return PD_UNDEFINED;
    }
}

static int32_t type_id_of(pd_data_type t)
{
    static const int32_t ids[] =
        {[PD_BOOL] = MS_BOOL,       [PD_INT8] = MS_INT8,           [PD_UINT8] = MS_UINT8,
         [PD_INT16] = MS_INT16,     [PD_UINT16] = MS_UINT16,       [PD_INT32] = MS_INT32,
         [PD_UINT32] = MS_UINT32,   [PD_INT64] = MS_INT64,         [PD_UINT64] = MS_UINT64,
         [PD_FLOAT16] = MS_FLOAT16, [PD_BFLOAT16] = MS_BFLOAT16,   [PD_FLOAT32] = MS_FLOAT32,
         [PD_FLOAT64] = MS_FLOAT64, [PD_COMPLEX64] = MS_COMPLEX64, [PD_COMPLEX128] = MS_COMPLEX128};
    return ((unsigned)t < sizeof ids / sizeof ids[0]) ? ids[t] : 0;
}

/* --- errors ------------------------------------------------------------------------------ */

/* Ends the call with "function 'F<suffix>' in 'lib' threw: <err>" (r == PD_AOTI_THREW) or
 * "... gave an answer pdext cannot use: <err>" (PD_AOTI_BAD), freeing err first. */
static PD_NORETURN_ATTR void throw_freeing(const pd_aoti_op *op, const char *suffix, int r,
                                           char *err)
{
    char text[1024];
    snprintf(text, sizeof text, "%s", err ? err : "(out of memory while reporting)");
    free(err);
    pd__ctx_throw(PD_ERR_OP_FAILED, "function '%s%s' in '%s' %s: %s", op->function, suffix,
                  op->library, r == PD_AOTI_THREW ? "threw" : "gave an answer pdext cannot use",
                  text);
}

/* --- signatures ----------------------------------------------------------------------------- */

typedef struct key_buf {
    unsigned char *p;
    size_t n, cap;
    unsigned char small[512];
    bool oom;
} key_buf;

static void key_add(key_buf *k, const void *data, size_t n)
{
    if (k->oom)
        return;
    if (k->n + n > k->cap) {
        size_t cap = (k->n + n) * 2;
        unsigned char *p = malloc(cap);
        if (p == NULL) {
            k->oom = true;
            return;
        }
        memcpy(p, k->p, k->n);
        if (k->p != k->small)
            free(k->p);
        k->p = p;
        k->cap = cap;
    }
    memcpy(k->p + k->n, data, n);
    k->n += n;
}

static void key_add_str(key_buf *k, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    key_add(k, &n, sizeof n);
    key_add(k, s, n);
}

static void key_add_attr(key_buf *k, const pd_attr *a)
{
    int32_t head[2] = {(int32_t)a->type, a->count};
    key_add(k, head, sizeof head);
    switch (a->type) {
    case PD_ATTR_STRING: key_add_str(k, a->v.s); break;
    case PD_ATTR_INTS: key_add(k, a->v.ints, sizeof(int32_t) * (size_t)a->count); break;
    case PD_ATTR_FLOATS: key_add(k, a->v.floats, sizeof(float) * (size_t)a->count); break;
    case PD_ATTR_INT64S: key_add(k, a->v.int64s, sizeof(int64_t) * (size_t)a->count); break;
    case PD_ATTR_STRINGS:
        for (int32_t i = 0; i < a->count; ++i)
            key_add_str(k, a->v.strings[i]);
        break;
    default: key_add(k, &a->v, sizeof a->v); break;
    }
}

static void key_build(key_buf *k, const pd_kernel_ctx *ctx, const pd_aoti_op *op)
{
    k->p = k->small;
    k->n = 0;
    k->cap = sizeof k->small;
    k->oom = false;
    for (int32_t i = 0; i < op->n_inputs; ++i) {
        const pd_tensor *t = &ctx->in[i].tensors[0];
        int32_t head[2] = {(int32_t)t->dtype, t->ndim};
        key_add(k, head, sizeof head);
        key_add(k, t->shape, sizeof(int64_t) * (size_t)t->ndim);
    }
    for (int32_t i = 0; i < op->n_attrs; ++i)
        key_add_attr(k, &ctx->attrs[i]);
}

static void key_free(key_buf *k)
{
    if (k->p != k->small)
        free(k->p);
}

static pd_aoti_entry *entry_find(pd_aoti_op *op, const key_buf *k)
{
    for (pd_aoti_entry *e = atomic_load_explicit(&op->entries, memory_order_acquire); e;
         e = e->next)
        if (e->key_size == k->n && memcmp(e->key, k->p, k->n) == 0)
            return e;
    return NULL;
}

/* entry_get for a function with FInit: by the call's signature key. */
static __attribute__((noinline)) pd_aoti_entry *entry_get_keyed(pd_kernel_ctx *ctx, pd_aoti_op *op)
{
    key_buf k;
    key_build(&k, ctx, op);
    if (k.oom) {
        key_free(&k);
        pd__ctx_throw(PD_ERR_OUT_OF_MEMORY,
                      "out of memory building the signature key of function '%s' in '%s'",
                      op->function, op->library);
    }
    pd_aoti_entry *e = entry_find(op, &k);
    if (e) {
        key_free(&k);
        return e;
    }
    pthread_mutex_lock(&op->lock);
    e = entry_find(op, &k);
    if (e == NULL && (e = calloc(1, sizeof *e + k.n)) != NULL) {
        e->extra = op->cxx11 ? pd_aoti_extra_new_abi1() : pd_aoti_extra_new_abi0();
        if (e->extra == NULL) {
            free(e);
            e = NULL;
        } else {
            e->key_size = k.n;
            memcpy(e->key, k.p, k.n);
            atomic_store_explicit(&e->ready, op->init == NULL, memory_order_relaxed);
            e->next = atomic_load_explicit(&op->entries, memory_order_relaxed);
            atomic_store_explicit(&op->entries, e, memory_order_release);
        }
    }
    pthread_mutex_unlock(&op->lock);
    key_free(&k);
    if (e == NULL)
        pd__ctx_throw(PD_ERR_OUT_OF_MEMORY,
                      "out of memory adding a signature entry of function '%s' in '%s'",
                      op->function, op->library);
    return e;
}

/* The entry of this call's signature, added (without running FInit) if it is new. */
static inline pd_aoti_entry *entry_get(pd_kernel_ctx *ctx, pd_aoti_op *op)
{
    if (op->init == NULL) /* nothing depends on the signature: the one entry (aot_load.c) */
        return atomic_load_explicit(&op->entries, memory_order_acquire);
    return entry_get_keyed(ctx, op);
}

pd_status pd_aoti_entry_add_single(pd_aoti_op *op)
{
    pd_aoti_entry *e = calloc(1, sizeof *e);
    if (e == NULL ||
        (e->extra = op->cxx11 ? pd_aoti_extra_new_abi1() : pd_aoti_extra_new_abi0()) == NULL) {
        free(e);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_aot_load: out of memory");
    }
    atomic_store_explicit(&e->ready, true, memory_order_relaxed);
    atomic_store_explicit(&op->entries, e, memory_order_release);
    return PD_OK;
}

void pd_aoti_entries_free(pd_aoti_op *op)
{
    pd_aoti_entry *e = atomic_load(&op->entries);
    while (e) {
        pd_aoti_entry *next = e->next;
        pd_aoti_extra_delete(e->extra);
        free(e->workspace_offsets);
        free(e);
        e = next;
    }
    atomic_store(&op->entries, NULL);
}

/* Runs FInit for the entry once; the workspace layout follows from what it declared. On
 * failure the entry stays not ready (the next call with the signature tries again). */
static void entry_init(pd_aoti_op *op, pd_aoti_entry *e, int *ndims, int64_t **shapes,
                       const char **dtypes, const pd_aoti_attr_view *view)
{
    pthread_mutex_lock(&op->lock);
    if (atomic_load_explicit(&e->ready, memory_order_acquire)) {
        pthread_mutex_unlock(&op->lock);
        return;
    }
    const pd_aoti_attr_view *outer = current_attrs;
    current_attrs = view;
    int rc = 0;
    char *err = NULL;
    int r = pd_aoti_call_init(op->init, ndims, shapes, dtypes, e->extra, &rc, &err);
    current_attrs = outer;
    atomic_fetch_add(&op->init_count, 1);
    const size_t *sizes = NULL;
    size_t n = 0;
    if (r == PD_AOTI_OK) {
        pd_aoti_extra_workspace(e->extra, &sizes, &n);
        free(e->workspace_offsets);
        e->workspace_offsets = n ? malloc(sizeof(size_t) * n) : NULL;
        if (n && e->workspace_offsets == NULL)
            r = -1;
    }
    size_t total = 0, too_big = 0, too_big_size = 0; /* 1 + the workspace that overflows */
    if (r == PD_AOTI_OK) {
        for (size_t i = 0; i < n && !too_big; ++i) {
            e->workspace_offsets[i] = total;
            size_t rounded = 0;
            if (__builtin_add_overflow(sizes[i], PD_AOTI_WORKSPACE_ALIGN - 1, &rounded) ||
                __builtin_add_overflow(total,
                                       rounded / PD_AOTI_WORKSPACE_ALIGN * PD_AOTI_WORKSPACE_ALIGN,
                                       &total) ||
                total > (size_t)INT64_MAX) {
                too_big = i + 1;
                too_big_size = sizes[i];
            }
        }
    }
    if (r == PD_AOTI_OK && !too_big) {
        e->n_workspaces = (int32_t)n;
        e->workspace_bytes = total;
        atomic_store_explicit(&e->ready, true, memory_order_release);
    }
    pthread_mutex_unlock(&op->lock);
    if (too_big)
        pd__ctx_throw(PD_ERR_OP_FAILED,
                      "function '%sInit' in '%s' declared workspace %zu of %zu bytes, which "
                      "makes the workspaces' total overflow: declare sizes that fit in memory",
                      op->function, op->library, too_big - 1, too_big_size);
    if (r == PD_AOTI_RETURNED) {
        free(err);
        pd__ctx_throw(PD_ERR_OP_FAILED, "function '%sInit' in '%s' returned error code %d",
                      op->function, op->library, rc);
    }
    if (r == PD_AOTI_THREW)
        throw_freeing(op, "Init", r, err);
    if (r != PD_AOTI_OK)
        pd__ctx_throw(PD_ERR_OUT_OF_MEMORY,
                      "out of memory recording the %zu workspaces '%sInit' in '%s' declared", n,
                      op->function, op->library);
}

/* --- the kernel ----------------------------------------------------------------------------- */

/* Entry handed from the infer step to the kernel of the same call (initial-exec, as
 * current_attrs). */
static _Thread_local struct {
    const pd_kernel_ctx *ctx;
    const pd_aoti_op *op;
    pd_aoti_entry *entry;
} handoff __attribute__((tls_model("initial-exec")));

#define MAX_INLINE_PARAMS (PD_MAX_INPUTS + PD_MAX_OUTPUTS + 16)

void pd_aoti_kernel(pd_kernel_ctx *ctx)
{
    const pd_api *api = pd_runtime_api();
    pd_aoti_op *op = pd_aoti_op_of(ctx);
    const int32_t n_in = op->n_inputs, n_io = op->n_inputs + op->n_outputs;
    int ndims[PD_MAX_INPUTS + PD_MAX_OUTPUTS];
    int64_t *shapes[PD_MAX_INPUTS + PD_MAX_OUTPUTS];
    const char *dtypes[PD_MAX_INPUTS + PD_MAX_OUTPUTS];
    void *inline_params[MAX_INLINE_PARAMS];
    void **params = inline_params;
    pd_aoti_entry *e = NULL;
    if (handoff.ctx == ctx && handoff.op == op) /* taken before anything can fail */
        e = handoff.entry;
    handoff.ctx = NULL;
    void *stream = pd_aoti_call_stream(ctx, op);

    for (int32_t i = 0; i < n_in; ++i) {
        pd_tensor *t = (pd_tensor *)&ctx->in[i].tensors[0];
        params[i] = t->data;
        ndims[i] = t->ndim;
        shapes[i] = t->shape;
        dtypes[i] = dtype_name(t->dtype);
    }
    if (e == NULL)
        e = entry_get(ctx, op);
    for (int32_t j = 0; j < op->n_outputs; ++j) {
        pd_tensor *t = api->output(ctx, j, 0);
        params[n_in + j] = t->data;
        ndims[n_in + j] = t->ndim;
        shapes[n_in + j] = t->shape;
        dtypes[n_in + j] = dtype_name(t->dtype);
    }
    pd_aoti_attr_view view = {ctx->attrs, (const char *const *)op->attr_names, op->n_attrs,
                              op->name};
    if (!atomic_load_explicit(&e->ready, memory_order_acquire))
        entry_init(op, e, ndims, shapes, dtypes, &view);

    int32_t nparam = n_io + e->n_workspaces;
    if (e->n_workspaces > 0) {
        if (nparam > MAX_INLINE_PARAMS) {
            params = api->scratch(ctx, sizeof(void *) * (size_t)nparam);
            memcpy(params, inline_params, sizeof(void *) * (size_t)n_io);
        }
        char *block = pd_aoti_workspace(ctx, op, e->workspace_bytes);
        for (int32_t k = 0; k < e->n_workspaces; ++k)
            params[n_io + k] = block + e->workspace_offsets[k];
    }

    const pd_aoti_attr_view *outer = current_attrs;
    current_attrs = &view;
    int rc = 0;
    char *err = NULL;
    int r = nparam == 0 ? pd_aoti_call_kernel(op->fn, 0, NULL, NULL, NULL, NULL, stream, e->extra,
                                              &rc, &err)
                        : pd_aoti_call_kernel(op->fn, nparam, params, ndims, shapes, dtypes, stream,
                                              e->extra, &rc, &err);
    current_attrs = outer;
    if (r == PD_AOTI_RETURNED)
        pd__ctx_throw(PD_ERR_OP_FAILED, "function '%s' in '%s' returned error code %d",
                      op->function, op->library, rc);
    if (r != PD_AOTI_OK)
        throw_freeing(op, "", r, err);
}

/* --- inference ------------------------------------------------------------------------------ */

/* Output j's shape from FInferShape's answer: -1 dims taken from the first input of the same
 * rank, [-2] (unknown rank) refused. */
static void resolve_shape(pd_kernel_ctx *ctx, const pd_aoti_op *op, int32_t j, int32_t ndim,
                          int64_t *shape)
{
    if (ndim == 1 && shape[0] == -2)
        pd__ctx_throw(PD_ERR_OP_FAILED,
                      "function '%sInferShape' in '%s' answered [-2] (unknown rank) for output "
                      "%d ('%s'), but the inputs are concrete here: return the shape itself",
                      op->function, op->library, (int)j, op->output_names[j]);
    for (int32_t d = 0; d < ndim; ++d) {
        if (shape[d] >= 0)
            continue;
        int32_t from = -1;
        for (int32_t i = 0; i < op->n_inputs && from < 0; ++i)
            if (ctx->in[i].tensors[0].ndim == ndim)
                from = i;
        if (shape[d] != -1 || from < 0)
            pd__ctx_throw(PD_ERR_OP_FAILED,
                          "function '%sInferShape' in '%s' answered %lld for dim %d of output "
                          "%d ('%s'), which pdext cannot resolve (-1 is taken from an input of "
                          "the same rank, and there is none of rank %d)",
                          op->function, op->library, (long long)shape[d], (int)d, (int)j,
                          op->output_names[j], (int)ndim);
        shape[d] = ctx->in[from].tensors[0].shape[d];
    }
}

/* The entry of this call, fetched once by whichever infer function needs it first and handed
 * to the kernel. */
static pd_aoti_entry *infer_entry(pd_kernel_ctx *ctx, pd_aoti_op *op)
{
    if (handoff.ctx == ctx && handoff.op == op)
        return handoff.entry;
    pd_aoti_entry *e = entry_get(ctx, op);
    handoff.ctx = ctx;
    handoff.op = op;
    handoff.entry = e;
    return e;
}

void pd_aoti_infer_shape(pd_kernel_ctx *ctx)
{
    const pd_api *api = pd_runtime_api();
    pd_aoti_op *op = pd_aoti_op_of(ctx);
    const int32_t n_in = op->n_inputs, n_out = op->n_outputs;
    int32_t out_ndim[PD_MAX_OUTPUTS] = {0}; /* filled by InferShape when the library has one */
    int64_t out_shape[PD_MAX_OUTPUTS][PD_MAX_DIMS];
    handoff.ctx = NULL; /* the first step of every call: nothing from an earlier call is used */
    /* As MindSpore: FInferShape runs only for outputs whose shape was not given (a kernel's
     * InferShape may assume inputs that a given out_shape makes it never see: MindSpore's own
     * add.cc reads shapes[0][1] of a rank-1 input). */
    bool ask = false;
    for (int32_t j = 0; j < n_out; ++j)
        ask = ask || op->outputs[j].ndim < 0;
    ask = ask && op->infer_shape;
    if (ask) {
        pd_aoti_entry *e = infer_entry(ctx, op);
        pd_aoti_attr_view view = {ctx->attrs, (const char *const *)op->attr_names, op->n_attrs,
                                  op->name};
        int ndims[PD_MAX_INPUTS];
        int64_t *shapes[PD_MAX_INPUTS];
        for (int32_t i = 0; i < n_in; ++i) {
            ndims[i] = ctx->in[i].tensors[0].ndim;
            shapes[i] = (int64_t *)ctx->in[i].tensors[0].shape;
        }
        const pd_aoti_attr_view *outer = current_attrs;
        current_attrs = &view;
        char *err = NULL;
        int r = pd_aoti_call_infer_shape(op->infer_shape, n_out, ndims, shapes, e->extra, out_ndim,
                                         out_shape, &err);
        current_attrs = outer;
        if (r != PD_AOTI_OK)
            throw_freeing(op, "InferShape", r, err);
    }
    for (int32_t j = 0; j < n_out; ++j) {
        const pd_aot_output *o = &op->outputs[j];
        if (o->ndim >= 0) {
            if (ask) /* both, for an op with outputs of either kind: they must agree */
                pd_aoti_check_given_shape(op, j, out_ndim[j], out_shape[j]);
            api->set_output_shape(ctx, j, 0, o->ndim, o->shape);
        } else if (ask) {
            resolve_shape(ctx, op, j, out_ndim[j], out_shape[j]);
            api->set_output_shape(ctx, j, 0, out_ndim[j], out_shape[j]);
        } else {
            const pd_tensor *first = &ctx->in[0].tensors[0]; /* checked at registration */
            api->set_output_shape(ctx, j, 0, first->ndim, first->shape);
        }
    }
}

void pd_aoti_infer_dtype(pd_kernel_ctx *ctx)
{
    const pd_api *api = pd_runtime_api();
    pd_aoti_op *op = pd_aoti_op_of(ctx);
    const int32_t n_in = op->n_inputs, n_out = op->n_outputs;
    int32_t out_types[PD_MAX_OUTPUTS] = {0}; /* filled by InferType when the library has one */
    if (op->infer_type) {
        pd_aoti_entry *e = infer_entry(ctx, op);
        pd_aoti_attr_view view = {ctx->attrs, (const char *const *)op->attr_names, op->n_attrs,
                                  op->name};
        int32_t in_types[PD_MAX_INPUTS];
        for (int32_t i = 0; i < n_in; ++i)
            in_types[i] = type_id_of(ctx->in[i].tensors[0].dtype);
        const pd_aoti_attr_view *outer = current_attrs;
        current_attrs = &view;
        char *err = NULL;
        int r = pd_aoti_call_infer_type(op->infer_type, n_in, in_types, n_out, e->extra, out_types,
                                        &err);
        current_attrs = outer;
        if (r != PD_AOTI_OK)
            throw_freeing(op, "InferType", r, err);
    }
    for (int32_t j = 0; j < n_out; ++j) {
        const pd_aot_output *o = &op->outputs[j];
        pd_data_type dtype;
        if (o->dtype != PD_UNDEFINED)
            dtype = o->dtype;
        else if (op->infer_type) {
            dtype = pd_aot_dtype_of_type_id(out_types[j]);
            if (dtype == PD_UNDEFINED)
                pd__ctx_throw(PD_ERR_OP_FAILED,
                              "function '%sInferType' in '%s' answered TypeId %d for output %d "
                              "('%s'), which has no pdext dtype (those with one: "
                              "kNumberTypeBool 30 to kNumberTypeComplex128 49, but for "
                              "kNumberTypeInt4 and the object and meta types)",
                              op->function, op->library, (int)out_types[j], (int)j,
                              op->output_names[j]);
        } else
            dtype = ctx->in[0].tensors[0].dtype; /* checked at registration */
        api->set_output_dtype(ctx, j, 0, dtype);
    }
}
