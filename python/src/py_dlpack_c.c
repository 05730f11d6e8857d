/*
 * py_dlpack_c.c - Paddle tensors in and out of plain pdext calls through DLPack's C exchange API
 * (DLPack 1.3, `type(t).__dlpack_c_exchange_api__`: a capsule holding a table of C functions),
 * with no Python call either way.
 *
 * Why: Paddle 3.3's Python route costs tens of microseconds a call (t.__dlpack__() ~10 us,
 * paddle.from_dlpack ~38 us, a 1-element relu call ~70 us in all), where the table's
 * dltensor_from_py_object_no_sync fills a borrowed DLTensor and
 * managed_tensor_to_py_object_no_sync makes a Paddle tensor over pdext's memory, both in C.
 * The table is read once per type. Only Paddle's types take this way, and only for CPU memory
 * (the "no sync" functions leave device streams to the consumer; GPU tensors keep the Python
 * protocol, which orders them): torch's tensors, which may have the table too, keep their
 * current route and its checks.
 */
#include "py_internal.h"

#include "py_dlpack.h"

#include <stdlib.h>
#include <string.h>

/* DLPack 1.x's versioned managed tensor and the exchange table (dlpack.h, v1.3). */
typedef struct dl_version {
    uint32_t major;
    uint32_t minor;
} dl_version;

typedef struct dl_managed_versioned {
    dl_version version;
    void *manager_ctx;
    void (*deleter)(struct dl_managed_versioned *self);
    uint64_t flags;
    pdext_dl_tensor dl_tensor;
} dl_managed_versioned;

typedef struct dl_exchange_header {
    dl_version version;
    struct dl_exchange_header *prev_api;
} dl_exchange_header;

typedef struct dl_exchange_api {
    dl_exchange_header header;
    void *managed_tensor_allocator;
    int (*managed_tensor_from_py_object_no_sync)(void *py_object, dl_managed_versioned **out);
    int (*managed_tensor_to_py_object_no_sync)(dl_managed_versioned *tensor, void **out_py_object);
    int (*dltensor_from_py_object_no_sync)(void *py_object, pdext_dl_tensor *out);
    int (*current_work_stream)(int32_t device_type, int32_t device_id, void **out_stream);
} dl_exchange_api;

/* The table of `type`, or NULL (no exception) when it has none or is not Paddle's. The last type
 * asked about is remembered, with its answer. */
static const dl_exchange_api *api_of(PyTypeObject *type)
{
    static PyTypeObject *cached_type;
    static const dl_exchange_api *cached_api;
    if (type == cached_type)
        return cached_api;
    const dl_exchange_api *api = NULL;
    PyObject *modname = PyObject_GetAttrString((PyObject *)type, "__module__");
    const char *m = modname && PyUnicode_Check(modname) ? PyUnicode_AsUTF8(modname) : NULL;
    if (m != NULL && strncmp(m, "paddle", 6) == 0 && (m[6] == '\0' || m[6] == '.')) {
        PyObject *cap = PyObject_GetAttrString((PyObject *)type, "__dlpack_c_exchange_api__");
        if (cap != NULL && PyCapsule_IsValid(cap, "dlpack_exchange_api")) {
            api = PyCapsule_GetPointer(cap, "dlpack_exchange_api");
            /* Tables of another major version, or without the functions used here, are not. */
            if (api != NULL &&
                (api->header.version.major != 1 || api->dltensor_from_py_object_no_sync == NULL ||
                 api->managed_tensor_to_py_object_no_sync == NULL))
                api = NULL;
        }
        Py_XDECREF(cap); /* the table lives as long as the process (DLPack's rule) */
    }
    Py_XDECREF(modname);
    PyErr_Clear();
    Py_INCREF(type); /* remembered: its address cannot be reused while it is */
    Py_XSETREF(cached_type, type);
    cached_api = api;
    return api;
}

int pdext_dlpack_c_borrow(PyObject *obj, const pdext_input_name *who, pd_tensor *t)
{
    const dl_exchange_api *api = api_of(Py_TYPE(obj));
    if (api == NULL)
        return 0;
    /* A Paddle tensor that records gradients: a plain call would drop them silently. */
    PyObject *sg = PyObject_GetAttrString(obj, "stop_gradient");
    int stop = sg == NULL ? -1 : PyObject_IsTrue(sg);
    Py_XDECREF(sg);
    if (stop < 0) {
        PyErr_Clear();
        return 0;
    }
    if (!stop) {
        PyErr_Format(PyExc_ValueError,
                     "%s(): input '%s' is a Paddle tensor that requires grad "
                     "(stop_gradient=False); "
                     "a plain pdext call records no gradient: register the ops with "
                     "pdext.paddle.register for Paddle's autograd, or pass t.detach()",
                     who->op, who->input);
        return -1;
    }
    pdext_dl_tensor dl;
    if (api->dltensor_from_py_object_no_sync(obj, &dl) != 0) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_ValueError, "%s(): input '%s': Paddle's DLPack export refused it",
                         who->op, who->input);
        return -1;
    }
    if (dl.device.device_type != PDEXT_DL_CPU)
        return 0; /* device memory: the Python protocol, which orders streams */
    return pdext_borrow_dl(&dl, who, t) < 0 ? -1 : 1;
}

/* What the Paddle tensor holds: the versioned managed tensor and pdext's reference. */
typedef struct export_ctx {
    dl_managed_versioned managed;
    pd_tensor t;
    int64_t strides[PD_MAX_DIMS];
} export_ctx;

static void export_deleter(dl_managed_versioned *m)
{
    export_ctx *ctx = m->manager_ctx;
    pd_tensor_release(&ctx->t);
    free(ctx);
}

PyObject *pdext_dlpack_c_result(PyObject *first, pd_tensor *t, bool *handled)
{
    *handled = false;
    const dl_exchange_api *api = api_of(Py_TYPE(first));
    if (api == NULL || t->place.type != PD_PLACE_CPU || t->storage == NULL)
        return NULL;
    *handled = true;
    export_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL) {
        pd_tensor_release(t);
        return PyErr_NoMemory();
    }
    ctx->t = *t; /* the reference moves */
    memset(t, 0, sizeof *t);
    for (int32_t d = 0; d < ctx->t.ndim; ++d)
        ctx->strides[d] = pd_stride(&ctx->t, d);
    ctx->managed.version.major = 1;
    ctx->managed.version.minor = 0;
    ctx->managed.manager_ctx = ctx;
    ctx->managed.deleter = export_deleter;
    pdext_dl_tensor *dl = &ctx->managed.dl_tensor;
    dl->data = ctx->t.data;
    dl->device.device_type = PDEXT_DL_CPU;
    dl->device.device_id = 0;
    dl->ndim = ctx->t.ndim;
    dl->dtype = pdext_dl_from_dtype(ctx->t.dtype);
    dl->shape = ctx->t.shape;
    dl->strides = ctx->strides;
    dl->byte_offset = 0;
    void *out = NULL;
    if (api->managed_tensor_to_py_object_no_sync(&ctx->managed, &out) != 0 || out == NULL) {
        /* The producer took the tensor only on success. */
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_RuntimeError, "Paddle's DLPack import refused pdext's result");
        export_deleter(&ctx->managed);
        return NULL;
    }
    return (PyObject *)out;
}
