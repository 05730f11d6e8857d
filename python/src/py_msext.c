/*
 * py_msext.c - what _pdext does for MindSpore CustomOpBuilder sources (ms_extension/api.h):
 * the bridge table those pybind11 modules use to turn Python objects into pd_tensors and back
 * (sdk/include/ms_extension/bridge.h, published as the capsule _pdext._ms_bridge). The JIT
 * builds the pybind11 extension itself (_pdext.load(..., library_only=True), py_library.c),
 * and pdext.CustomOpBuilder then imports it.
 *
 * Why here and not in the header: the conversions are the ones pdext's own op calls make
 * (py_input.c, py_op.c), so a CustomOpBuilder function takes and returns exactly what a pdext
 * op does, and a pending pdext.Tensor is waited for where Python reads it.
 */
#include "py_executor.h"
#include "py_internal.h"

#include "ms_extension/bridge.h"
#include "pdext_jit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_mindspore(PyObject *obj);

/* mindspore.Tensor has no __dlpack__. Its asnumpy() is a numpy array sharing the tensor's
 * memory (after MindSpore's queued work on it), in microseconds, where mindspore.to_dlpack
 * takes milliseconds. NULL (no exception) when obj is no MindSpore tensor. */
static PyObject *mindspore_array(PyObject *obj)
{
    if (!is_mindspore(obj))
        return NULL;
    return PyObject_CallMethod(obj, "asnumpy", NULL); /* NULL with mindspore's exception */
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
    PyObject *src = obj, *made = NULL;
    if (!((numpy == 1 && PyArray_Check(obj)) || PyCapsule_CheckExact(obj) ||
          PyObject_HasAttrString(obj, "__dlpack__"))) {
        made = mindspore_array(obj);
        if (made == NULL)
            return PyErr_Occurred() ? -1 : 0; /* no tensor: the argument does not match */
        src = made;
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

/* 1 when obj is a MindSpore tensor, 0 when not. */
static int is_mindspore(PyObject *obj)
{
    PyObject *modname = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__module__");
    const char *text = modname && PyUnicode_Check(modname) ? PyUnicode_AsUTF8(modname) : NULL;
    int yes = text != NULL && strncmp(text, "mindspore.", 10) == 0;
    Py_XDECREF(modname);
    PyErr_Clear();
    return yes;
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

/* A mindspore.Tensor sharing *t's memory (the reference moves in), waited for:
 * mindspore.Tensor.from_numpy of a numpy array over it (microseconds; mindspore.from_dlpack
 * takes milliseconds). */
static PyObject *mindspore_result(pd_tensor *t)
{
    if (wait_ready(t) < 0)
        return NULL;
    if (t->storage == NULL && pdext_tensor_own(t) < 0)
        return NULL;
    if (pdext_numpy_require() < 0) {
        pd_tensor_release(t);
        return NULL;
    }
    PyObject *array = pdext_tensor_to_numpy(t);
    if (array == NULL)
        return NULL;
    PyObject *ms = PyImport_ImportModule("mindspore");
    PyObject *cls = ms ? PyObject_GetAttrString(ms, "Tensor") : NULL;
    PyObject *result = cls ? PyObject_CallMethod(cls, "from_numpy", "O", array) : NULL;
    Py_XDECREF(cls);
    Py_XDECREF(ms);
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
