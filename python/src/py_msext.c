/*
 * py_msext.c - what _pdext does for MindSpore CustomOpBuilder sources (ms_extension/api.h):
 * the bridge table those pybind11 modules use to turn Python objects into pd_tensors and back
 * (sdk/include/ms_extension/bridge.h, published as the capsule _pdext._ms_bridge). The JIT
 * builds the pybind11 extension itself (_pdext.load(..., library_only=True), py_library.c),
 * and pdext.CustomOpBuilder then imports it.
 *
 * Why here and not in the header: the conversions are the ones pdext's own op calls make
 * (py_input.c, py_op.c), so a CustomOpBuilder function takes and returns exactly what a pdext
 * op does, and a pending pdext.Tensor is waited for where Python reads it. mindspore.Tensors,
 * the arguments such sources are written for, have their own zero-copy path below (through
 * the C getters of MindSpore's tensor type and TensorPy.from_numpy), since asnumpy() costs
 * more than the whole call.
 */
#include "py_executor.h"
#include "py_internal.h"

#include "ms_extension/bridge.h"
#include "pdext_jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- mindspore.Tensor, read and made through TensorPy's own C methods ---------------------
 *
 * Why not asnumpy() / Tensor.from_numpy: in mindspore 2.10 asnumpy() costs 60-120 us (it
 * synchronises and builds an array with a capsule base) and from_numpy 7-18 us, which made a
 * call on mindspore.Tensors slower than MindSpore's own. The C type under mindspore.Tensor
 * (mindspore._c_expression.TensorPy) has getters that cost 0.1-0.2 us each: _dtype (a dtype
 * singleton), _shape (a tuple), stride() (element strides, right for views, where _strides
 * gives the dense ones), device ("CPU"), and _data_ptr() (the host address of element
 * [0, ...], its storage offset applied, after MindSpore's queued work on the tensor is done);
 * and TensorPy.from_numpy takes a C-contiguous array without copying in ~1.5 us, keeping the
 * array until the mindspore.Tensor goes. They are looked up once, on the first
 * mindspore.Tensor; a MindSpore without them gets the asnumpy() / Tensor.from_numpy path. */

enum { MS_N_DTYPES = 15 };
static struct {
    int state;          /* 0: not looked up; 1: the fast path; -1: the asnumpy() fallback */
    PyTypeObject *type; /* TensorPy (every mindspore.Tensor is an instance) */
    PyObject *get_dtype, *get_shape, *get_device; /* getset descriptors */
    PyObject *stride, *data_ptr;                  /* method descriptors */
    PyObject *from_numpy;                         /* TensorPy.from_numpy */
    PyObject *dtype_obj[MS_N_DTYPES];             /* mindspore.common.dtype singletons */
    pd_data_type dtype_pd[MS_N_DTYPES];
} ms_api;

static const struct {
    const char *name;
    pd_data_type dtype;
} ms_dtype_names[MS_N_DTYPES] = {
    {"bool_", PD_BOOL},        {"int8", PD_INT8},           {"int16", PD_INT16},
    {"int32", PD_INT32},       {"int64", PD_INT64},         {"uint8", PD_UINT8},
    {"uint16", PD_UINT16},     {"uint32", PD_UINT32},       {"uint64", PD_UINT64},
    {"float16", PD_FLOAT16},   {"float32", PD_FLOAT32},     {"float64", PD_FLOAT64},
    {"bfloat16", PD_BFLOAT16}, {"complex64", PD_COMPLEX64}, {"complex128", PD_COMPLEX128},
};

/* A new reference to TensorPy's attribute `name` (from its own dict, so that a Python
 * subclass's override is not taken), or NULL (no exception) when it lacks one. */
static PyObject *ms_api_attr(PyTypeObject *type, const char *name)
{
    PyObject *v = PyDict_GetItemString(type->tp_dict, name);
    if (v == NULL)
        return NULL;
    if (PyObject_TypeCheck(v, &PyStaticMethod_Type))
        return PyObject_GetAttrString((PyObject *)type, name);
    Py_INCREF(v);
    return v;
}

/* Looks MindSpore's methods up from `tp`, the type of a mindspore.Tensor (a subclass of
 * TensorPy). Sets ms_api.state; never raises. */
static void ms_api_init(PyTypeObject *tp)
{
    ms_api.state = -1;
    PyObject *mro = tp->tp_mro;
    PyTypeObject *base = NULL;
    for (Py_ssize_t k = 0; mro != NULL && k < PyTuple_GET_SIZE(mro); ++k) {
        PyTypeObject *c = (PyTypeObject *)PyTuple_GET_ITEM(mro, k);
        const char *dot = strrchr(c->tp_name, '.');
        if (strcmp(dot != NULL ? dot + 1 : c->tp_name, "TensorPy") == 0)
            base = c;
    }
    PyObject *dtypes = base != NULL ? PyImport_ImportModule("mindspore.common.dtype") : NULL;
    if (dtypes == NULL) {
        PyErr_Clear();
        return;
    }
    PyObject *a[6] = {ms_api_attr(base, "_dtype"),    ms_api_attr(base, "_shape"),
                      ms_api_attr(base, "device"),    ms_api_attr(base, "stride"),
                      ms_api_attr(base, "_data_ptr"), ms_api_attr(base, "from_numpy")};
    bool ok = true;
    for (int k = 0; k < 6; ++k)
        ok = ok && a[k] != NULL &&
             (k >= 3 ? PyCallable_Check(a[k]) : Py_TYPE(a[k])->tp_descr_get != NULL);
    for (int k = 0; ok && k < MS_N_DTYPES; ++k) {
        ms_api.dtype_obj[k] = PyObject_GetAttrString(dtypes, ms_dtype_names[k].name);
        ms_api.dtype_pd[k] = ms_dtype_names[k].dtype;
        ok = ms_api.dtype_obj[k] != NULL;
    }
    Py_DECREF(dtypes);
    PyErr_Clear();
    if (!ok) {
        for (int k = 0; k < 6; ++k)
            Py_XDECREF(a[k]);
        for (int k = 0; k < MS_N_DTYPES; ++k)
            Py_CLEAR(ms_api.dtype_obj[k]);
        return;
    }
    /* Kept for the life of the process, as MindSpore's module is. */
    Py_INCREF(base);
    ms_api.type = base;
    ms_api.get_dtype = a[0];
    ms_api.get_shape = a[1];
    ms_api.get_device = a[2];
    ms_api.stride = a[3];
    ms_api.data_ptr = a[4];
    ms_api.from_numpy = a[5];
    ms_api.state = 1;
}

/* 1 when obj is a mindspore.Tensor, 0 when not; the first one met sets up ms_api. */
static int is_mindspore(PyObject *obj)
{
    if (ms_api.state == 1)
        return PyObject_TypeCheck(obj, ms_api.type);
    PyObject *modname = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__module__");
    const char *text = modname && PyUnicode_Check(modname) ? PyUnicode_AsUTF8(modname) : NULL;
    int yes = text != NULL && strncmp(text, "mindspore.", 10) == 0;
    Py_XDECREF(modname);
    PyErr_Clear();
    if (yes && ms_api.state == 0)
        ms_api_init(Py_TYPE(obj));
    return yes;
}

static PyObject *ms_get(PyObject *descr, PyObject *obj)
{
    return Py_TYPE(descr)->tp_descr_get(descr, obj, (PyObject *)Py_TYPE(obj));
}

/* Reads int64 sequence `seq` (a tuple or list of ints) into out[0..n-1]; -1 with an
 * exception when it is none or longer than PD_MAX_DIMS. */
static int ms_int64s(PyObject *seq, const char *what, int64_t *out, int32_t *n)
{
    if (seq == NULL)
        return -1;
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(fast);
    int rc = 0;
    if (len > PD_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError,
                     "ms_extension: a mindspore.Tensor argument has %zd dimensions; pdext "
                     "tensors have at most %d",
                     len, PD_MAX_DIMS);
        rc = -1;
    }
    for (Py_ssize_t d = 0; rc == 0 && d < len; ++d) {
        out[d] = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(fast, d));
        if (out[d] == -1 && PyErr_Occurred())
            rc = -1;
    }
    *n = (int32_t)len;
    Py_DECREF(fast);
    return rc;
}

