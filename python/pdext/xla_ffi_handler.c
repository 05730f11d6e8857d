/*
 * xla_ffi_handler.c - the one XLA FFI handler through which JAX runs every pdext op
 * (pdext.jax). It is C against the XLA FFI C API that jaxlib ships (xla/ffi/api/c_api.h,
 * jax.ffi.include_dir()), shipped as source in the pdext package and built by pdext's JIT on
 * first use against the headers of the jaxlib in use, then found warm in the JIT cache.
 *
 * An XLA FFI handler receives only its call frame: no user pointer. So pdext.jax registers
 * this same function under one target name per op and passes, as attributes of each call:
 *   pd_op   (s64)   the op's index in this library's table (pdext_xla_ffi_add_op),
 *   pd_name (string) the op's name, checked against the table's op: an executable compiled
 *                   by another process (JAX's persistent cache) must not run another op,
 *   pd_in   (s32[]) tensors per declared input (0: an absent optional input),
 *   pd_out  (s32[]) tensors per declared output,
 * and the op's own attrs under their declared names, typed by pdext.jax from the declaration
 * (s32 -> int, s64 -> int64_t, f32 -> float, f64 -> double, pred -> bool, string ->
 * std::string, arrays -> vectors). XLA attributes have no list of strings: a
 * std::vector<std::string> attr comes as the string attribute "pd_strs_<name>", each item
 * written as <bytes>:<text> ("4:four0:1:x").
 *
 * The inputs are XLA's buffers themselves (pd_tensor structs over them, no storage, no copy),
 * and so are the outputs: XLA's result buffers go to the runner (pd_op_run) as host-given
 * output tensors, which the kernel writes into. A failed call returns an XLA FFI error
 * carrying pdext's message (`op: msg [file:line]`), which JAX raises.
 *
 * This file holds the op table, the attributes, the call and the CPU entry; xla_ffi_cuda.c
 * the CUDA entry (xla_ffi_handler.h is what they share).
 */
#include "xla_ffi_handler.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* The ops registered through pdext.jax, by index. Append-only: a jitted computation holds an
 * index for its whole life, and the Python side keeps each op's library loaded. */
#define PD_XLA_MAX_OPS 4096
static const pd_op *op_table[PD_XLA_MAX_OPS];
static atomic_int op_count;

/* Tensors per call kept on the stack; more go to the heap. */
#define PD_XLA_STACK_TENSORS 32
/* Bytes of attr names (NUL-terminated copies) and strings per call, and items of all
 * std::vector<std::string> attrs of a call. */
#define PD_XLA_TEXT 4096
#define PD_XLA_STRINGS 256
#define PD_XLA_STRS_PREFIX "pd_strs_"

/* Adds op to the table; its index, or -1 when the table is full. Called with the GIL held
 * (Python serializes registrations); handlers read the table concurrently. */
PD_XLA_EXPORT int64_t pdext_xla_ffi_add_op(const pd_op *op)
{
    int n = atomic_load(&op_count);
    if (n >= PD_XLA_MAX_OPS)
        return -1;
    op_table[n] = op;
    atomic_store(&op_count, n + 1);
    return n;
}

/* Whether op declares that a leading dimension may be a batch (PD_OP_LEADING_BATCH, pd_op.h):
 * pdext.jax then hands jax.vmap's whole batch to one call. A definition compiled before
 * pd_op_def had flags (shorter struct_size) declares nothing. */
PD_XLA_EXPORT int pdext_xla_ffi_leading_batch(const pd_op *op)
{
    const pd_op_def *def = pd_op_definition(op);
    size_t end = offsetof(pd_op_def, flags) + sizeof def->flags;
    return def != NULL && def->struct_size >= end && (def->flags & PD_OP_LEADING_BATCH) != 0;
}

/* The FFI API version this handler was compiled against. */
PD_XLA_EXPORT void pdext_xla_ffi_built_version(int *major, int *minor)
{
    *major = XLA_FFI_API_MAJOR;
    *minor = XLA_FFI_API_MINOR;
}

