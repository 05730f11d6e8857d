/*
 * ctx_arena.c - memory owned by one op call: the tensors op code makes through its context
 * (pd_empty, pd_full, pd_cast, views...), scratch buffers, and output item arrays that did not
 * fit the context's inline pool. All of it goes when the call ends, successfully or not, so
 * a kernel that throws halfway leaks nothing.
 *
 * The first PD__CTX_INLINE_TENSORS tensors live in the context itself; more go to heap chunks
 * that double in size. Tensor pointers handed to op code stay valid for the whole call (chunks
 * never move). Scratch and spilled arrays are 64-byte aligned blocks on a singly linked list.
 */
#include "call/kernel_ctx.h"

#include <stdlib.h>
#include <string.h>

#define BLOCK_ALIGN 64 /* every heap block: header padded to this, payload aligned to it */

typedef struct heap_block {
    struct heap_block *next;
} heap_block;

/* The arena's state, set up by its first use in the call (kernel_ctx.h: pd_kernel_ctx.arena),
 * so that the calls that never use it neither set it up nor look at it when they end. */
static inline void arena_open(pd_kernel_ctx *ctx)
{
    if (ctx->arena)
        return;
    ctx->arena = true;
    ctx->pool_used = 0;
    ctx->n_tensors = 0;
    ctx->chunks = NULL;
    ctx->heap = NULL;
}

/* A slot for one more call-owned tensor, undefined. */
static pd_tensor *new_tensor_slot(pd_kernel_ctx *ctx)
{
    pd_tensor *t;
    arena_open(ctx);
    if (ctx->n_tensors < PD__CTX_INLINE_TENSORS) {
        t = &ctx->tensors[ctx->n_tensors++];
    } else {
        pd__tensor_chunk *c = ctx->chunks;
        if (c == NULL || c->used == c->capacity) {
            int32_t cap = c ? c->capacity * 2 : 16;
            pd__tensor_chunk *n = malloc(sizeof *n + (size_t)cap * sizeof(pd_tensor));
            if (n == NULL)
                pd__ctx_throw(PD_ERR_OUT_OF_MEMORY, "out of memory for a call-owned tensor");
            n->next = c;
            n->used = 0;
            n->capacity = cap;
            ctx->chunks = c = n;
        }
        t = &c->tensors[c->used++];
    }
    memset(t, 0, sizeof *t);
    return t;
}

/* Runs a host tensor function that writes *t; throws with its status and message. */
static pd_tensor *checked(pd_status s, pd_tensor *t)
{
    if (s != PD_OK)
        pd__ctx_throw(s == PD_ERR_INVALID_ARGUMENT ? PD_ERR_OP_FAILED : s, "%s", pd_last_error());
    return t;
}

static void *heap_alloc(pd_kernel_ctx *ctx, const char *who, size_t bytes)
{
    size_t rounded = (bytes + BLOCK_ALIGN - 1) & ~(size_t)(BLOCK_ALIGN - 1);
    if (rounded < bytes || rounded > SIZE_MAX - BLOCK_ALIGN)
        pd__ctx_throw(PD_ERR_OUT_OF_MEMORY, "%s: %zu bytes is more than can be allocated", who,
                      bytes);
    arena_open(ctx);
    heap_block *b = aligned_alloc(BLOCK_ALIGN, BLOCK_ALIGN + rounded);
    if (b == NULL)
        pd__ctx_throw(PD_ERR_OUT_OF_MEMORY, "%s: out of memory allocating %zu bytes", who, bytes);
    b->next = ctx->heap;
    ctx->heap = b;
    return (char *)b + BLOCK_ALIGN;
}

void pd__ctx_make_tensor(const char *who, pd_tensor *out, pd_data_type dtype, pd_place place,
                         int32_t ndim, const int64_t *shape)
{
    size_t bytes;
    pd_storage *storage;
    pd_status s = pd__shape_check(who, dtype, ndim, shape, &bytes);
    if (s == PD_OK)
        s = pd__storage_new(who, place, bytes, &storage);
    if (s != PD_OK)
        pd__ctx_throw(s == PD_ERR_INVALID_ARGUMENT ? PD_ERR_OP_FAILED : s, "%s", pd_last_error());
    out->data = storage->ptr;
    out->storage = storage;
    out->dtype = dtype;
    out->ndim = ndim;
    for (int32_t d = 0; d < PD_MAX_DIMS; ++d)
        out->shape[d] = d < ndim ? shape[d] : 0;
    out->place = place;
    out->layout = PD_LAYOUT_DENSE;
    out->reserved = 0;
    out->offset = 0;
    pd__dense_strides(ndim, out->shape, out->strides);
}

pd__out_item *pd__ctx_alloc_items(pd_kernel_ctx *ctx, int32_t n)
{
    arena_open(ctx);
    if (n <= PD__CTX_POOL_ITEMS - ctx->pool_used) {
        pd__out_item *items = &ctx->pool[ctx->pool_used];
        ctx->pool_used += n;
        return items;
    }
    return heap_alloc(ctx, "output items", (size_t)n * sizeof(pd__out_item));
}

pd_tensor *pd__ctx_empty(pd_kernel_ctx *ctx, pd_data_type dtype, pd_place place, int32_t ndim,
                         const int64_t *shape)
{
    pd_tensor *t = new_tensor_slot(ctx);
    pd__ctx_make_tensor("pd_empty", t, dtype, place, ndim, shape);
    return t;
}

pd_tensor *pd__ctx_full(pd_kernel_ctx *ctx, pd_data_type dtype, pd_place place, int32_t ndim,
                        const int64_t *shape, double value)
{
    pd_tensor *t = new_tensor_slot(ctx);
    return checked(pd_tensor_full(t, dtype, place, ndim, shape, value), t);
}