/* Fills *t as a borrowed view of mindspore.Tensor `obj` (its memory, no copy, strided views
 * kept strided); the caller keeps obj alive while *t is used. 0, or -1 with an exception. */
static int ms_borrow(PyObject *obj, pd_tensor *t)
{
    static const char who[] = "ms_extension: a mindspore.Tensor argument";
    memset(t, 0, sizeof *t);
    PyObject *dev = ms_get(ms_api.get_device, obj);
    if (dev == NULL)
        return -1;
    const char *dev_name = PyUnicode_Check(dev) ? PyUnicode_AsUTF8(dev) : NULL;
    if (dev_name == NULL || strncmp(dev_name, "CPU", 3) != 0) {
        PyErr_Format(PyExc_ValueError,
                     "%s is on device %R; pdext's ms_extension takes CPU tensors (move it with "
                     "tensor.move_to(\"CPU\"))",
                     who, dev);
        Py_DECREF(dev);
        return -1;
    }
    Py_DECREF(dev);
    PyObject *dtype = ms_get(ms_api.get_dtype, obj);
    if (dtype == NULL)
        return -1;
    t->dtype = PD_UNDEFINED;
    for (int k = 0; k < MS_N_DTYPES && t->dtype == PD_UNDEFINED; ++k)
        if (dtype == ms_api.dtype_obj[k])
            t->dtype = ms_api.dtype_pd[k];
    for (int k = 0; k < MS_N_DTYPES && t->dtype == PD_UNDEFINED; ++k) {
        int eq = PyObject_RichCompareBool(dtype, ms_api.dtype_obj[k], Py_EQ);
        if (eq < 0)
            PyErr_Clear();
        if (eq > 0)
            t->dtype = ms_api.dtype_pd[k];
    }
    if (t->dtype == PD_UNDEFINED) {
        PyErr_Format(PyExc_TypeError,
                     "%s has dtype %S, which pdext has no dtype for (it takes bool, int8..int64, "
                     "uint8..uint64, float16/32/64, bfloat16, complex64/128)",
                     who, dtype);
        Py_DECREF(dtype);
        return -1;
    }
    Py_DECREF(dtype);
    int32_t ndim = 0, nstride = 0;
    PyObject *shape = ms_get(ms_api.get_shape, obj);
    int rc = ms_int64s(shape, "mindspore.Tensor._shape", t->shape, &ndim);
    Py_XDECREF(shape);
    if (rc < 0)
        return -1;
    PyObject *strides = PyObject_Vectorcall(ms_api.stride, &obj, 1, NULL);
    rc = ms_int64s(strides, "mindspore.Tensor.stride()", t->strides, &nstride);
    Py_XDECREF(strides);
    if (rc < 0)
        return -1;
    PyObject *ptr = PyObject_Vectorcall(ms_api.data_ptr, &obj, 1, NULL);
    t->data = ptr != NULL ? PyLong_AsVoidPtr(ptr) : NULL;
    Py_XDECREF(ptr);
    if (PyErr_Occurred())
        return -1;
    if (t->data == NULL) {
        /* A tensor made with an initializer (init=...) has no memory until its data is made,
         * which asnumpy() does first too. */
        PyObject *done = PyObject_CallMethod(obj, "init_data", NULL);
        Py_XDECREF(done);
        ptr = done != NULL ? PyObject_Vectorcall(ms_api.data_ptr, &obj, 1, NULL) : NULL;
        t->data = ptr != NULL ? PyLong_AsVoidPtr(ptr) : NULL;
        Py_XDECREF(ptr);
        if (PyErr_Occurred())
            return -1;
    }
    t->ndim = ndim;
    t->place = pd_place_cpu();
    int64_t step = 1, n = 1;
    bool dense = true, ok = nstride == ndim;
    for (int32_t d = ndim - 1; ok && d >= 0; --d) {
        ok = t->shape[d] >= 0 && !__builtin_mul_overflow(n, t->shape[d], &n);
        if (t->shape[d] != 1 && t->strides[d] != step)
            dense = false;
        step *= t->shape[d] > 0 ? t->shape[d] : 1;
    }
    if (!ok) {
        PyErr_Format(PyExc_ValueError,
                     "%s has a shape pdext cannot take (%d dims, %d strides, a negative dim or "
                     "more elements than int64 counts)",
                     who, (int)ndim, (int)nstride);
        return -1;
    }
    size_t size = pd_dtype_size(t->dtype);
    size_t align = pd_dtype_is_complex(t->dtype) ? size / 2 : size;
    if (n > 0 && (t->data == NULL || (uintptr_t)t->data % align != 0)) {
        PyErr_Format(PyExc_ValueError, "%s has %s memory", who,
                     t->data == NULL ? "no" : "misaligned");
        return -1;
    }
    if (dense || n == 0) {
        step = 1;
        for (int32_t d = ndim - 1; d >= 0; --d) {
            t->strides[d] = step;
            step *= t->shape[d];
        }
    }
    t->layout = dense || n == 0 ? PD_LAYOUT_DENSE : PD_LAYOUT_STRIDED;
    return 0;
}

