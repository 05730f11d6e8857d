/*
 * py_device.h - device tensors in the Python front: DLPack devices to places (through
 * pd_device.h's one mapping), the stream a consumer names in __dlpack__(stream=...),
 * pdext.Tensor's device, .to(device), and torch's current stream for a torch CUDA tensor.
 */
#ifndef PDEXT_PY_DEVICE_H
#define PDEXT_PY_DEVICE_H

#include "py_internal.h"

#include "py_dlpack.h"

/* The place of a DLPack device the front takes (kDLCPU, kDLCUDA, kDLCUDAHost); an undefined
 * place for any other. */
pd_place pdext_dl_place(pdext_dl_device device);

/* The DLPack capsule of `obj` from obj.__dlpack__(), asked the way the DLPack protocol says:
 * for a kDLCUDA producer (its __dlpack_device__()) with stream=S, S the stream pdext runs the
 * call on for that device in this thread (an int; 1 when it is the legacy default stream), so
 * the producer orders its pending work before ours; no argument for host memory. `method` is
 * obj.__dlpack__. A new reference, or NULL with an exception. */
PyObject *pdext_dlpack_request(PyObject *obj, PyObject *method);

/* "cpu", "gpu:N", "gpu_pinned", or "<type>:N" for a custom device: a new str. */
PyObject *pdext_place_str(pd_place place);

/* Tensor.to(device): a copy of the Tensor on `device` ("cpu", "gpu", "gpu:N", "cuda:N",
 * "gpu_pinned"); the Tensor itself when it is there already. */
PyObject *pdext_tensor_to(PyObject *self, PyObject *device);

/* _pdext._torch_stream(obj): torch's current stream on obj's device as an int
 * (torch.cuda.current_stream(dev).cuda_stream) when obj is a torch CUDA tensor, else None. */
PyObject *pdext_torch_stream(PyObject *self, PyObject *obj);

#endif /* PDEXT_PY_DEVICE_H */
