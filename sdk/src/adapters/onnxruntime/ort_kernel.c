/*
 * ort_kernel.c - the kernel of a pdext op in ONNX Runtime: created once per graph node, run for
 * each session.run.
 *
 * Creation reads the node's attributes by the op's declared names and types (an ONNX INT for
 * bool, int and int64_t; FLOAT for float and double; STRING; INTS for vector<int> and
 * vector<int64_t>; FLOATS for vector<float>), taking the declared default when the node lacks
 * one. A missing attribute without a default, or one of another ONNX type, fails the kernel's
 * creation, hence the session's, naming the node, the op and the attribute.
 *
 * Compute binds ORT's inputs to the declared inputs in order (a last vector input takes the
 * rest, an absent optional input none), wraps each as a pd_tensor over ORT's own buffer (no
 * copy, no allocation: a tensor without storage, as pdext.h allows a host to fill by hand), and
 * runs the op through the one runner. Outputs: ORT allocates them first, with the shapes
 * pd_op_infer gives, and pd_op_run_into has the op write its results there (no copy; an output
 * the kernel sets another way is copied in by the runner). For small inputs (SMALL_CALL_BYTES),
 * and when the op's outputs are known only to its kernel (pd_op_infer refuses), pd_op_run makes
 * them instead and each result is copied once into the output ORT allocates with the result's
 * shape. Any failure becomes ORT's error status carrying pdext's message.
 *
 * The CUDA variant of an op (ort_register.c, for libraries with CUDA code) gets ORT's GPU
 * tensors (on the device ORT's memory info names) and runs on ORT's compute stream
 * (KernelContext_GetGPUComputeStream), wrapped as a pdext stream and made current for the call,
 * so its kernels queue after the node's inputs and before ORT's next work.
 */
#include "ort_adapter.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Calls whose inputs hold at most this many bytes (on the CPU) have the op make its outputs
 * and copy them into ORT's: asking pd_op_infer for the shapes first costs more than copying a
 * few KiB (callgrind, one-element relu: about 1100 instructions more per call). */
#define SMALL_CALL_BYTES 4096

/* Tensors of a call held on the stack; more go to the heap. */
#define LOCAL_TENSORS 16

typedef struct ort_kernel {
    const pd__ort_op *o;
    char *node; /* the node's name, for messages */
    pd_attr attrs[PD_MAX_ATTRS];
    void *owned[PD_MAX_ATTRS]; /* strings and arrays read from the node */
    /* The CUDA variant: pdext's stream over the first compute stream ORT gave, kept for the
     * node's later calls (ORT hands the same one); another stream gets a wrapper per call. */
    pthread_mutex_t stream_lock;
    pd_stream_t *stream;
    void *stream_handle;
    pd_place stream_place;
    int out_elem[PD_MAX_OUTPUTS]; /* ORT's element type of each output, once checked (0: not) */
} ort_kernel;

static void kernel_free(ort_kernel *k)
{
    if (k == NULL)
        return;
    pd_stream_destroy(k->stream); /* waits for the node's last work on it */
    pthread_mutex_destroy(&k->stream_lock);
    for (int32_t i = 0; i < PD_MAX_ATTRS; ++i)
        free(k->owned[i]);
    free(k->node);
    free(k);
}

void pd__ort_kernel_destroy(void *kernel) { kernel_free(kernel); }

/* The node's name ("" when ORT gives none). */
static char *node_name(const pd_ort_api *api, const pd_ort_kernel_info *info)
{
    size_t size = 0;
    pd_ort_status *st = api->KernelInfo_GetNodeName(info, NULL, &size);
    char *name = NULL;
    if (st == NULL && size > 0 && (name = calloc(size, 1)) != NULL)
        st = api->KernelInfo_GetNodeName(info, name, &size);
    if (st != NULL) {
        api->ReleaseStatus(st);
        free(name);
        name = NULL;
    }
    return name ? name : calloc(1, 1);
}