/* The asnumpy() fallback (a MindSpore without the methods above): a numpy array sharing the
 * tensor's memory (a copy for a strided view). */
static PyObject *mindspore_array(PyObject *obj)
{
    return PyObject_CallMethod(obj, "asnumpy", NULL); /* NULL with mindspore's exception */
}

/* A borrow record keeping `owner` (a new reference moves in) for the call. */
static int keep_owner(PyObject *owner, void **keep)
{
    pdext_borrow *b = PyMem_Calloc(1, sizeof *b);
    if (b == NULL) {
        Py_DECREF(owner);
        PyErr_NoMemory();
        return -1;
    }
    b->buffer_owner = owner;
    *keep = b;
    return 1;
}

static int bridge_tensor_in(void *o, pd_tensor *out, void **keep)
{
    PyObject *obj = o;
    *keep = NULL;
    if (Py_TYPE(obj) == &pdext_TensorType) {
        /* The tensor itself, retained: a pending one stays pending (the executor orders). */
        pd_tensor_retain(out, &((pdext_TensorObject *)obj)->t);
        return 1;
    }
    int numpy = pdext_numpy_seen();
    if (numpy < 0)
        return -1;
    /* A mindspore.Tensor once its type is known: one type check. DLPack producers are asked
     * before the first one is looked for, so that they pay no attribute look-up for it. */
    bool ms_tensor = ms_api.state == 1 && PyObject_TypeCheck(obj, ms_api.type);
    PyObject *src = obj, *made = NULL;
    if (!ms_tensor && !((numpy == 1 && PyArray_Check(obj)) || PyCapsule_CheckExact(obj) ||
                        PyObject_HasAttrString(obj, "__dlpack__"))) {
        if (!is_mindspore(obj))
            return 0; /* no tensor: the argument does not match */
        ms_tensor = ms_api.state == 1;
        if (!ms_tensor) {
            made = mindspore_array(obj);
            if (made == NULL)
                return -1;
            src = made;
        }
    }
    if (ms_tensor) {
        if (ms_borrow(obj, out) < 0)
            return -1;
        Py_INCREF(obj); /* its memory is the call's until release */
        return keep_owner(obj, keep);
    }
    pdext_borrow *b = PyMem_Calloc(1, sizeof *b);
    if (b == NULL) {
        Py_XDECREF(made);
        PyErr_NoMemory();
        return -1;
    }
    const pdext_input_name who = {"ms_extension", "Tensor argument", -1};
    int rc = pdext_input_borrow(src, false, &who, out, b);
    Py_XDECREF(made); /* b keeps what it needs of it */
    if (rc < 0) {
        PyMem_Free(b);
        return -1;
    }
    *keep = b;
    return 1;
}

