/*
 * ort_infer.c - ONNX Runtime's shape inference for a pdext op (OrtCustomOp.InferOutputShapeFn,
 * API version 17): the node's input types and shapes and its attributes go through pd_op_infer,
 * the runtime's one entry point for output shapes before a kernel runs, and the shapes it gives
 * are handed to ORT, so that its graph optimizer and memory planner see them.
 *
 * ORT runs this while it resolves the graph, after its own element-type inference (which types
 * an any-typed output like the node's inputs; ORT's shape context cannot set types). Where the
 * facts are incomplete -- a symbolic dimension, an attribute the node lacks or gives with
 * another type -- or pd_op_infer refuses the call, nothing is set and NULL is returned: shapes
 * stay unknown, as for an op without inference, and the kernel's creation or run reports the
 * fault with the node's name. (Some ORT releases ignore, and so leak, a status returned here.)
 */
#include "ort_adapter.h"

#include <stdlib.h>
#include <string.h>

/* Room for a vector output's items: ORT's shape context does not say how many the node has. */
#define VECTOR_ROOM 16

typedef struct infer_attrs {
    pd_attr v[PD_MAX_ATTRS];
    void *owned[PD_MAX_ATTRS];
} infer_attrs;

static bool ok(const pd_ort_api *api, pd_ort_status *st)
{
    if (st == NULL)
        return true;
    api->ReleaseStatus(st);
    return false;
}

/* Reads attr a of the node into *out; false when it cannot (see the file comment). */
static bool read_attr(const pd_ort_api *api, const pd_ort_shape_context *ctx, const pd_attr_info *a,
                      pd_attr *out, void **owned)
{
    const pd_ort_op_attr *attr = NULL;
    if (!ok(api, api->ShapeInferContext_GetAttribute(ctx, a->name, &attr)) || attr == NULL) {
        *out = a->default_value;
        return a->has_default;
    }
    memset(out, 0, sizeof *out);
    out->name = a->name;
    out->type = a->type;
    size_t got = 0;
    int64_t i64 = 0;
    float f = 0;
    switch (a->type) {
    case PD_ATTR_BOOL:
    case PD_ATTR_INT:
    case PD_ATTR_INT64:
        if (!ok(api, api->ReadOpAttr(attr, PD_ORT_ATTR_INT, &i64, sizeof i64, &got)))
            return false;
        if (a->type == PD_ATTR_BOOL)
            out->v.b = i64 != 0;
        else if (a->type == PD_ATTR_INT64)
            out->v.i64 = i64;
        else if (i64 < INT32_MIN || i64 > INT32_MAX)
            return false;
        else
            out->v.i = (int32_t)i64;
        return true;
    case PD_ATTR_FLOAT:
    case PD_ATTR_DOUBLE:
        if (!ok(api, api->ReadOpAttr(attr, PD_ORT_ATTR_FLOAT, &f, sizeof f, &got)))
            return false;
        if (a->type == PD_ATTR_FLOAT)
            out->v.f = f;
        else
            out->v.d = f;
        return true;
    case PD_ATTR_STRING:
    case PD_ATTR_INTS:
    case PD_ATTR_INT64S:
    case PD_ATTR_FLOATS: {
        int type = a->type == PD_ATTR_STRING   ? PD_ORT_ATTR_STRING
                   : a->type == PD_ATTR_FLOATS ? PD_ORT_ATTR_FLOATS
                                               : PD_ORT_ATTR_INTS;
        /* The first read only asks the size in bytes (an error status that sets it). */
        ok(api, api->ReadOpAttr(attr, type, NULL, 0, &got));
        char *buf = calloc(got + 1, 1);
        if (buf == NULL || !ok(api, api->ReadOpAttr(attr, type, buf, got, &got))) {
            free(buf);
            return false;
        }
        *owned = buf;
        if (a->type == PD_ATTR_STRING) {
            out->v.s = buf;
        } else if (a->type == PD_ATTR_FLOATS) {
            out->v.floats = (const float *)(void *)buf;
            out->count = (int32_t)(got / sizeof(float));
        } else {
            int64_t *wide = (int64_t *)(void *)buf;
            out->count = (int32_t)(got / sizeof(int64_t));
            if (a->type == PD_ATTR_INT64S) {
                out->v.int64s = wide;
            } else {
                int32_t *narrow = (int32_t *)(void *)buf;
                for (int32_t j = 0; j < out->count; ++j) {
                    if (wide[j] < INT32_MIN || wide[j] > INT32_MAX)
                        return false;
                    narrow[j] = (int32_t)wide[j];
                }
                out->v.ints = narrow;
            }
        }
        return true;
    }
    default: return false; /* a list of strings: ORT's shape context cannot read one */
    }
}

