/*
 * py_input.c - Python objects in, pd_tensor values out, without copying: numpy arrays (read
 * straight from the array struct), pdext.Tensor objects and anything with __dlpack__ (a
 * PyTorch tensor, another framework's array), plus pdext.from_dlpack and the DLPack export
 * of Tensors.
 *
 * For a call, inputs are borrowed: the pd_tensor points at the object's memory with no
 * storage reference (the runner accepts such host-made tensors and never keeps them past the
 * call; an output that would alias one is copied by the caller, py_op.c). Strided arrays stay
 * strided (element strides; negative and zero ones included); the runner makes them
 * contiguous for kernels that want dense inputs. DLPack memory on a CUDA device or pinned
 * host memory becomes a tensor on the matching place (py_device.c asks CUDA producers with
 * the call's stream).
 */
#include "py_internal.h"

#include "py_device.h"
#include "py_dlpack.h"

#include <stdlib.h>

/* pdext dtype of a numpy dtype, by kind and size (numpy has two names for some of them). */
static pd_data_type numpy_dtype(const PyArray_Descr *d)
{
    const npy_intp elsize = PyDataType_ELSIZE(d);
    switch (d->kind) {
    case 'b': return elsize == 1 ? PD_BOOL : PD_UNDEFINED;
    case 'i':
        return elsize == 1   ? PD_INT8
               : elsize == 2 ? PD_INT16
               : elsize == 4 ? PD_INT32
               : elsize == 8 ? PD_INT64
                             : PD_UNDEFINED;
    case 'u':
        return elsize == 1   ? PD_UINT8
               : elsize == 2 ? PD_UINT16
               : elsize == 4 ? PD_UINT32
               : elsize == 8 ? PD_UINT64
                             : PD_UNDEFINED;
    case 'f':
        return elsize == 2   ? PD_FLOAT16
               : elsize == 4 ? PD_FLOAT32
               : elsize == 8 ? PD_FLOAT64
                             : PD_UNDEFINED;
    case 'c': return elsize == 8 ? PD_COMPLEX64 : elsize == 16 ? PD_COMPLEX128 : PD_UNDEFINED;
    default: return PD_UNDEFINED;
    }
}

/* "custom_relu(): input 'X'" (or 'X'[2] for an item of a vector input), formatted only
 * when a message needs it: formatting on every call would cost more than the call. */
const char *pdext_input_text(const pdext_input_name *who)
{
    static _Thread_local char buf[256];
    if (who->index >= 0)
        snprintf(buf, sizeof buf, "%s(): input '%s'[%zd]", who->op, who->input, who->index);
    else
        snprintf(buf, sizeof buf, "%s(): input '%s'", who->op, who->input);
    return buf;
}

/* Row-major strides of a dense tensor, as the runtime fills them; false when a dim is negative
 * or the element count does not fit in int64 (a producer's shape is not to be trusted, and
 * the overflow would be undefined behaviour). */
static bool fill_dense_strides(pd_tensor *t)
{
    int64_t s = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
        t->strides[d] = s;
        if (t->shape[d] < 0 || __builtin_mul_overflow(s, t->shape[d], &s))
            return false;
    }
    return true;
}