static void bridge_release(void *keep)
{
    if (keep == NULL)
        return;
    pdext_borrow_release(keep);
    PyMem_Free(keep);
}

/* Waits (without the GIL) until a pending *t is computed; -1 with its error, *t released. */
static int wait_ready(pd_tensor *t)
{
    if (!pd_tensor_is_pending(t))
        return 0;
    PyThreadState *ts = PyEval_SaveThread();
    pd_status st = pd_tensor_wait(NULL, t);
    PyEval_RestoreThread(ts);
    if (st == PD_OK)
        return 0;
    pdext_raise_status(st, NULL);
    pd_tensor_release(t);
    return -1;
}

/* A mindspore.Tensor sharing *t's memory (the reference moves in), waited for (MindSpore
 * reads it when it likes): TensorPy.from_numpy of a numpy array over it, whose base holds *t
 * as long as the mindspore.Tensor keeps the array (~1.5 us; TensorPy.from_dlpack takes 3-5
 * us, the Python-level Tensor.from_numpy adds a flags check). A strided result is made dense
 * first: from_numpy shares only C-contiguous arrays. */
static PyObject *mindspore_result(pd_tensor *t)
{
    if (wait_ready(t) < 0)
        return NULL;
    if ((t->storage == NULL || !pd_is_contiguous(t)) && pdext_tensor_own(t) < 0)
        return NULL;
    if (pdext_numpy_require() < 0) {
        pd_tensor_release(t);
        return NULL;
    }
    PyObject *array = pdext_tensor_to_numpy(t);
    if (array == NULL)
        return NULL;
    PyObject *result;
    if (ms_api.state == 1) {
        result = PyObject_CallOneArg(ms_api.from_numpy, array);
    } else {
        PyObject *ms = PyImport_ImportModule("mindspore");
        PyObject *cls = ms ? PyObject_GetAttrString(ms, "Tensor") : NULL;
        result = cls ? PyObject_CallMethod(cls, "from_numpy", "O", array) : NULL;
        Py_XDECREF(cls);
        Py_XDECREF(ms);
    }
    Py_DECREF(array);
    return result;
}