/* The ONNX attribute type the node gives `name` as, or NULL when it has none. */
static const char *node_attr_type(const pd_ort_api *api, const pd_ort_kernel_info *info,
                                  const char *name)
{
    int64_t i;
    float f;
    size_t n = 0;
    pd_ort_status *st;
    if ((st = api->KernelInfoGetAttribute_int64(info, name, &i)) == NULL)
        return "INT";
    api->ReleaseStatus(st);
    if ((st = api->KernelInfoGetAttribute_float(info, name, &f)) == NULL)
        return "FLOAT";
    api->ReleaseStatus(st);
    if ((st = api->KernelInfoGetAttribute_string(info, name, NULL, &n)) == NULL)
        return "STRING";
    api->ReleaseStatus(st);
    if ((st = api->KernelInfoGetAttributeArray_int64(info, name, NULL, &n)) == NULL)
        return "INTS";
    api->ReleaseStatus(st);
    if ((st = api->KernelInfoGetAttributeArray_float(info, name, NULL, &n)) == NULL)
        return "FLOATS";
    api->ReleaseStatus(st);
    return NULL;
}

/* The ONNX attribute type that carries a pdext attr type; NULL: none ORT's kernel API reads. */
static const char *onnx_type_of(pd_attr_type t)
{
    switch (t) {
    case PD_ATTR_BOOL:
    case PD_ATTR_INT:
    case PD_ATTR_INT64: return "INT";
    case PD_ATTR_FLOAT:
    case PD_ATTR_DOUBLE: return "FLOAT";
    case PD_ATTR_STRING: return "STRING";
    case PD_ATTR_INTS:
    case PD_ATTR_INT64S: return "INTS";
    case PD_ATTR_FLOATS: return "FLOATS";
    default: return NULL;
    }
}

