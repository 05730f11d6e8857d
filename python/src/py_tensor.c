/*
 * py_tensor.c - pdext.Tensor, the Python owner of one pd_tensor, and the way outputs leave
 * pdext: as numpy arrays whose base is a Tensor (zero-copy: the array points at the
 * tensor's memory, which lives as long as the array), through the buffer protocol, or
 * through DLPack (__dlpack__ / __dlpack_device__) to any framework.
 */
#include "py_device.h"
#include "py_executor.h"
#include "py_internal.h"

#include "pd_device.h"

#include "py_dlpack.h"

#include <stdlib.h>

int pdext_numpy_typenum(pd_data_type dtype)
{
    switch (dtype) {
    case PD_BOOL: return NPY_BOOL;
    case PD_INT8: return NPY_INT8;
    case PD_UINT8: return NPY_UINT8;
    case PD_INT16: return NPY_INT16;
    case PD_UINT16: return NPY_UINT16;
    case PD_INT32: return NPY_INT32;
    case PD_UINT32: return NPY_UINT32;
    case PD_INT64: return NPY_INT64;
    case PD_UINT64: return NPY_UINT64;
    case PD_FLOAT16: return NPY_FLOAT16;
    case PD_FLOAT32: return NPY_FLOAT32;
    case PD_FLOAT64: return NPY_FLOAT64;
    case PD_COMPLEX64: return NPY_COMPLEX64;
    case PD_COMPLEX128: return NPY_COMPLEX128;
    default:
        PyErr_Format(PyExc_TypeError,
                     "a %s tensor has no numpy dtype; take it as a pdext.Tensor or through "
                     "DLPack (e.g. torch.from_dlpack)",
                     pd_dtype_name(dtype));
        return -1;
    }
}

PyObject *pdext_tensor_wrap(pd_tensor *t)
{
    pdext_TensorObject *self = PyObject_New(pdext_TensorObject, &pdext_TensorType);
    if (self == NULL) {
        pd_tensor_release(t);
        return NULL;
    }
    self->t = *t;
    memset(t, 0, sizeof *t);
    for (int32_t d = 0; d < self->t.ndim; ++d) {
        self->view_shape[d] = (Py_ssize_t)self->t.shape[d];
        self->view_strides[d] = (Py_ssize_t)(pd_stride(&self->t, d) *
                                             (int64_t)pd_dtype_size(self->t.dtype));
    }
    return (PyObject *)self;
}

PyObject *pdext_tensor_to_numpy(pd_tensor *t)
{
    if (!pd_is_cpu(t)) {
        /* Device memory has no host view: copying here would hide a synchronization and
         * give an array that does not share the tensor's memory. */
        PyObject *where = pdext_place_str(t->place);
        if (where != NULL)
            PyErr_Format(PyExc_TypeError,
                         "a pdext.Tensor on %U has no numpy view; copy it to the host first: "
                         "t.to('cpu').numpy()",
                         where);
        Py_XDECREF(where);
        pd_tensor_release(t);
        return NULL;
    }
    int typenum = pdext_numpy_require() < 0 ? -1 : pdext_numpy_typenum(t->dtype);
    if (typenum < 0) {
        pd_tensor_release(t);
        return NULL;
    }
    pdext_TensorObject *owner = (pdext_TensorObject *)pdext_tensor_wrap(t);
    if (owner == NULL)
        return NULL;
    npy_intp dims[PD_MAX_DIMS];
    npy_intp strides[PD_MAX_DIMS];
    for (int32_t d = 0; d < owner->t.ndim; ++d) {
        dims[d] = (npy_intp)owner->view_shape[d];
        strides[d] = (npy_intp)owner->view_strides[d];
    }
    PyObject *arr = PyArray_NewFromDescr(&PyArray_Type, PyArray_DescrFromType(typenum),
                                         owner->t.ndim, dims, strides, owner->t.data,
                                         NPY_ARRAY_WRITEABLE, NULL);
    if (arr == NULL) {
        Py_DECREF(owner);
        return NULL;
    }
    if (PyArray_SetBaseObject((PyArrayObject *)arr, (PyObject *)owner) < 0) {
        Py_DECREF(arr);
        Py_DECREF(owner);
        return NULL;
    }
    return arr;
}