XLA_FFI_Error *pd_xla_ffi_fail(const XLA_FFI_Api *api, XLA_FFI_Error_Code code, const char *message)
{
    XLA_FFI_Error_Create_Args args;
    memset(&args, 0, sizeof args);
    args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    args.message = message;
    args.errc = code;
    return api->XLA_FFI_Error_Create(&args);
}

static pd_data_type dtype_of(XLA_FFI_DataType t)
{
    switch (t) {
    case XLA_FFI_DataType_PRED: return PD_BOOL;
    case XLA_FFI_DataType_S8: return PD_INT8;
    case XLA_FFI_DataType_U8: return PD_UINT8;
    case XLA_FFI_DataType_S16: return PD_INT16;
    case XLA_FFI_DataType_U16: return PD_UINT16;
    case XLA_FFI_DataType_S32: return PD_INT32;
    case XLA_FFI_DataType_U32: return PD_UINT32;
    case XLA_FFI_DataType_S64: return PD_INT64;
    case XLA_FFI_DataType_U64: return PD_UINT64;
    case XLA_FFI_DataType_F16: return PD_FLOAT16;
    case XLA_FFI_DataType_BF16: return PD_BFLOAT16;
    case XLA_FFI_DataType_F32: return PD_FLOAT32;
    case XLA_FFI_DataType_F64: return PD_FLOAT64;
    case XLA_FFI_DataType_C64: return PD_COMPLEX64;
    case XLA_FFI_DataType_C128: return PD_COMPLEX128;
    default: return PD_UNDEFINED;
    }
}

/* What one call holds besides its tensors. */
typedef struct call {
    const XLA_FFI_Api *api;
    int64_t op_index;
    const XLA_FFI_ByteSpan *op_name;
    const XLA_FFI_Array *in_counts, *out_counts;
    pd_attr attrs[PD_MAX_ATTRS];
    int32_t n_attrs;
    char text[PD_XLA_TEXT]; /* NUL-terminated names and strings of the attrs */
    size_t text_used;
    bool text_full; /* copy_text found no room */
    const char *strings[PD_XLA_STRINGS];
    int32_t n_strings;
    char message[1024];
} call;

static const char *copy_text(call *c, const char *p, size_t n)
{
    if (n + 1 > sizeof c->text - c->text_used) {
        c->text_full = true;
        return NULL;
    }
    char *dst = c->text + c->text_used;
    memcpy(dst, p, n);
    dst[n] = '\0';
    c->text_used += n + 1;
    return dst;
}

static bool span_is(const XLA_FFI_ByteSpan *s, const char *name)
{
    return s->len == strlen(name) && memcmp(s->ptr, name, s->len) == 0;
}

/* A std::vector<std::string> attr from its encoding (see the top of the file). */
static bool strings_of(const XLA_FFI_ByteSpan *s, call *c, pd_attr *a)
{
    a->type = PD_ATTR_STRINGS;
    a->v.strings = &c->strings[c->n_strings];
    a->count = 0;
    for (size_t at = 0; at < s->len;) {
        size_t n = 0;
        while (at < s->len && s->ptr[at] >= '0' && s->ptr[at] <= '9' && n < s->len)
            n = n * 10 + (size_t)(s->ptr[at++] - '0');
        if (at >= s->len || s->ptr[at] != ':' || n > s->len - at - 1 ||
            c->n_strings == PD_XLA_STRINGS)
            return false;
        const char *item = copy_text(c, s->ptr + at + 1, n);
        if (item == NULL)
            return false;
        c->strings[c->n_strings++] = item;
        a->count++;
        at += 1 + n;
    }
    return true;
}