/* Reads attr a from the node into *out (with k->owned[slot] for its memory); NULL or why not. */
static pd_ort_status *read_attr(ort_kernel *k, const pd_ort_kernel_info *info,
                                const pd_attr_info *a, int32_t slot, pd_attr *out)
{
    const pd_ort_api *api = k->o->api;
    const char *op = pd_op_name(k->o->op);
    memset(out, 0, sizeof *out);
    out->name = a->name;
    out->type = a->type;
    pd_ort_status *st = NULL;
    int64_t i64 = 0;
    float f = 0;
    size_t n = 0;
    switch (a->type) {
    case PD_ATTR_BOOL:
    case PD_ATTR_INT:
    case PD_ATTR_INT64:
        if ((st = api->KernelInfoGetAttribute_int64(info, a->name, &i64)) != NULL)
            break;
        if (a->type == PD_ATTR_BOOL)
            out->v.b = i64 != 0;
        else if (a->type == PD_ATTR_INT64)
            out->v.i64 = i64;
        else if (i64 < INT32_MIN || i64 > INT32_MAX)
            return pd__ort_fail(api, PD_ORT_INVALID_ARGUMENT,
                                "pdext op '%s' (node '%s'): attr '%s' is %lld, out of the range "
                                "of its declared type int",
                                op, k->node, a->name, (long long)i64);
        else
            out->v.i = (int32_t)i64;
        return NULL;
    case PD_ATTR_FLOAT:
    case PD_ATTR_DOUBLE:
        if ((st = api->KernelInfoGetAttribute_float(info, a->name, &f)) != NULL)
            break;
        if (a->type == PD_ATTR_FLOAT)
            out->v.f = f;
        else
            out->v.d = f;
        return NULL;
    case PD_ATTR_STRING: {
        if ((st = api->KernelInfoGetAttribute_string(info, a->name, NULL, &n)) != NULL)
            break;
        char *s = calloc(n + 1, 1);
        if (s == NULL)
            return pd__ort_fail(api, PD_ORT_FAIL, "pdext op '%s': out of memory", op);
        k->owned[slot] = s;
        if ((st = api->KernelInfoGetAttribute_string(info, a->name, s, &n)) != NULL)
            break;
        out->v.s = s;
        return NULL;
    }
    case PD_ATTR_INTS:
    case PD_ATTR_INT64S:
    case PD_ATTR_FLOATS: {
        bool floats = a->type == PD_ATTR_FLOATS;
        st = floats ? api->KernelInfoGetAttributeArray_float(info, a->name, NULL, &n)
                    : api->KernelInfoGetAttributeArray_int64(info, a->name, NULL, &n);
        if (st != NULL)
            break;
        void *v = calloc(n ? n : 1, floats ? sizeof(float) : sizeof(int64_t));
        if (v == NULL)
            return pd__ort_fail(api, PD_ORT_FAIL, "pdext op '%s': out of memory", op);
        k->owned[slot] = v;
        st = floats ? api->KernelInfoGetAttributeArray_float(info, a->name, v, &n)
                    : api->KernelInfoGetAttributeArray_int64(info, a->name, v, &n);
        if (st != NULL)
            break;
        out->count = (int32_t)n;
        if (a->type == PD_ATTR_FLOATS) {
            out->v.floats = v;
        } else if (a->type == PD_ATTR_INT64S) {
            out->v.int64s = v;
        } else { /* vector<int>: narrowed in place, each checked */
            int64_t *wide = v;
            int32_t *narrow = v;
            for (size_t j = 0; j < n; ++j) {
                if (wide[j] < INT32_MIN || wide[j] > INT32_MAX)
                    return pd__ort_fail(api, PD_ORT_INVALID_ARGUMENT,
                                        "pdext op '%s' (node '%s'): item %zu of attr '%s' is "
                                        "%lld, out of the range of int",
                                        op, k->node, j, a->name, (long long)wide[j]);
                narrow[j] = (int32_t)wide[j];
            }
            out->v.ints = narrow;
        }
        return NULL;
    }
    default: break;
    }
    if (st != NULL)
        api->ReleaseStatus(st);
    /* Not read: absent, of another ONNX type, or of a type ORT's kernel API cannot read. */
    const char *has = node_attr_type(api, info, a->name);
    const char *wants = onnx_type_of(a->type);
    if (has != NULL && wants != NULL)
        return pd__ort_fail(api, PD_ORT_INVALID_ARGUMENT,
                            "pdext op '%s' (node '%s'): attr '%s' is an ONNX %s in the node, but "
                            "the op declares '%s', which takes an ONNX %s",
                            op, k->node, a->name, has, a->decl, wants);
    if (a->has_default) {
        *out = a->default_value;
        return NULL;
    }
    if (wants == NULL)
        return pd__ort_fail(api, PD_ORT_NOT_IMPLEMENTED,
                            "pdext op '%s' (node '%s'): attr '%s' ('%s') has no default, and "
                            "ONNX Runtime's kernel API cannot read a list of strings from a node",
                            op, k->node, a->name, a->decl);
    return pd__ort_fail(api, PD_ORT_INVALID_ARGUMENT,
                        "pdext op '%s' (node '%s'): the node has no attr '%s', which the op "
                        "declares as '%s' without a default; give the node an ONNX %s attribute "
                        "'%s'",
                        op, k->node, a->name, a->decl, wants, a->name);
}

pd_ort_status *pd__ort_kernel_create(const pd_ort_custom_op *op, const void *api_table,
                                     const pd_ort_kernel_info *info, void **kernel)
{
    (void)api_table; /* the same table the library resolved at registration */
    const pd__ort_op *o = (const pd__ort_op *)op;
    ort_kernel *k = calloc(1, sizeof *k);
    if (k != NULL)
        pthread_mutex_init(&k->stream_lock, NULL);
    if (k == NULL || (k->node = node_name(o->api, info)) == NULL) {
        kernel_free(k);
        return pd__ort_fail(o->api, PD_ORT_FAIL, "pdext op '%s': out of memory", pd_op_name(o->op));
    }
    k->o = o;
    for (int32_t i = 0; i < o->n_attrs; ++i) {
        pd_ort_status *st = read_attr(k, info, &o->attrs[i], i, &k->attrs[i]);
        if (st != NULL) {
            kernel_free(k);
            return st;
        }
    }
    *kernel = k;
    return NULL;
}

/* --- compute ------------------------------------------------------------------------------ */