/* Reads ORT input i's type and shape into t (no data); false when not fully known. */
static bool read_input(const pd_ort_api *api, const pd_ort_shape_context *ctx, size_t i,
                       pd_tensor *t)
{
    pd_ort_type_shape *info = NULL; /* the context's own */
    int elem = 0;
    size_t ndim = 0;
    if (!ok(api, api->ShapeInferContext_GetInputTypeShape(ctx, i, &info)) || info == NULL ||
        !ok(api, api->GetTensorElementType(info, &elem)) ||
        !ok(api, api->GetDimensionsCount(info, &ndim)) || ndim > PD_MAX_DIMS)
        return false;
    memset(t, 0, sizeof *t);
    if (!ok(api, api->GetDimensions(info, t->shape, ndim)))
        return false;
    for (size_t d = 0; d < ndim; ++d)
        if (t->shape[d] < 0) /* symbolic */
            return false;
    t->dtype = pd__ort_dtype_of(elem);
    t->ndim = (int32_t)ndim;
    t->place = pd_place_cpu();
    t->layout = PD_LAYOUT_DENSE;
    return t->dtype != PD_UNDEFINED;
}

/* Hands output `index`'s shape to ORT. */
static void set_output(const pd_ort_api *api, pd_ort_shape_context *ctx, size_t index,
                       const pd_tensor *t)
{
    pd_ort_type_shape *info = NULL;
    if (!ok(api, api->CreateTensorTypeAndShapeInfo(&info)))
        return;
    if (ok(api, api->SetTensorElementType(info, pd__ort_elem_of(t->dtype))) &&
        ok(api, api->SetDimensions(info, t->shape, (size_t)t->ndim)))
        ok(api, api->ShapeInferContext_SetOutputTypeShape(ctx, index, info));
    api->ReleaseTensorTypeAndShapeInfo(info);
}

pd_ort_status *pd__ort_infer_shapes(const pd_ort_custom_op *op, pd_ort_shape_context *ctx)
{
    const pd__ort_op *o = (const pd__ort_op *)op;
    const pd_ort_api *api = o->api;
    size_t n_in = 0;
    if (!ok(api, api->ShapeInferContext_GetInputCount(ctx, &n_in)) || n_in > PD_MAX_INPUTS * 4)
        return NULL;
    pd_tensor ins[PD_MAX_INPUTS * 4];
    pd_arg in_args[PD_MAX_INPUTS];
    size_t next = 0;
    for (int32_t i = 0; i < o->n_inputs; ++i) {
        size_t want = o->in_kind[i] == PD_ORT_VARIADIC ? (n_in > next ? n_in - next : 0)
                                                       : (next < n_in ? 1 : 0);
        for (size_t j = 0; j < want; ++j)
            if (!read_input(api, ctx, next + j, &ins[next + j]))
                return NULL;
        in_args[i] = pd_arg_of(ins + next);
        in_args[i].count = (int32_t)want;
        next += want;
    }
    infer_attrs attrs;
    memset(&attrs, 0, sizeof attrs);
    bool have_attrs = true;
    for (int32_t i = 0; have_attrs && i < o->n_attrs; ++i)
        have_attrs = read_attr(api, ctx, &o->attrs[i], &attrs.v[i], &attrs.owned[i]);
    /* one item per output; only the last may be a vector (ort_register.c refuses others), with
     * VECTOR_ROOM items first and, when pd_op_infer says it makes more, as many as it makes */
    pd_tensor stack_outs[PD_MAX_OUTPUTS + VECTOR_ROOM];
    pd_tensor *outs = stack_outs;
    pd_arg out_args[PD_MAX_OUTPUTS];
    int32_t last_room = VECTOR_ROOM;
    pd_status st = have_attrs ? PD_ERR_INVALID_ARGUMENT : PD_OK;
    for (int attempt = 0; have_attrs && attempt < 2; ++attempt) {
        for (int32_t i = 0; i < o->n_outputs; ++i) {
            out_args[i] = pd_arg_of(outs + i);
            out_args[i].count = o->out_kind[i] == PD_ORT_VARIADIC ? last_room : 1;
        }
        st = pd_op_infer(o->op, in_args, o->n_inputs, attrs.v, o->n_attrs, out_args, o->n_outputs);
        int32_t last = o->n_outputs - 1;
        if (st == PD_OK || last < 0 || o->out_kind[last] != PD_ORT_VARIADIC ||
            out_args[last].count <= last_room || outs != stack_outs)
            break;
        last_room = out_args[last].count;
        outs = malloc(((size_t)o->n_outputs + (size_t)last_room) * sizeof *outs);
        if (outs == NULL) {
            outs = stack_outs;
            break;
        }
    }
    if (have_attrs && st == PD_OK) {
        size_t index = 0;
        for (int32_t i = 0; i < o->n_outputs; ++i)
            for (int32_t j = 0; j < out_args[i].count; ++j, ++index)
                if (outs[i + j].dtype != PD_UNDEFINED)
                    set_output(api, ctx, index, &outs[i + j]);
    }
    if (outs != stack_outs)
        free(outs);
    for (int32_t i = 0; i < PD_MAX_ATTRS; ++i)
        free(attrs.owned[i]);
    return NULL;
}