static const pd_tensor *checked_source(const char *who, const pd_tensor *src)
{
    if (!pd_initialized(src))
        pd__ctx_throw(PD_ERR_OP_FAILED, "%s: the source tensor is %s", who,
                      src == NULL ? "NULL" : "undefined or has no memory");
    return src;
}

pd_tensor *pd__ctx_copy_to(pd_kernel_ctx *ctx, const pd_tensor *src, pd_place place)
{
    checked_source("pd_copy_to", src);
    pd_tensor *t = new_tensor_slot(ctx);
    return checked(pd_tensor_copy_to(t, src, place), t);
}

pd_tensor *pd__ctx_cast(pd_kernel_ctx *ctx, const pd_tensor *src, pd_data_type dtype)
{
    checked_source("pd_cast", src);
    pd_tensor *t = new_tensor_slot(ctx);
    return checked(pd_tensor_cast(t, src, dtype), t);
}

pd_tensor *pd__ctx_slice(pd_kernel_ctx *ctx, const pd_tensor *src, int64_t begin, int64_t end)
{
    checked_source("pd_slice", src);
    pd_tensor *t = new_tensor_slot(ctx);
    return checked(pd_tensor_slice(t, src, begin, end), t);
}

pd_tensor *pd__ctx_reshape(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,
                           const int64_t *shape)
{
    checked_source("pd_reshape", src);
    pd_tensor *t = new_tensor_slot(ctx);
    return checked(pd_tensor_reshape(t, src, ndim, shape), t);
}

pd_tensor *pd__ctx_contiguous(pd_kernel_ctx *ctx, const pd_tensor *src)
{
    checked_source("pd_contiguous", src);
    if (pd_is_contiguous(src)) /* src itself, as documented: no reference, no copy */
        return (pd_tensor *)src;
    pd_tensor *t = new_tensor_slot(ctx);
    return checked(pd_tensor_contiguous(t, src), t);
}

pd_tensor *pd__ctx_slice_step(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t axis, int64_t begin,
                              int64_t end, int64_t step)
{
    checked_source("pd_slice_step", src);
    pd_tensor *t = new_tensor_slot(ctx);
    return checked(pd_tensor_slice_step(t, src, axis, begin, end, step), t);
}

pd_tensor *pd__ctx_permute(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,
                           const int32_t *dims)
{
    checked_source("pd_permute", src);
    pd_tensor *t = new_tensor_slot(ctx);
    return checked(pd_tensor_permute(t, src, ndim, dims), t);
}

pd_tensor *pd__ctx_expand(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,
                          const int64_t *shape)
{
    checked_source("pd_expand", src);
    pd_tensor *t = new_tensor_slot(ctx);
    return checked(pd_tensor_expand(t, src, ndim, shape), t);
}

void *pd__ctx_scratch(pd_kernel_ctx *ctx, size_t bytes)
{
    return heap_alloc(ctx, "pd_scratch", bytes);
}

void pd__ctx_arena_release(pd_kernel_ctx *ctx)
{
    if (!ctx->arena)
        return;
    for (int32_t i = 0; i < ctx->n_tensors; ++i)
        pd_tensor_release(&ctx->tensors[i]);
    for (pd__tensor_chunk *c = ctx->chunks, *next; c; c = next) {
        next = c->next;
        for (int32_t i = 0; i < c->used; ++i)
            pd_tensor_release(&c->tensors[i]);
        free(c);
    }
    for (heap_block *b = ctx->heap, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    ctx->arena = false;
}

/* The workspace is a call-owned tensor of bytes on the op's place, so that it is released
 * with the call's other tensors, on success and on error alike. */
void *pd__ctx_workspace(pd_kernel_ctx *ctx)
{
    if (ctx->workspace_made)
        return ctx->workspace;
    const pd_op *op = ctx->op;
    if (op->workspace == NULL)
        pd__ctx_throw(PD_ERR_OP_FAILED,
                      "pd_workspace: the op declares no workspace function; set .workspace in "
                      "its definition");
    if (ctx->phase != PD__PHASE_KERNEL)
        pd__ctx_throw(PD_ERR_OP_FAILED, "pd_workspace: the workspace is for the kernel only");
    int64_t bytes = op->workspace(ctx);
    if (bytes < 0)
        pd__ctx_throw(PD_ERR_OP_FAILED,
                      "its workspace function returned %lld; a byte count must be >= 0",
                      (long long)bytes);
    void *ptr = NULL;
    if (bytes > 0) {
        pd_place place = *pd__ctx_first_input_place(ctx);
        pd_tensor *t = new_tensor_slot(ctx); /* first: a throw here holds no storage yet */
        pd_storage *storage = NULL;
        /* Past 2^48 bytes (256 TiB) no machine has the memory: refused without asking the
         * allocator (some, such as ASan's, abort on absurd sizes instead of failing). */
        pd_status s = (uint64_t)bytes > ((uint64_t)1 << 48)
                          ? pd__fail(PD_ERR_OUT_OF_MEMORY, "more than 2^48 bytes")
                          : pd__storage_new("pd_workspace", place, (size_t)bytes, &storage);
        if (s != PD_OK || storage == NULL)
            pd__ctx_throw(s == PD_ERR_INVALID_ARGUMENT ? PD_ERR_OP_FAILED : s,
                          "cannot allocate the workspace of %lld bytes its workspace function "
                          "asked for (%s)",
                          (long long)bytes, pd_last_error());
        t->data = ptr = storage->ptr;
        t->storage = storage;
        t->dtype = PD_UINT8;
        t->ndim = 1;
        t->shape[0] = bytes;
        t->strides[0] = 1;
        t->place = place;
    }
    ctx->workspace = ptr;
    ctx->workspace_made = true;
    return ptr;
}