/* ORT's message as ours, naming the node; releases `st`. */
static pd_ort_status *relay(const ort_kernel *k, pd_ort_status *st, const char *what)
{
    const pd_ort_api *api = k->o->api;
    pd_ort_status *out = pd__ort_fail(api, api->GetErrorCode(st),
                                      "pdext op '%s' (node '%s'): %s: %s", pd_op_name(k->o->op),
                                      k->node, what, api->GetErrorMessage(st));
    api->ReleaseStatus(st);
    return out;
}

/* The place of ORT value v: the CPU, or for the CUDA variant the GPU its memory is on. */
static pd_ort_status *value_place(const ort_kernel *k, const pd_ort_value *v, pd_place *place)
{
    *place = pd_place_cpu();
    if (!k->o->cuda)
        return NULL;
    const pd_ort_api *api = k->o->api;
    const pd_ort_memory_info *mem = NULL;
    int device = 0;
    pd_ort_status *st = api->GetTensorMemoryInfo(v, &mem);
    if (st == NULL)
        st = api->MemoryInfoGetId(mem, &device);
    if (st != NULL)
        return relay(k, st, "reading where a tensor is");
    *place = pd_place_gpu(device);
    return NULL;
}

/* Wraps ORT input `index` (NULL value: an absent optional input) over its buffer. */
static pd_ort_status *wrap_input(const ort_kernel *k, pd_ort_kernel_context *ctx, size_t index,
                                 pd_tensor *t, bool *present)
{
    const pd_ort_api *api = k->o->api;
    const pd_ort_value *v = NULL;
    pd_ort_type_shape *info = NULL;
    int elem = 0;
    size_t ndim = 0;
    pd_ort_status *st = api->KernelContext_GetInput(ctx, index, &v);
    *present = st == NULL && v != NULL;
    if (st != NULL || v == NULL)
        return st ? relay(k, st, "reading an input") : NULL;
    memset(t, 0, sizeof *t);
    if ((st = api->GetTensorTypeAndShape(v, &info)) == NULL &&
        (st = api->GetTensorElementType(info, &elem)) == NULL &&
        (st = api->GetDimensionsCount(info, &ndim)) == NULL && ndim <= PD_MAX_DIMS)
        st = api->GetDimensions(info, t->shape, ndim);
    if (info)
        api->ReleaseTensorTypeAndShapeInfo(info);
    if (st == NULL && ndim <= PD_MAX_DIMS)
        st = api->GetTensorMutableData((pd_ort_value *)v, &t->data);
    if (st != NULL)
        return relay(k, st, "reading an input");
    t->dtype = pd__ort_dtype_of(elem);
    if (ndim > PD_MAX_DIMS || t->dtype == PD_UNDEFINED)
        return pd__ort_fail(api, PD_ORT_INVALID_ARGUMENT,
                            "pdext op '%s' (node '%s'): input %zu is a %zu-d tensor of %s; pdext "
                            "takes up to %d dimensions and no strings",
                            pd_op_name(k->o->op), k->node, index, ndim, pd__ort_elem_name(elem),
                            PD_MAX_DIMS);
    t->ndim = (int32_t)ndim;
    t->layout = PD_LAYOUT_DENSE;
    return value_place(k, v, &t->place);
}

/* ORT's output `index` allocated with t's shape; its buffer into *data after the element type
 * ORT gave the node's output is checked against t's dtype. */