/* One XLA attribute as a pd_attr (its name already set); false for a type pdext has none of. */
static bool attr_of(XLA_FFI_AttrType type, void *value, call *c, pd_attr *a)
{
    if (type == XLA_FFI_AttrType_STRING) {
        const XLA_FFI_ByteSpan *s = value;
        a->type = PD_ATTR_STRING;
        a->v.s = copy_text(c, s->ptr, s->len);
        return a->v.s != NULL;
    }
    if (type == XLA_FFI_AttrType_SCALAR) {
        const XLA_FFI_Scalar *s = value;
        switch (s->dtype) {
        case XLA_FFI_DataType_PRED:
            a->type = PD_ATTR_BOOL, a->v.b = *(const bool *)s->value;
            return true;
        case XLA_FFI_DataType_S32:
            a->type = PD_ATTR_INT, a->v.i = *(const int32_t *)s->value;
            return true;
        case XLA_FFI_DataType_S64:
            a->type = PD_ATTR_INT64, a->v.i64 = *(const int64_t *)s->value;
            return true;
        case XLA_FFI_DataType_F32:
            a->type = PD_ATTR_FLOAT, a->v.f = *(const float *)s->value;
            return true;
        case XLA_FFI_DataType_F64:
            a->type = PD_ATTR_DOUBLE, a->v.d = *(const double *)s->value;
            return true;
        default: return false;
        }
    }
    if (type == XLA_FFI_AttrType_ARRAY) {
        const XLA_FFI_Array *arr = value;
        a->count = (int32_t)arr->size;
        switch (arr->dtype) {
        case XLA_FFI_DataType_S32: a->type = PD_ATTR_INTS, a->v.ints = arr->data; return true;
        case XLA_FFI_DataType_S64: a->type = PD_ATTR_INT64S, a->v.int64s = arr->data; return true;
        case XLA_FFI_DataType_F32: a->type = PD_ATTR_FLOATS, a->v.floats = arr->data; return true;
        default: return false;
        }
    }
    return false;
}

/* Splits the call's attributes into pdext.jax's own and the op's. NULL, or what is wrong. */
static const char *read_attrs(const XLA_FFI_Attrs *attrs, call *c)
{
    c->op_index = -1;
    for (int64_t i = 0; i < attrs->size; ++i) {
        const XLA_FFI_ByteSpan *name = attrs->names[i];
        XLA_FFI_AttrType type = attrs->types[i];
        void *value = attrs->attrs[i];
        if (span_is(name, "pd_op")) {
            const XLA_FFI_Scalar *s = value;
            if (type != XLA_FFI_AttrType_SCALAR || s->dtype != XLA_FFI_DataType_S64)
                return "attribute pd_op must be an s64 scalar";
            c->op_index = *(const int64_t *)s->value;
        } else if (span_is(name, "pd_name")) {
            if (type != XLA_FFI_AttrType_STRING)
                return "attribute pd_name must be a string";
            c->op_name = value;
        } else if (span_is(name, "pd_in") || span_is(name, "pd_out")) {
            const XLA_FFI_Array *arr = value;
            if (type != XLA_FFI_AttrType_ARRAY || arr->dtype != XLA_FFI_DataType_S32)
                return "attributes pd_in and pd_out must be s32 arrays";
            *(span_is(name, "pd_in") ? &c->in_counts : &c->out_counts) = arr;
        } else {
            if (c->n_attrs == PD_MAX_ATTRS)
                return "too many attributes";
            pd_attr *a = &c->attrs[c->n_attrs++];
            memset(a, 0, sizeof *a);
            size_t skip = strlen(PD_XLA_STRS_PREFIX);
            bool strs = name->len > skip && memcmp(name->ptr, PD_XLA_STRS_PREFIX, skip) == 0 &&
                        type == XLA_FFI_AttrType_STRING;
            a->name = strs ? copy_text(c, name->ptr + skip, name->len - skip)
                           : copy_text(c, name->ptr, name->len);
            bool ok = a->name != NULL &&
                      (strs ? strings_of(value, c, a) : attr_of(type, value, c, a));
            if (!ok && c->text_full) {
                snprintf(c->message, sizeof c->message,
                         "attribute '%.*s': the attrs' names and strings of one call exceed "
                         "pdext.jax's %d bytes",
                         (int)name->len, name->ptr, PD_XLA_TEXT);
                return c->message;
            }
            if (!ok) {
                snprintf(c->message, sizeof c->message,
                         "attribute '%.*s' has a type pdext cannot pass to an op (or a malformed "
                         "encoding)",
                         (int)name->len, name->ptr);
                return c->message;
            }
        }
    }
    if (c->op_index < 0 || c->op_index >= atomic_load(&op_count) || c->op_name == NULL ||
        c->in_counts == NULL || c->out_counts == NULL)
        return "the call lacks pdext.jax's attributes pd_op, pd_name, pd_in and pd_out (or names "
               "an op this process did not register)";
    if (!span_is(c->op_name, pd_op_name(op_table[c->op_index]))) {
        snprintf(c->message, sizeof c->message,
                 "the call is for op '%.*s', but pdext.jax registered '%s' under its index in "
                 "this process: was it compiled by another process?",
                 (int)c->op_name->len, c->op_name->ptr, pd_op_name(op_table[c->op_index]));
        return c->message;
    }
    return NULL;
}