static int borrow_numpy(PyArrayObject *a, bool writable, const pdext_input_name *who, pd_tensor *t)
{
    PyArray_Descr *descr = PyArray_DESCR(a);
    pd_data_type dtype = numpy_dtype(descr);
    if (dtype == PD_UNDEFINED) {
        PyObject *name = PyObject_Str((PyObject *)descr);
        PyErr_Format(PyExc_TypeError,
                     "%s is a numpy array of dtype %U, which pdext has no dtype for (it takes "
                     "bool, int8..int64, uint8..uint64, float16/32/64, complex64/128)",
                     pdext_input_text(who), name);
        Py_XDECREF(name);
        return -1;
    }
    if (!PyArray_ISNOTSWAPPED(a)) {
        PyErr_Format(PyExc_ValueError,
                     "%s has non-native byte order; convert it first (a.astype(a.dtype."
                     "newbyteorder('=')))",
                     pdext_input_text(who));
        return -1;
    }
    int ndim = PyArray_NDIM(a);
    if (ndim > PD_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s has %d dimensions; pdext tensors have at most %d",
                     pdext_input_text(who), ndim, PD_MAX_DIMS);
        return -1;
    }
    if (writable && !PyArray_ISWRITEABLE(a)) {
        PyErr_Format(PyExc_ValueError,
                     "%s is a read-only array, but the op writes it in place; pass a writable "
                     "array (a.copy())",
                     pdext_input_text(who));
        return -1;
    }
    if (!PyArray_ISALIGNED(a)) {
        PyErr_Format(PyExc_ValueError,
                     "%s is not aligned for its dtype; pass an aligned copy (a.copy())",
                     pdext_input_text(who));
        return -1;
    }
    memset(t, 0, sizeof *t);
    t->data = PyArray_DATA(a);
    t->dtype = dtype;
    t->ndim = ndim;
    t->place = pd_place_cpu();
    const npy_intp *dims = PyArray_DIMS(a);
    for (int d = 0; d < ndim; ++d)
        t->shape[d] = dims[d];
    if (PyArray_IS_C_CONTIGUOUS(a)) {
        t->layout = PD_LAYOUT_DENSE;
        (void)fill_dense_strides(t); /* numpy's shapes are checked by numpy */
        return 0;
    }
    const npy_intp *strides = PyArray_STRIDES(a);
    int64_t size = PyDataType_ELSIZE(descr);
    for (int d = 0; d < ndim; ++d) {
        if (strides[d] % size != 0) {
            PyErr_Format(PyExc_ValueError,
                         "%s has a stride of %lld bytes in dim %d, not a multiple of its "
                         "%lld-byte elements; pass a copy (a.copy())",
                         pdext_input_text(who), (long long)strides[d], d, (long long)size);
            return -1;
        }
        t->strides[d] = strides[d] / size;
    }
    t->layout = PD_LAYOUT_STRIDED;
    return 0;
}

/* DLPack capsule of `obj` (its __dlpack__(), or obj itself when it is a capsule), consumed:
 * renamed "used_dltensor". Returns the managed tensor, or NULL with an exception; NULL with no
 * exception when obj has no __dlpack__ (the caller tries the other ways in). */
static pdext_dl_managed *dlpack_take(PyObject *obj, const pdext_input_name *who)
{
    PyObject *capsule;
    if (PyCapsule_CheckExact(obj)) {
        capsule = obj;
        Py_INCREF(capsule);
    } else {
        PyObject *method = PyObject_GetAttrString(obj, "__dlpack__");
        if (method == NULL) {
            PyErr_Clear();
            return NULL;
        }
        capsule = pdext_dlpack_request(obj, method); /* with the stream, for CUDA */
        Py_DECREF(method);
        if (capsule == NULL) {
            /* The producer's own refusal (torch: a tensor that requires grad), of its own
             * type, told with the op and the input it was meant for. */
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_NormalizeException(&type, &value, &tb);
            PyErr_Format(type ? type : PyExc_ValueError, "%s: %.100s.__dlpack__() refused it: %S",
                         pdext_input_text(who), Py_TYPE(obj)->tp_name, value ? value : Py_None);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            return NULL;
        }
    }
    pdext_dl_managed *m = PyCapsule_GetPointer(capsule, "dltensor");
    if (m == NULL) {
        PyErr_Clear();
        PyErr_Format(PyExc_ValueError,
                     "%s: the DLPack capsule was consumed already (a capsule can be used once); "
                     "pass the tensor itself",
                     pdext_input_text(who));
        Py_DECREF(capsule);
        return NULL;
    }
    if (PyCapsule_SetName(capsule, "used_dltensor") < 0) {
        Py_DECREF(capsule);
        return NULL;
    }
    Py_DECREF(capsule);
    return m;
}

static void dlpack_drop(pdext_dl_managed *m)
{
    if (m != NULL && m->deleter != NULL)
        m->deleter(m);
}