static void tensor_dealloc(pdext_TensorObject *self)
{
    pd_tensor_release(&self->t);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* --- Buffer protocol ----------------------------------------------------------------------- */

static const char *buffer_format(pd_data_type d)
{
    switch (d) {
    case PD_BOOL: return "?";
    case PD_INT8: return "b";
    case PD_UINT8: return "B";
    case PD_INT16: return "h";
    case PD_UINT16: return "H";
    case PD_INT32: return "i";
    case PD_UINT32: return "I";
    case PD_INT64: return "q";
    case PD_UINT64: return "Q";
    case PD_FLOAT16: return "e";
    case PD_FLOAT32: return "f";
    case PD_FLOAT64: return "d";
    case PD_COMPLEX64: return "Zf";
    case PD_COMPLEX128: return "Zd";
    default: return NULL;
    }
}

static int tensor_getbuffer(pdext_TensorObject *self, Py_buffer *view, int flags)
{
    if (pdext_tensor_ready(self) < 0) /* an executor may still be computing it */
        return -1;
    const char *format = buffer_format(self->t.dtype);
    if (format == NULL || !pd_is_cpu(&self->t)) {
        PyErr_Format(PyExc_BufferError, "a %s tensor on %s has no buffer view",
                     pd_dtype_name(self->t.dtype), pd_place_type_name(&self->t.place));
        return -1;
    }
    if ((flags & PyBUF_ANY_CONTIGUOUS) && !pd_is_contiguous(&self->t)) {
        PyErr_SetString(PyExc_BufferError, "the tensor is strided, not contiguous");
        return -1;
    }
    view->obj = (PyObject *)self;
    Py_INCREF(self);
    view->buf = self->t.data;
    view->itemsize = (Py_ssize_t)pd_dtype_size(self->t.dtype);
    view->len = (Py_ssize_t)pd_nbytes(&self->t);
    view->readonly = 0;
    view->ndim = self->t.ndim;
    view->format = (flags & PyBUF_FORMAT) ? (char *)format : NULL;
    view->shape = self->view_shape;
    view->strides = self->view_strides;
    view->suboffsets = NULL;
    view->internal = NULL;
    return 0;
}

static PyBufferProcs tensor_as_buffer = {(getbufferproc)tensor_getbuffer, NULL};

/* --- Attributes and methods ---------------------------------------------------------------- */

static PyObject *tensor_shape(pdext_TensorObject *self, void *unused)
{
    (void)unused;
    PyObject *tuple = PyTuple_New(self->t.ndim);
    if (tuple == NULL)
        return NULL;
    for (int32_t d = 0; d < self->t.ndim; ++d) {
        PyObject *v = PyLong_FromLongLong(self->t.shape[d]);
        if (v == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, d, v);
    }
    return tuple;
}

static PyObject *tensor_dtype(pdext_TensorObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_FromString(pd_dtype_name(self->t.dtype));
}

static PyObject *tensor_device(pdext_TensorObject *self, void *unused)
{
    (void)unused;
    return pdext_place_str(self->t.place);
}

static PyObject *tensor_numpy(pdext_TensorObject *self, PyObject *unused)
{
    (void)unused;
    if (pdext_tensor_ready(self) < 0) /* an executor may still be computing it */
        return NULL;
    pd_tensor t;
    pd_tensor_retain(&t, &self->t);
    return pdext_tensor_to_numpy(&t);
}

static PyObject *tensor_dlpack(pdext_TensorObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"stream", NULL};
    PyObject *stream = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$O", kw, &stream))
        return NULL;
    if (pdext_tensor_ready(self) < 0) /* an executor may still be computing it */
        return NULL;
    if (stream != Py_None && pd_is_gpu(&self->t)) {
        /* The consumer reads on its stream `stream` (a CUDA handle; 1 and 2 name CUDA's
         * default streams, -1 asks for no order): it waits, on the device, for the work
         * pdext queued that uses this memory (pd_tensor_ready_on: one event, nothing when
         * the consumer names the stream that work is on, as torch does once pdext runs on
         * torch's stream). The host waits only when no stream is named (0, or no int). */
        long number = PyLong_Check(stream) ? PyLong_AsLong(stream) : 0;
        PyErr_Clear(); /* a handle past LONG_MAX: not -1 */
        void *theirs = PyLong_Check(stream) ? PyLong_AsVoidPtr(stream) : NULL;
        if (PyErr_Occurred())
            return NULL;
        pd_status st = PD_OK;
        if (number != -1) {
            PyThreadState *ts = PyEval_SaveThread();
            if (theirs != NULL) {
                st = pd_tensor_ready_on(&self->t, theirs);
            } else { /* 0 names no CUDA stream (the protocol forbids it): the host waits */
                pd_stream_t *mine = pd_stream_current(self->t.place);
                st = mine ? pd_stream_synchronize(mine) : pd_last_status();
            }
            PyEval_RestoreThread(ts);
        }
        if (st != PD_OK)
            return pdext_raise_status(st, "pdext.Tensor.__dlpack__()");
    }
    return pdext_dlpack_export(self);
}