/* t: a dense tensor over XLA's buffer b on `place` (no storage reference: XLA owns the
 * memory). */
static bool tensor_over(const XLA_FFI_Buffer *b, pd_place place, pd_tensor *t)
{
    memset(t, 0, sizeof *t);
    t->dtype = dtype_of(b->dtype);
    if (t->dtype == PD_UNDEFINED || b->rank > PD_MAX_DIMS)
        return false;
    t->data = b->data;
    t->ndim = (int32_t)b->rank;
    t->place = place;
    t->layout = PD_LAYOUT_DENSE;
    int64_t s = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
        t->shape[d] = b->dims[d];
        t->strides[d] = s;
        s *= b->dims[d] > 0 ? b->dims[d] : 1;
    }
    return true;
}

static int64_t numel(const pd_tensor *t)
{
    int64_t n = 1;
    for (int32_t d = 0; d < t->ndim; ++d)
        n *= t->shape[d];
    return n;
}

/* Asks the kernel to back the large output buffer t (not yet written: XLA hands every call
 * fresh result memory) with transparent huge pages, as numpy does for its own large arrays.
 * Where THP is in "madvise" mode, XLA's fresh 64 MiB otherwise costs 16 Ki page faults on first
 * touch, which made a jitted relu take 3x the time of the same relu on memory it had written
 * before. A hint only: the memory stays XLA's, its contents are not touched, and a failure
 * changes nothing. */
static void hint_huge_pages(const pd_tensor *t)
{
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20, least = (uintptr_t)4 << 20;
    uintptr_t begin = (uintptr_t)t->data;
    uintptr_t end = begin + (uintptr_t)numel(t) * pd_dtype_size(t->dtype);
    if (!pd_place_is_host(t->place) || end - begin < least)
        return;
    begin = (begin + huge - 1) & ~(huge - 1);
    end &= ~(huge - 1);
    if (end > begin)
        (void)madvise((void *)begin, end - begin, MADV_HUGEPAGE);
#else
    (void)t;
#endif
}

/* Copies output t (made by the runner: an output with an empty item) into XLA's result
 * buffer b, which trace-time inference sized; NULL, or what differs. */