/* Fills *t from a DLPack tensor (borrowed: no storage); -1 with an exception. */
int pdext_borrow_dl(const pdext_dl_tensor *dl, const pdext_input_name *who, pd_tensor *t)
{
    pd_place place = pdext_dl_place(dl->device);
    if (place.type == PD_PLACE_UNDEFINED) {
        PyErr_Format(PyExc_ValueError,
                     "%s is on DLPack device (%d, %d); pdext's Python front takes CPU (1), CUDA "
                     "(2) and CUDA host (3) memory (move it with .cpu())",
                     pdext_input_text(who), (int)dl->device.device_type, (int)dl->device.device_id);
        return -1;
    }
    pd_data_type dtype = pdext_dl_to_dtype(dl->dtype);
    if (dtype == PD_UNDEFINED) {
        PyErr_Format(PyExc_TypeError,
                     "%s has DLPack dtype (code %d, %d bits, %d lanes), which pdext has no dtype "
                     "for",
                     pdext_input_text(who), dl->dtype.code, dl->dtype.bits, dl->dtype.lanes);
        return -1;
    }
    if (dl->ndim < 0 || dl->ndim > PD_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s has %d dimensions; pdext tensors have at most %d",
                     pdext_input_text(who), (int)dl->ndim, PD_MAX_DIMS);
        return -1;
    }
    memset(t, 0, sizeof *t);
    t->data = (char *)dl->data + dl->byte_offset;
    t->dtype = dtype;
    t->ndim = dl->ndim;
    t->place = place;
    for (int32_t d = 0; d < t->ndim; ++d)
        t->shape[d] = dl->shape[d];
    if (!fill_dense_strides(t)) {
        char dims[PD_MAX_DIMS * 24 + 4];
        size_t len = 0;
        bool negative = false;
        for (int32_t d = 0; d < t->ndim && len < sizeof dims; ++d) {
            negative = negative || t->shape[d] < 0;
            len += (size_t)snprintf(dims + len, sizeof dims - len, "%s%lld", d ? ", " : "",
                                    (long long)t->shape[d]);
        }
        PyErr_Format(PyExc_ValueError,
                     "%s has DLPack shape [%s], which %s; expected dims >= 0 whose product "
                     "fits in int64",
                     pdext_input_text(who), dims,
                     negative ? "has a negative dim" : "holds more elements than int64 counts");
        return -1;
    }
    t->layout = PD_LAYOUT_DENSE;
    if (dl->strides != NULL) {
        for (int32_t d = 0; d < t->ndim; ++d)
            if (t->shape[d] > 1 && dl->strides[d] != t->strides[d])
                t->layout = PD_LAYOUT_STRIDED;
        if (t->layout == PD_LAYOUT_STRIDED)
            for (int32_t d = 0; d < t->ndim; ++d)
                t->strides[d] = dl->strides[d];
    }
    size_t align = pd_dtype_is_complex(dtype) ? pd_dtype_size(dtype) / 2 : pd_dtype_size(dtype);
    if (pd_numel(t) > 0 && (uintptr_t)t->data % align != 0) {
        PyErr_Format(PyExc_ValueError, "%s is not aligned for its dtype; pass an aligned copy",
                     pdext_input_text(who));
        return -1;
    }
    return 0;
}

/* An input with no __dlpack__. MindSpore tensors have none; on the CPU their asnumpy() is an
 * array over their own memory, borrowed like any array and kept alive by the borrow. Looked at
 * only after __dlpack__ was missing, so that DLPack inputs pay no extra attribute look-up. */
static int borrow_without_dlpack(PyObject *obj, bool writable, const pdext_input_name *who,
                                 pd_tensor *t, pdext_borrow *b, int numpy)
{
    if (numpy && PyObject_HasAttrString(obj, "asnumpy")) {
        PyObject *arr = PyObject_CallMethod(obj, "asnumpy", NULL);
        if (arr != NULL && PyArray_Check(arr) &&
            borrow_numpy((PyArrayObject *)arr, writable, who, t) == 0) {
            b->buffer_owner = arr;
            return 0;
        }
        if (arr != NULL && !PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "%s: %.100s.asnumpy() gave no numpy array",
                         pdext_input_text(who), Py_TYPE(obj)->tp_name);
        Py_XDECREF(arr);
        return -1;
    }
    PyErr_Format(PyExc_TypeError,
                 "%s is a %.100s, which is neither a numpy array, a pdext.Tensor, an object "
                 "with __dlpack__ nor a tensor with asnumpy()",
                 pdext_input_text(who), Py_TYPE(obj)->tp_name);
    return -1;
}