static PyObject *tensor_dlpack_device(pdext_TensorObject *self, PyObject *unused)
{
    (void)unused;
    int32_t type, id;
    if (!pd_place_to_dlpack(self->t.place, &type, &id) || type == PD_DLPACK_EXT_DEV) {
        PyErr_Format(PyExc_BufferError, "DLPack export of %s tensors is not supported",
                     pd_place_type_name(&self->t.place));
        return NULL;
    }
    return Py_BuildValue("(ii)", (int)type, (int)id);
}

static PyObject *tensor_repr(pdext_TensorObject *self)
{
    char shape[PD_MAX_DIMS * 22 + 4] = "";
    size_t used = 0;
    for (int32_t d = 0; d < self->t.ndim; ++d)
        used += (size_t)snprintf(shape + used, sizeof shape - used, d ? ", %lld" : "%lld",
                                 (long long)self->t.shape[d]);
    return PyUnicode_FromFormat("pdext.Tensor(shape=(%s%s), dtype=%s, place=%s)", shape,
                                self->t.ndim == 1 ? "," : "", pd_dtype_name(self->t.dtype),
                                pd_place_type_name(&self->t.place));
}

static PyMethodDef tensor_methods[] =
    {{"numpy", (PyCFunction)tensor_numpy, METH_NOARGS,
      "A numpy array over this tensor's memory (no copy); a device tensor raises TypeError: "
      "copy it first (t.to('cpu').numpy())."},
     {"__dlpack__", (PyCFunction)(void (*)(void))tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
      "DLPack export (a 'dltensor' capsule); the consumer shares this tensor's memory."},
     {"__array__", (PyCFunction)(void (*)(void))pdext_tensor_array, METH_VARARGS | METH_KEYWORDS,
      "A numpy array over this tensor's memory, once it is computed (py_executor.c)."},
     {"__dlpack_device__", (PyCFunction)tensor_dlpack_device, METH_NOARGS,
      "(device type, device id) in DLPack's numbering: (1, 0) CPU, (2, N) gpu:N, (3, 0) "
      "gpu_pinned."},
     {"to", pdext_tensor_to, METH_O,
      "to(device) -> Tensor\nA copy on device 'cpu', 'gpu:N' (or 'cuda:N') or 'gpu_pinned'; "
      "the Tensor itself when it is there already. A copy to the host waits for the device."},
     {NULL, NULL, 0, NULL}};

static PyGetSetDef tensor_getset[] = {{"shape", (getter)tensor_shape, NULL,
                                       "The shape, a tuple of ints.", NULL},
                                      {"dtype", (getter)tensor_dtype, NULL,
                                       "The dtype's name (\"float32\", ...).", NULL},
                                      {"device", (getter)tensor_device, NULL,
                                       "Where it lives: \"cpu\", \"gpu:N\", \"gpu_pinned\".", NULL},
                                      {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject pdext_TensorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pdext.Tensor",
    .tp_basicsize = sizeof(pdext_TensorObject),
    .tp_dealloc = (destructor)tensor_dealloc,
    .tp_repr = (reprfunc)tensor_repr,
    .tp_as_buffer = &tensor_as_buffer,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A pdext tensor: memory owned by pdext, shared with numpy arrays and DLPack "
              "consumers without copying. Make one with pdext.from_dlpack(obj) or get one "
              "from an op called on Tensors.",
    .tp_methods = tensor_methods,
    .tp_getset = tensor_getset,
};