static const char *store(const pd_op *op, int32_t o, const pd_tensor *t, const XLA_FFI_Buffer *b,
                         call *c)
{
    bool same = t->dtype == dtype_of(b->dtype) && t->ndim == b->rank;
    for (int32_t d = 0; same && d < t->ndim; ++d)
        same = t->shape[d] == b->dims[d];
    if (!same) {
        snprintf(c->message, sizeof c->message,
                 "%s: output %d came out as %s of rank %d, not as its trace-time inference said "
                 "(XLA's result buffer): the op's infer functions disagree with its kernel",
                 pd_op_name(op), (int)o, pd_dtype_name(t->dtype), (int)t->ndim);
        return c->message;
    }
    size_t bytes = (size_t)numel(t) * pd_dtype_size(t->dtype);
    if (bytes == 0)
        return NULL;
    if (!pd_place_is_host(t->place)) {
        snprintf(c->message, sizeof c->message,
                 "%s: output %d is device memory that pdext.jax made outside XLA's result "
                 "buffer; only host memory is copied in after the call",
                 pd_op_name(op), (int)o);
        return c->message;
    }
    if (pd_is_contiguous(t)) {
        memcpy(b->data, t->data, bytes);
        return NULL;
    }
    pd_tensor dense = PD_TENSOR_UNDEFINED;
    if (pd_tensor_contiguous(&dense, t) != PD_OK)
        return pd_last_error();
    memcpy(b->data, dense.data, bytes);
    pd_tensor_release(&dense);
    return NULL;
}

static XLA_FFI_Error *run(XLA_FFI_CallFrame *frame, pd_place place, call *c)
{
    const XLA_FFI_Api *api = frame->api;
    const char *bad = read_attrs(&frame->attrs, c);
    if (bad != NULL)
        return pd_xla_ffi_fail(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, bad);
    const pd_op *op = op_table[c->op_index];
    int32_t n_in = (int32_t)c->in_counts->size, n_out = (int32_t)c->out_counts->size;
    const int32_t *in_counts = c->in_counts->data, *out_counts = c->out_counts->data;
    int64_t total_in = 0, total_out = 0;
    for (int32_t i = 0; i < n_in; ++i)
        total_in += in_counts[i];
    for (int32_t o = 0; o < n_out; ++o)
        total_out += out_counts[o];
    if (n_in > PD_MAX_INPUTS || n_out > PD_MAX_OUTPUTS || total_in != frame->args.size ||
        total_out != frame->rets.size) {
        snprintf(c->message, sizeof c->message,
                 "%s: the call has %lld operands and %lld results, but pd_in / pd_out say %lld "
                 "and %lld",
                 pd_op_name(op), (long long)frame->args.size, (long long)frame->rets.size,
                 (long long)total_in, (long long)total_out);
        return pd_xla_ffi_fail(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, c->message);
    }
    pd_tensor stack[PD_XLA_STACK_TENSORS];
    int64_t n_tensors = total_in + total_out;
    pd_tensor *tensors = n_tensors <= PD_XLA_STACK_TENSORS
                             ? stack
                             : calloc((size_t)n_tensors, sizeof(pd_tensor));
    if (tensors == NULL)
        return pd_xla_ffi_fail(api, XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, "pdext: out of memory");
    pd_arg in[PD_MAX_INPUTS], out[PD_MAX_OUTPUTS];
    XLA_FFI_Error *err = NULL;
    int64_t k = 0;
    for (int32_t i = 0; i < n_in; ++i) {
        in[i] = pd_arg_named(NULL, &tensors[k], in_counts[i]);
        for (int32_t j = 0; j < in_counts[i]; ++j, ++k)
            if (!tensor_over(frame->args.args[k], place, &tensors[k])) {
                snprintf(c->message, sizeof c->message,
                         "%s: operand %lld has a dtype or rank pdext has no tensor for",
                         pd_op_name(op), (long long)k);
                err = pd_xla_ffi_fail(api, XLA_FFI_Error_Code_INVALID_ARGUMENT, c->message);
                goto done;
            }
    }
    /* Outputs go straight into XLA's result buffers, given to the runner as defined tensors
     * over that memory (pd_op_run's host-given output tensors): kernels write into them
     * (pd_output), and the runner copies in what a kernel set otherwise. An output with an
     * empty item (XLA may give that no memory) is left to the runner to make, and copied
     * after (store). */
    bool direct[PD_MAX_OUTPUTS];
    for (int32_t o = 0, r = 0; o < n_out; ++o) {
        out[o] = pd_arg_named(NULL, &tensors[k], out_counts[o]);
        direct[o] = true;
        for (int32_t j = 0; j < out_counts[o]; ++j) {
            pd_tensor *t = &tensors[k + j];
            if (!tensor_over(frame->rets.rets[r + j], place, t) || t->data == NULL || numel(t) == 0)
                direct[o] = false;
        }
        if (!direct[o])
            memset(&tensors[k], 0, sizeof(pd_tensor) * (size_t)out_counts[o]);
        else
            for (int32_t j = 0; j < out_counts[o]; ++j)
                hint_huge_pages(&tensors[k + j]);
        k += out_counts[o];
        r += out_counts[o];
    }
    pd_status st = pd_op_run_into(op, in, n_in, c->attrs, c->n_attrs, out, n_out);
    if (st != PD_OK) {
        err = pd_xla_ffi_fail(api,
                              st == PD_ERR_OUT_OF_MEMORY ? XLA_FFI_Error_Code_RESOURCE_EXHAUSTED
                                                         : XLA_FFI_Error_Code_INVALID_ARGUMENT,
                              pd_last_error());
        goto done;
    }
    for (int32_t o = 0, r = 0; o < n_out; ++o) {
        if (direct[o]) {
            r += out_counts[o];
            continue;
        }
        for (int32_t j = 0; j < out_counts[o]; ++j, ++r) {
            pd_tensor *t = &out[o].tensors[j];
            const char *why = j < out[o].count ? store(op, o, t, frame->rets.rets[r], c)
                                               : "an output the op left unset";
            if (why != NULL && err == NULL)
                err = pd_xla_ffi_fail(api, XLA_FFI_Error_Code_INTERNAL, why);
            pd_tensor_release(t);
        }
    }
done:
    if (tensors != stack)
        free(tensors);
    return err;
}

