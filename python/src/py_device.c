/*
 * py_device.c - device tensors in the Python front: which place a DLPack device is, the
 * stream argument of __dlpack__ for CUDA producers, a place's name and Tensor.to, and the
 * current stream of torch for a torch CUDA tensor.
 *
 * The DLPack Python protocol orders work across libraries by stream: the consumer passes the
 * stream it will run on (for CUDA an int handle, 1 for the legacy default stream) and the
 * producer makes that stream wait for its pending work before handing the capsule out. pdext
 * runs a call on the thread's current stream of the inputs' device (pd_stream_current), so
 * that is the stream it names.
 */
#include "py_device.h"

#include "pd_device.h"
#include "py_executor.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

pd_place pdext_dl_place(pdext_dl_device device)
{
    if (device.device_type != PDEXT_DL_CPU && device.device_type != PDEXT_DL_CUDA &&
        device.device_type != PDEXT_DL_CUDA_HOST)
        return pd_place_make(PD_PLACE_UNDEFINED, 0);
    return pd_place_from_dlpack(device.device_type, device.device_id, 0);
}

/* obj.__dlpack_device__() as (type, id); 0 with *found false when obj has none, -1 with an
 * exception. */
static int dlpack_device_of(PyObject *obj, pdext_dl_device *dev, bool *found)
{
    *found = false;
    PyObject *method = PyObject_GetAttrString(obj, "__dlpack_device__");
    if (method == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *pair = PyObject_CallNoArgs(method);
    Py_DECREF(method);
    if (pair == NULL)
        return -1;
    int type = 0, id = 0;
    PyObject *id_obj = NULL;
    int ok = PyTuple_Check(pair) && PyArg_ParseTuple(pair, "iO", &type, &id_obj);
    /* Paddle 3 answers (kDLCPU, None) for a CPU tensor: no id is device 0. */
    if (ok && id_obj != Py_None) {
        long v = PyLong_Check(id_obj) ? PyLong_AsLong(id_obj) : -1;
        ok = PyLong_Check(id_obj) && !PyErr_Occurred() && v >= INT_MIN && v <= INT_MAX;
        id = (int)v;
    }
    Py_DECREF(pair);
    if (!ok) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError,
                         "%.100s.__dlpack_device__() must return a (device type, device id) "
                         "tuple of ints",
                         Py_TYPE(obj)->tp_name);
        return -1;
    }
    dev->device_type = type;
    dev->device_id = id;
    *found = true;
    return 0;
}

/* pdext's wrappers of torch's streams (pd_stream_wrap), per thread as torch's current streams
 * are: a handful at most (one or two per device in use); they live as long as the thread's
 * Python calls may use them, so they are never destroyed. */
#define TORCH_STREAMS_MAX 8
static _Thread_local struct {
    pd_place place;
    pd_device_stream handle;
    pd_stream_t *stream;
} torch_streams[TORCH_STREAMS_MAX];
static _Thread_local int torch_stream_count;

/* For a torch CUDA tensor: makes torch's current stream of its device this thread's current
 * stream for `place`, so the call runs on it and the DLPack exchange names it: torch has
 * nothing to wait for on its side (no event), and pdext's output, read on that same stream,
 * nothing on pdext's (no synchronize). torch's default stream is the legacy default stream,
 * handle 0, which pdext cannot wrap (0 means "none" to it): it is named by CUDA's other
 * handle for the same stream, cudaStreamLegacy (1), as DLPack and torch_native.cpp name it.
 * A thread cycling through more streams than the table holds runs on pdext's default stream
 * (the exchange orders it, with an event each way). 0, or -1 with an exception. */