int pdext_input_borrow(PyObject *obj, bool writable, const pdext_input_name *who, pd_tensor *t,
                       pdext_borrow *b)
{
    b->buffer_owner = NULL;
    b->dl_managed = NULL;
    int numpy = pdext_numpy_seen();
    if (numpy < 0)
        return -1;
    if (numpy && PyArray_Check(obj))
        return borrow_numpy((PyArrayObject *)obj, writable, who, t);
    if (Py_TYPE(obj) == &pdext_TensorType) {
        /* The Tensor's own reference serves the call: the caller's arguments keep it alive. */
        *t = ((pdext_TensorObject *)obj)->t;
        return 0;
    }
    if (obj == Py_None) {
        PyErr_Format(PyExc_TypeError, "%s is None, but it is not optional", pdext_input_text(who));
        return -1;
    }
    if ((numpy && PyArray_IsAnyScalar(obj)) || PyList_Check(obj) || PyTuple_Check(obj) ||
        PyFloat_Check(obj) || PyLong_Check(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "%s is a %.100s; pass an array (numpy.asarray(...)) or a tensor",
                     pdext_input_text(who), Py_TYPE(obj)->tp_name);
        return -1;
    }
    int exchanged = pdext_dl_exchange_borrow(&obj, writable, who, t, b);
    if (exchanged != 0)
        return exchanged < 0 ? -1 : 0; /* the caller's arguments (or the borrow) keep obj alive */
    pdext_dl_managed *m = dlpack_take(obj, who);
    if (m == NULL && !PyErr_Occurred())
        return borrow_without_dlpack(obj, writable, who, t, b, numpy);
    if (m == NULL) {
        Py_CLEAR(b->buffer_owner);
        return -1;
    }
    if (pdext_borrow_dl(&m->dl_tensor, who, t) < 0) {
        dlpack_drop(m);
        Py_CLEAR(b->buffer_owner);
        return -1;
    }
    b->dl_managed = m;
    return 0;
}

void pdext_borrow_release(pdext_borrow *b)
{
    Py_CLEAR(b->buffer_owner);
    dlpack_drop(b->dl_managed);
    b->dl_managed = NULL;
}

/* A tensor holding a storage reference over the memory of borrowed view *v (one storage
 * over every element the view reaches, then the view on it); `deleter` runs when it goes. */
static pd_status wrap_memory(const pd_tensor *v, pd_deleter_fn deleter, void *user, pd_tensor *out)
{
    int64_t lo = 0, hi = 0, n = pd_numel(v);
    for (int32_t d = 0; d < v->ndim && n > 0; ++d) {
        int64_t reach = (v->shape[d] - 1) * pd_stride(v, d);
        if (reach < 0)
            lo += reach;
        else
            hi += reach;
    }
    int64_t extent = n > 0 ? hi - lo + 1 : 0;
    void *base = (char *)v->data + lo * (int64_t)pd_dtype_size(v->dtype);
    pd_tensor storage = PD_TENSOR_UNDEFINED;
    pd_status st = pd_tensor_from_buffer(&storage, base, v->dtype, v->place, 1, &extent, deleter,
                                         user);
    if (st != PD_OK)
        return st;
    int64_t strides[PD_MAX_DIMS];
    for (int32_t d = 0; d < v->ndim; ++d)
        strides[d] = pd_stride(v, d);
    memset(out, 0, sizeof *out);
    st = pd_tensor_as_strided(out, &storage, v->ndim, v->shape, strides, -lo);
    pd_tensor_release(&storage);
    return st;
}

/* --- pdext.from_dlpack --------------------------------------------------------------------- */

/* The storage deleter of an imported tensor: the producer's deleter may touch Python objects
 * (numpy's does), so it runs holding the GIL, whichever thread drops the last reference. */
static void dl_storage_deleter(void *data, void *user)
{
    (void)data;
    PyGILState_STATE g = PyGILState_Ensure();
    dlpack_drop(user);
    PyGILState_Release(g);
}