XLA_FFI_Error *pd_xla_ffi_prepare(XLA_FFI_CallFrame *frame, bool *execute)
{
    *execute = false;
    /* XLA asks a handler, at registration, which API version and traits it has. */
    for (XLA_FFI_Extension_Base *e = frame->extension_start; e != NULL; e = e->next) {
        if (e->type == XLA_FFI_Extension_Metadata) {
            XLA_FFI_Metadata *m = ((XLA_FFI_Metadata_Extension *)e)->metadata;
            m->api_version.major_version = XLA_FFI_API_MAJOR;
            m->api_version.minor_version = XLA_FFI_API_MINOR;
            m->traits = 0; /* not for CUDA graphs: a call may allocate and wait */
            return NULL;
        }
    }
    const XLA_FFI_Api *api = frame->api;
    if (api->api_version.major_version != XLA_FFI_API_MAJOR ||
        api->api_version.minor_version < XLA_FFI_API_MINOR) {
        char message[256];
        snprintf(message, sizeof message,
                 "pdext.jax: the XLA FFI API of this jaxlib is %d.%d, older than the %d.%d the "
                 "pdext handler was built against",
                 api->api_version.major_version, api->api_version.minor_version, XLA_FFI_API_MAJOR,
                 XLA_FFI_API_MINOR);
        return pd_xla_ffi_fail(api, XLA_FFI_Error_Code_FAILED_PRECONDITION, message);
    }
    *execute = frame->stage == XLA_FFI_ExecutionStage_EXECUTE;
    return NULL;
}

XLA_FFI_Error *pd_xla_ffi_run(XLA_FFI_CallFrame *frame, pd_place place)
{
    call c;
    c.api = frame->api;
    c.in_counts = c.out_counts = NULL;
    c.op_name = NULL;
    c.n_attrs = 0;
    c.text_used = 0;
    c.text_full = false;
    c.n_strings = 0;
    return run(frame, place, &c);
}

/* The handler of every pdext op on the CPU (see the top of the file). */
PD_XLA_EXPORT XLA_FFI_Error *pdext_xla_ffi_handler(XLA_FFI_CallFrame *frame)
{
    bool execute;
    XLA_FFI_Error *err = pd_xla_ffi_prepare(frame, &execute);
    return execute ? pd_xla_ffi_run(frame, pd_place_cpu()) : err;
}