static void *bridge_tensor_out(void *f, pd_tensor *t)
{
    PyObject *first = f;
    if (first != NULL && !pdext_executor_active() && is_mindspore(first))
        return mindspore_result(t);
    /* A numpy result offers no later point to wait at: wait now. */
    bool numpy_kind = !pdext_executor_active() &&
                      (first == NULL || (PyArray_API != NULL && PyArray_Check(first)));
    if (numpy_kind && wait_ready(t) < 0)
        return NULL;
    return pdext_result_like(first, t);
}

static pd_executor *bridge_current_executor(int32_t *stream)
{
    return pdext_executor_current(stream);
}

static void bridge_raise(pd_status status, const char *text)
{
    pdext_raise_text(status, NULL, text);
}

static const pdext_ms_bridge bridge = {sizeof(pdext_ms_bridge), bridge_tensor_in,
                                       bridge_release,          bridge_tensor_out,
                                       bridge_current_executor, bridge_raise};

int pdext_msext_add_bridge(PyObject *module)
{
    PyObject *capsule = PyCapsule_New((void *)&bridge, PDEXT_MS_BRIDGE_NAME, NULL);
    if (capsule == NULL)
        return -1;
    if (PyModule_AddObject(module, "_ms_bridge", capsule) < 0) {
        Py_DECREF(capsule);
        return -1;
    }
    return 0;
}