PyObject *pdext_from_dlpack(PyObject *self, PyObject *obj)
{
    (void)self;
    if (Py_TYPE(obj) == &pdext_TensorType) {
        Py_INCREF(obj);
        return obj;
    }
    static const pdext_input_name who = {"pdext.from_dlpack", "obj", -1};
    pdext_dl_managed *m = dlpack_take(obj, &who);
    if (m == NULL && !PyErr_Occurred())
        PyErr_Format(PyExc_TypeError,
                     "%s is a %.100s, which has no __dlpack__ (nor is it a DLPack "
                     "capsule)",
                     pdext_input_text(&who), Py_TYPE(obj)->tp_name);
    if (m == NULL)
        return NULL;
    pd_tensor view;
    if (pdext_borrow_dl(&m->dl_tensor, &who, &view) < 0) {
        dlpack_drop(m);
        return NULL;
    }
    pd_tensor out;
    pd_status st = wrap_memory(&view, dl_storage_deleter, m, &out);
    if (st != PD_OK) {
        dlpack_drop(m);
        return pdext_raise_status(st, "pdext.from_dlpack");
    }
    return pdext_tensor_wrap(&out);
}

int pdext_tensor_own(pd_tensor *t)
{
    pd_tensor view, copy = PD_TENSOR_UNDEFINED;
    pd_place place = t->place;
    pd_status st = wrap_memory(t, NULL, NULL, &view);
    memset(t, 0, sizeof *t);
    if (st == PD_OK) {
        st = pd_tensor_copy_to(&copy, &view, place);
        pd_tensor_release(&view);
    }
    if (st != PD_OK) {
        pdext_raise_status(st, NULL);
        return -1;
    }
    *t = copy;
    return 0;
}

/* --- DLPack export -------------------------------------------------------------------------- */

/* What a DLPack consumer holds: the managed tensor and the reference keeping the memory. */
typedef struct export_ctx {
    pdext_dl_managed managed;
    pd_tensor t;
    int64_t strides[PD_MAX_DIMS];
} export_ctx;

static void export_deleter(pdext_dl_managed *m)
{
    export_ctx *ctx = m->manager_ctx;
    pd_tensor_release(&ctx->t);
    free(ctx);
}

static void export_capsule_destructor(PyObject *capsule)
{
    /* Only a capsule nobody consumed still owns its tensor. */
    if (!PyCapsule_IsValid(capsule, "dltensor"))
        return;
    pdext_dl_managed *m = PyCapsule_GetPointer(capsule, "dltensor");
    if (m != NULL && m->deleter != NULL)
        m->deleter(m);
}

PyObject *pdext_dlpack_export(pdext_TensorObject *self)
{
    pdext_dl_device device = {0, 0};
    if (!pd_place_to_dlpack(self->t.place, &device.device_type, &device.device_id) ||
        pdext_dl_place(device).type == PD_PLACE_UNDEFINED) {
        PyErr_Format(PyExc_BufferError, "DLPack export of %s tensors is not supported",
                     pd_place_type_name(&self->t.place));
        return NULL;
    }
    export_ctx *ctx = calloc(1, sizeof *ctx);
    if (ctx == NULL)
        return PyErr_NoMemory();
    pd_tensor_retain(&ctx->t, &self->t);
    for (int32_t d = 0; d < ctx->t.ndim; ++d)
        ctx->strides[d] = pd_stride(&ctx->t, d);
    pdext_dl_tensor *dl = &ctx->managed.dl_tensor;
    dl->data = ctx->t.data;
    dl->device = device;
    dl->ndim = ctx->t.ndim;
    dl->dtype = pdext_dl_from_dtype(ctx->t.dtype);
    dl->shape = ctx->t.shape;
    dl->strides = ctx->strides;
    dl->byte_offset = 0;
    ctx->managed.manager_ctx = ctx;
    ctx->managed.deleter = export_deleter;
    PyObject *capsule = PyCapsule_New(&ctx->managed, "dltensor", export_capsule_destructor);
    if (capsule == NULL)
        export_deleter(&ctx->managed);
    return capsule;
}