static int follow_torch_stream(PyObject *obj, pd_place place)
{
    PyObject *h = pdext_torch_stream(NULL, obj);
    if (h == NULL)
        return -1;
    if (h == Py_None) { /* not a torch CUDA tensor */
        Py_DECREF(h);
        return 0;
    }
    void *handle = PyLong_AsVoidPtr(h);
    Py_DECREF(h);
    if (PyErr_Occurred())
        return -1;
    if (handle == NULL)
        handle = (void *)(uintptr_t)1; /* cudaStreamLegacy */
    pd_stream_t *stream = NULL;
    for (int i = 0; i < torch_stream_count; ++i)
        if (torch_streams[i].handle == handle && pd_place_equal(torch_streams[i].place, place))
            stream = torch_streams[i].stream;
    if (stream == NULL && torch_stream_count < TORCH_STREAMS_MAX) {
        if (pd_stream_wrap(place, handle, &stream) != PD_OK) {
            pdext_raise_status(pd_last_status(), NULL);
            return -1;
        }
        torch_streams[torch_stream_count].place = place;
        torch_streams[torch_stream_count].handle = handle;
        torch_streams[torch_stream_count++].stream = stream;
    }
    if (pd_stream_set_current(place, stream) != PD_OK) { /* NULL: pdext's default stream */
        pdext_raise_status(pd_last_status(), NULL);
        return -1;
    }
    return 0;
}

PyObject *pdext_dlpack_request(PyObject *obj, PyObject *method)
{
    pdext_dl_device dev;
    bool found;
    if (dlpack_device_of(obj, &dev, &found) < 0)
        return NULL;
    if (!found || dev.device_type != PDEXT_DL_CUDA)
        return PyObject_CallNoArgs(method);
    pd_place place = pdext_dl_place(dev);
    if (place.type != PD_PLACE_GPU) {
        PyErr_Format(PyExc_ValueError, "%.100s is on CUDA device %d, which is no device number",
                     Py_TYPE(obj)->tp_name, (int)dev.device_id);
        return NULL;
    }
    if (follow_torch_stream(obj, place) < 0)
        return NULL;
    pd_stream_t *stream = pd_stream_current(place); /* loads the CUDA plug-in on first use */
    if (stream == NULL)
        return pdext_raise_status(PD_ERR_UNAVAILABLE, NULL);
    pd_device_stream handle = pd_stream_handle(stream);
    PyObject *s = handle == NULL ? PyLong_FromLong(1) : PyLong_FromVoidPtr(handle);
    if (s == NULL)
        return NULL;
    PyObject *kwnames = Py_BuildValue("(s)", "stream");
    PyObject *capsule = NULL;
    if (kwnames != NULL) {
        PyObject *argv[1] = {s};
        capsule = PyObject_Vectorcall(method, argv, 0, kwnames);
    }
    Py_XDECREF(kwnames);
    Py_DECREF(s);
    return capsule;
}

PyObject *pdext_place_str(pd_place place)
{
    const char *name = pd_place_type_name(&place);
    if (place.type == PD_PLACE_CPU || place.type == PD_PLACE_GPU_PINNED)
        return PyUnicode_FromString(name);
    return PyUnicode_FromFormat("%s:%d", name, (int)place.device_id);
}

/* The place named by `device` ("cpu", "gpu", "gpu:N", "cuda", "cuda:N", "gpu_pinned"); an
 * undefined place with a ValueError for anything else. */