static pd_ort_status *ort_output(ort_kernel *k, pd_ort_kernel_context *ctx, size_t index,
                                 const pd_tensor *t, void **data)
{
    const pd_ort_api *api = k->o->api;
    pd_ort_value *v = NULL;
    pd_ort_type_shape *info = NULL;
    int want = pd__ort_elem_of(t->dtype);
    /* The node's output types are fixed for the session: once one matched, later calls making
     * the same type skip asking ORT (a type-and-shape object ORT allocates per ask). */
    int elem = index < PD_MAX_OUTPUTS ? __atomic_load_n(&k->out_elem[index], __ATOMIC_RELAXED) : 0;
    bool known = elem != PD_ORT_ELEM_UNDEFINED && elem == want;
    pd_ort_status *st = api->KernelContext_GetOutput(ctx, index, t->shape, (size_t)t->ndim, &v);
    if (st == NULL && !known && (st = api->GetTensorTypeAndShape(v, &info)) == NULL)
        st = api->GetTensorElementType(info, &elem);
    if (info)
        api->ReleaseTensorTypeAndShapeInfo(info);
    if (st == NULL)
        st = api->GetTensorMutableData(v, data);
    if (st != NULL)
        return relay(k, st, "making an output");
    if (!known && elem == want && index < PD_MAX_OUTPUTS)
        __atomic_store_n(&k->out_elem[index], elem, __ATOMIC_RELAXED);
    if (elem != want)
        return pd__ort_fail(api, PD_ORT_INVALID_ARGUMENT,
                            "pdext op '%s' (node '%s'): output %zu is %s, but ONNX Runtime typed "
                            "the node's output %s (from its inputs)",
                            pd_op_name(k->o->op), k->node, index, pd_dtype_name(t->dtype),
                            pd__ort_elem_name(elem));
    return NULL;
}

/* Copies result t (made by the op) into ORT output `index`, allocated with t's shape. */
static pd_ort_status *hand_output(ort_kernel *k, pd_ort_kernel_context *ctx, size_t index,
                                  const pd_tensor *t)
{
    void *dst = NULL;
    pd_ort_status *st = ort_output(k, ctx, index, t, &dst);
    if (st != NULL || pd_nbytes(t) == 0)
        return st;
    if (pd_is_contiguous(t)) {
        memcpy(dst, t->data, pd_nbytes(t));
        return NULL;
    }
    pd_tensor dense = PD_TENSOR_UNDEFINED;
    if (pd_tensor_contiguous(&dense, t) != PD_OK)
        return pd__ort_fail(k->o->api, PD_ORT_FAIL, "pdext op '%s' (node '%s'): %s",
                            pd_op_name(k->o->op), k->node, pd_last_error());
    memcpy(dst, dense.data, pd_nbytes(&dense));
    pd_tensor_release(&dense);
    return NULL;
}

/*
 * Makes ORT's outputs before the call, so that the op writes its results into them (no copy):
 * their shapes come from pd_op_infer on the bound inputs and the node's attrs, ORT allocates
 * each, and each becomes the defined tensor (data, dtype, shape, place; no storage) that
 * pd_op_run_into writes that output into; dest[j] marks them (an optional output the op leaves
 * unset stays PD_TENSOR_UNDEFINED). *made says whether it did: not when the op's outputs
 * cannot be known before its kernel runs (pd_op_infer refuses), nor when their count differs
 * from the node's; the call then makes them and they are copied (hand_output).
 */
static pd_ort_status *make_outputs(ort_kernel *k, pd_ort_kernel_context *ctx, const pd_arg *in_args,
                                   pd_arg *out_args, int32_t n_out_args, pd_tensor *outs,
                                   bool *dest, size_t n_out, bool *made)
{
    const pd__ort_op *o = k->o;
    *made = false;
    pd_arg probe[PD_MAX_OUTPUTS];
    memcpy(probe, out_args, (size_t)n_out_args * sizeof *probe);
    if (pd_op_infer(o->op, in_args, o->n_inputs, k->attrs, o->n_attrs, probe, n_out_args) != PD_OK)
        goto unmade;
    for (int32_t i = 0; i < n_out_args; ++i)
        if (probe[i].count != out_args[i].count)
            goto unmade;
    for (size_t j = 0; j < n_out; ++j) {
        dest[j] = outs[j].dtype != PD_UNDEFINED;
        if (!dest[j]) { /* an optional output the op leaves unset */
            outs[j] = (pd_tensor)PD_TENSOR_UNDEFINED;
            continue;
        }
        pd_ort_status *st = ort_output(k, ctx, j, &outs[j], &outs[j].data);
        if (st != NULL)
            return st;
        outs[j].storage = NULL;
        outs[j].layout = PD_LAYOUT_DENSE;
    }
    *made = true;
    return NULL;
unmade:
    for (size_t j = 0; j < n_out; ++j)
        outs[j] = (pd_tensor)PD_TENSOR_UNDEFINED;
    return NULL;
}