static pd_place parse_place(PyObject *device)
{
    pd_place none = pd_place_make(PD_PLACE_UNDEFINED, 0);
    const char *s = PyUnicode_Check(device) ? PyUnicode_AsUTF8(device) : NULL;
    if (s == NULL) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError,
                         "pdext.Tensor.to(): device must be a str such as 'cpu' or 'gpu:0', "
                         "got %.100s",
                         Py_TYPE(device)->tp_name);
        return none;
    }
    if (strcmp(s, "cpu") == 0)
        return pd_place_cpu();
    if (strcmp(s, "gpu_pinned") == 0 || strcmp(s, "cuda_host") == 0)
        return pd_place_gpu_pinned();
    const char *rest = strncmp(s, "gpu", 3) == 0    ? s + 3
                       : strncmp(s, "cuda", 4) == 0 ? s + 4
                                                    : NULL;
    if (rest != NULL && *rest == '\0')
        return pd_place_gpu(0);
    if (rest != NULL && *rest == ':' && rest[1] >= '0' && rest[1] <= '9') {
        char *end;
        long id = strtol(rest + 1, &end, 10);
        if (*end == '\0' && id <= 0x7fffffffL)
            return pd_place_gpu((int32_t)id);
    }
    PyErr_Format(PyExc_ValueError,
                 "pdext.Tensor.to(): unknown device '%s'; expected 'cpu', 'gpu', 'gpu:N', "
                 "'cuda:N' or 'gpu_pinned'",
                 s);
    return none;
}

PyObject *pdext_tensor_to(PyObject *self, PyObject *device)
{
    pdext_TensorObject *tensor = (pdext_TensorObject *)self;
    pd_place place = parse_place(device);
    if (place.type == PD_PLACE_UNDEFINED)
        return NULL;
    if (pdext_tensor_ready(tensor) < 0) /* an executor may still be computing it */
        return NULL;
    if (pd_place_equal(place, tensor->t.place))
        return Py_NewRef(self);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    PyThreadState *ts = PyEval_SaveThread(); /* a copy to the host waits for the device */
    pd_status st = pd_tensor_copy_to(&out, &tensor->t, place);
    PyEval_RestoreThread(ts);
    if (st != PD_OK)
        return pdext_raise_status(st, "pdext.Tensor.to()");
    return pdext_tensor_wrap(&out);
}

/* The top-level module name of obj's type is "torch". */
static bool is_torch_object(PyObject *obj)
{
    PyObject *modname = PyObject_GetAttrString((PyObject *)Py_TYPE(obj), "__module__");
    bool torch = false;
    if (modname != NULL && PyUnicode_Check(modname)) {
        const char *m = PyUnicode_AsUTF8(modname);
        torch = m != NULL && strncmp(m, "torch", 5) == 0 && (m[5] == '\0' || m[5] == '.');
    }
    Py_XDECREF(modname);
    PyErr_Clear();
    return torch;
}

PyObject *pdext_torch_stream(PyObject *self, PyObject *obj)
{
    (void)self;
    if (!is_torch_object(obj))
        Py_RETURN_NONE;
    PyObject *is_cuda = PyObject_GetAttrString(obj, "is_cuda");
    int cuda = is_cuda == NULL ? -1 : PyObject_IsTrue(is_cuda);
    Py_XDECREF(is_cuda);
    if (cuda <= 0) {
        PyErr_Clear(); /* no is_cuda: not a tensor torch runs on a GPU */
        Py_RETURN_NONE;
    }
    /* torch.cuda.current_stream(obj.device).cuda_stream; torch is imported (obj is one of
     * its objects), so the import is a lookup in sys.modules. */
    PyObject *torch = PyImport_ImportModule("torch");
    PyObject *cuda_mod = torch ? PyObject_GetAttrString(torch, "cuda") : NULL;
    PyObject *device = cuda_mod ? PyObject_GetAttrString(obj, "device") : NULL;
    PyObject *stream = device ? PyObject_CallMethod(cuda_mod, "current_stream", "O", device) : NULL;
    PyObject *handle = stream ? PyObject_GetAttrString(stream, "cuda_stream") : NULL;
    Py_XDECREF(stream);
    Py_XDECREF(device);
    Py_XDECREF(cuda_mod);
    Py_XDECREF(torch);
    if (handle != NULL && !PyLong_Check(handle)) {
        PyErr_Format(PyExc_TypeError, "torch's current stream has a %.100s cuda_stream, not an int",
                     Py_TYPE(handle)->tp_name);
        Py_CLEAR(handle);
    }
    return handle;
}