/* For the CUDA variant: pdext's stream over ORT's compute stream, made current on `place` for
 * this thread; *wrapped is the stream to destroy after the call when it is not the kernel's
 * cached one. */
static pd_ort_status *enter_stream(ort_kernel *k, pd_ort_kernel_context *ctx, pd_place place,
                                   pd_stream_t **current, pd_stream_t **wrapped)
{
    const pd_ort_api *api = k->o->api;
    void *handle = NULL;
    pd_ort_status *st = api->KernelContext_GetGPUComputeStream(ctx, &handle);
    *current = *wrapped = NULL;
    if (st != NULL)
        return relay(k, st, "getting ONNX Runtime's compute stream");
    if (handle == NULL) /* no stream: the device's default one */
        return NULL;
    pthread_mutex_lock(&k->stream_lock);
    if (k->stream == NULL && pd_stream_wrap(place, handle, &k->stream) == PD_OK) {
        k->stream_handle = handle;
        k->stream_place = place;
    }
    bool cached = k->stream != NULL && k->stream_handle == handle &&
                  pd_place_equal(k->stream_place, place);
    pthread_mutex_unlock(&k->stream_lock);
    if (cached) {
        *current = k->stream;
    } else if (pd_stream_wrap(place, handle, wrapped) == PD_OK) {
        *current = *wrapped; /* another stream than the first call's: this call's own */
    } else {
        return pd__ort_fail(api, PD_ORT_RUNTIME_EXCEPTION, "pdext op '%s' (node '%s'): %s",
                            pd_op_name(k->o->op), k->node, pd_last_error());
    }
    if (pd_stream_set_current(place, *current) != PD_OK) {
        pd_stream_destroy(*wrapped);
        *current = *wrapped = NULL;
        return pd__ort_fail(api, PD_ORT_RUNTIME_EXCEPTION, "pdext op '%s' (node '%s'): %s",
                            pd_op_name(k->o->op), k->node, pd_last_error());
    }
    return NULL;
}

pd_ort_status *pd__ort_kernel_compute(void *kernel, pd_ort_kernel_context *ctx)
{
    ort_kernel *k = kernel;
    const pd__ort_op *o = k->o;
    const pd_ort_api *api = o->api;
    size_t n_in = 0, n_out = 0;
    pd_ort_status *st = api->KernelContext_GetInputCount(ctx, &n_in);
    if (st == NULL)
        st = api->KernelContext_GetOutputCount(ctx, &n_out);
    if (st != NULL)
        return relay(k, st, "counting inputs and outputs");
    pd_tensor local[2 * LOCAL_TENSORS];
    bool local_dest[LOCAL_TENSORS];
    pd_tensor *ins = local, *outs = local + LOCAL_TENSORS;
    bool *dest = local_dest;
    pd_tensor *heap = NULL;
    if (n_in > LOCAL_TENSORS || n_out > LOCAL_TENSORS) {
        /* the tensors, then the output flags */
        heap = calloc(1, (n_in + n_out) * sizeof *heap + n_out * sizeof *dest);
        if (heap == NULL)
            return pd__ort_fail(api, PD_ORT_FAIL, "pdext op '%s': out of memory",
                                pd_op_name(o->op));
        ins = heap;
        outs = heap + n_in;
        dest = (bool *)(heap + n_in + n_out);
    }
    for (size_t j = 0; j < n_out; ++j)
        outs[j] = (pd_tensor)PD_TENSOR_UNDEFINED;

    /* Bind ORT's flat lists to the declared slots, in order. */
    pd_arg in_args[PD_MAX_INPUTS], out_args[PD_MAX_OUTPUTS];
    size_t next = 0;
    int32_t n_bound = 0; /* input slots set */
    int64_t in_bytes = 0;
    pd_place place = pd_place_cpu();
    for (int32_t i = 0; st == NULL && i < o->n_inputs; ++i) {
        size_t want = o->in_kind[i] == PD_ORT_VARIADIC ? (n_in > next ? n_in - next : 0)
                                                       : (next < n_in ? 1 : 0);
        int32_t count = 0;
        for (size_t j = 0; st == NULL && j < want; ++j) {
            bool present = false;
            st = wrap_input(k, ctx, next + j, &ins[next + (size_t)count], &present);
            if (st == NULL && present && count == 0 && next == 0)
                place = ins[0].place; /* the call's place: its first input's */
            if (st == NULL && present)
                in_bytes += pd_nbytes(&ins[next + (size_t)count]);
            count += present ? 1 : 0;
        }
        in_args[i] = pd_arg_of(ins + next);
        in_args[i].count = count;
        n_bound = i + 1;
        next += want;
    }
    int32_t n_out_args = 0;
    next = 0;
    for (int32_t i = 0; i < o->n_outputs && next < n_out; ++i) {
        size_t room = o->out_kind[i] == PD_ORT_VARIADIC ? n_out - next : 1;
        out_args[i] = pd_arg_of(outs + next);
        out_args[i].count = (int32_t)room;
        next += room;
        n_out_args = i + 1;
    }
    bool made = false;
    if (st == NULL && (o->cuda || in_bytes > SMALL_CALL_BYTES))
        st = make_outputs(k, ctx, in_args, out_args, n_out_args, outs, dest, n_out, &made);
    if (st == NULL && o->cuda && !made)
        st = pd__ort_fail(api, PD_ORT_NOT_IMPLEMENTED,
                          "pdext op '%s' (node '%s'): on ONNX Runtime's CUDA execution provider "
                          "the op's outputs must be known before its kernel runs, but: %s",
                          pd_op_name(o->op), k->node, pd_last_error());
    pd_stream_t *current = NULL, *wrapped = NULL;
    if (st == NULL && o->cuda)
        st = enter_stream(k, ctx, place, &current, &wrapped);
    /* ORT's inputs are not the op's to change (the caller's array, another node's output): an
     * input its inplace map writes is copied first (on the call's stream), and the copy
     * released below (it alone has storage) */
    for (int32_t i = 0; st == NULL && o->inplace_inputs != 0 && i < n_bound; ++i)
        for (int32_t j = 0; st == NULL && (o->inplace_inputs & (1u << i)) && j < in_args[i].count;
             ++j) {
            pd_tensor *t = &in_args[i].tensors[j], copy = PD_TENSOR_UNDEFINED;
            if (pd_tensor_copy_to(&copy, t, t->place) != PD_OK)
                st = pd__ort_fail(api, PD_ORT_FAIL, "pdext op '%s' (node '%s'): %s",
                                  pd_op_name(o->op), k->node, pd_last_error());
            else
                *t = copy;
        }
    if (st == NULL && (made ? pd_op_run_into(o->op, in_args, o->n_inputs, k->attrs, o->n_attrs,
                                             out_args, n_out_args)
                            : pd_op_run(o->op, in_args, o->n_inputs, k->attrs, o->n_attrs, out_args,
                                        n_out_args)) != PD_OK)
        st = pd__ort_fail(api, PD_ORT_RUNTIME_EXCEPTION, "node '%s': %s", k->node, pd_last_error());
    if (current != NULL)
        pd_stream_set_current(place, NULL);
    pd_stream_destroy(wrapped);
    /* The results the call made itself (all of them, or an optional output it set against
     * pd_op_infer's word) are copied into ORT's outputs; an optional output the op left unset
     * stays so. The destinations hold their results already and no reference. */
    for (size_t j = 0; j < n_out; ++j) {
        if (made && dest[j])
            continue;
        if (st == NULL && outs[j].dtype != PD_UNDEFINED)
            st = hand_output(k, ctx, j, &outs[j]);
        pd_tensor_release(&outs[j]);
    }
    for (int32_t i = 0; o->inplace_inputs != 0 && i < n_bound; ++i)
        for (int32_t j = 0; j < in_args[i].count; ++j)
            if (in_args[i].tensors[j].storage != NULL) /* a copy, not ORT's */
                pd_tensor_release(&in_args[i].tensors[j]);
    free(heap);
    return st;
}
