"""The CUDA entry of pdext.jax's XLA FFI handler (python/pdext/xla_ffi_cuda.c) without a GPU:
ctest serves the simulated device as pdext's CUDA plug-in (PDEXT_CUDA_PLUGIN), and a small C
driver plays XLA: it hands the entry a call frame over device buffers, with an FFI API whose
Stream_Get and DeviceOrdinal_Get give a stream of the simulated GPU and its ordinal, as XLA's
CUDA runtime does. gpu_ops.c's relu runs there on the call's stream (pd_stream). The real
thing, jaxlib's CUDA plug-in on a GPU, is test_jax.py's
test_relu_on_a_cuda_gpu_runs_on_xlas_stream."""

import ctypes
import os

import pytest

from conftest import require_framework

GPU_OPS = os.environ.get("PDEXT_PY_GPU_OPS")
if not GPU_OPS or not os.environ.get("PDEXT_CUDA_PLUGIN"):
    pytest.skip("needs PDEXT_PY_GPU_OPS and PDEXT_CUDA_PLUGIN (ctest sets both)",
                allow_module_level=True)

jax = require_framework("jax")

import numpy as np  # noqa: E402

DRIVER = r"""
#include "pdext.h"
#include "xla/ffi/api/c_api.h"

#include <stdio.h>
#include <string.h>

typedef XLA_FFI_Error *entry_fn(XLA_FFI_CallFrame *);

static char message[1024];
static XLA_FFI_Error *the_error = (XLA_FFI_Error *)&message; /* any non-NULL pointer */
static void *xla_stream;
static int32_t xla_device;
static int stream_asks;

static XLA_FFI_Error *error_create(XLA_FFI_Error_Create_Args *a)
{
    snprintf(message, sizeof message, "%s", a->message);
    return the_error;
}
static XLA_FFI_Error *stream_get(XLA_FFI_Stream_Get_Args *a)
{
    ++stream_asks;
    a->stream = xla_stream;
    return NULL;
}
static XLA_FFI_Error *ordinal_get(XLA_FFI_DeviceOrdinal_Get_Args *a)
{
    a->device_ordinal = xla_device;
    return NULL;
}

/* Runs entry on a frame for op `index` (`name`): relu of n float32 `in` on GPU `device`, its
 * result into `out`, `calls` times on one stream of that device (made here, as XLA's own).
 * 0, or -1 with the error in msg. *asks: how often the entry asked for the stream. older: the
 * API says a minor version `older` before the one the handler was built against. */
__attribute__((visibility("default"))) int pdx_relu(entry_fn *entry, int64_t index,
                                                    const char *name, const float *in,
                                                    float *out, int64_t n, int32_t device,
                                                    int calls, int older, int *asks, char *msg,
                                                    size_t size)
{
    pd_place gpu = pd_place_gpu(0), cpu = pd_place_cpu();
    pd_tensor host = PD_TENSOR_UNDEFINED, x = PD_TENSOR_UNDEFINED, y = PD_TENSOR_UNDEFINED;
    pd_tensor back = PD_TENSOR_UNDEFINED;
    pd_stream_t *stream = NULL;
    int rc = -1;
    msg[0] = '\0';
    if (pd_tensor_from_buffer(&host, (void *)in, PD_FLOAT32, cpu, 1, &n, NULL, NULL) != PD_OK ||
        pd_tensor_copy_to(&x, &host, gpu) != PD_OK ||
        pd_tensor_empty(&y, PD_FLOAT32, gpu, 1, &n) != PD_OK ||
        pd_stream_create(gpu, &stream) != PD_OK) {
        snprintf(msg, size, "driver: %s", pd_last_error());
        goto done;
    }
    xla_stream = pd_stream_handle(stream);
    xla_device = device;
    stream_asks = 0;

    XLA_FFI_Api api;
    memset(&api, 0, sizeof api);
    api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
    api.api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
    api.api_version.major_version = XLA_FFI_API_MAJOR;
    api.api_version.minor_version = XLA_FFI_API_MINOR - older; /* older: a jaxlib before */
    api.XLA_FFI_Error_Create = error_create;
    api.XLA_FFI_Stream_Get = stream_get;
    api.XLA_FFI_DeviceOrdinal_Get = ordinal_get;

    int64_t dims[1] = {n};
    XLA_FFI_Buffer xb = {XLA_FFI_Buffer_STRUCT_SIZE, NULL, XLA_FFI_DataType_F32, x.data, 1, dims};
    XLA_FFI_Buffer yb = {XLA_FFI_Buffer_STRUCT_SIZE, NULL, XLA_FFI_DataType_F32, y.data, 1, dims};
    XLA_FFI_ArgType at[1] = {XLA_FFI_ArgType_BUFFER};
    XLA_FFI_RetType rt[1] = {XLA_FFI_RetType_BUFFER};
    void *args[1] = {&xb}, *rets[1] = {&yb};

    int32_t one = 1;
    XLA_FFI_Scalar op = {XLA_FFI_DataType_S64, &index};
    XLA_FFI_ByteSpan op_name = {name, strlen(name)};
    XLA_FFI_Array counts = {XLA_FFI_DataType_S32, 1, &one};
    XLA_FFI_ByteSpan names[4] = {{"pd_op", 5}, {"pd_name", 7}, {"pd_in", 5}, {"pd_out", 6}};
    XLA_FFI_ByteSpan *name_ptrs[4] = {&names[0], &names[1], &names[2], &names[3]};
    XLA_FFI_AttrType types[4] = {XLA_FFI_AttrType_SCALAR, XLA_FFI_AttrType_STRING,
                                 XLA_FFI_AttrType_ARRAY, XLA_FFI_AttrType_ARRAY};
    void *values[4] = {&op, &op_name, &counts, &counts};

    XLA_FFI_CallFrame frame;
    memset(&frame, 0, sizeof frame);
    frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
    frame.api = &api;
    frame.ctx = (XLA_FFI_ExecutionContext *)&api; /* opaque to the handler */
    frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
    frame.args = (XLA_FFI_Args){XLA_FFI_Args_STRUCT_SIZE, NULL, 1, at, args};
    frame.rets = (XLA_FFI_Rets){XLA_FFI_Rets_STRUCT_SIZE, NULL, 1, rt, rets};
    frame.attrs = (XLA_FFI_Attrs){XLA_FFI_Attrs_STRUCT_SIZE, NULL, 4, types, name_ptrs, values};

    for (int i = 0; i < calls; ++i)
        if (entry(&frame) != NULL) {
            snprintf(msg, size, "%s", message);
            goto done;
        }
    *asks = stream_asks;
    /* XLA orders what follows by the stream: wait for it, then read Y back */
    if (pd_stream_synchronize(stream) != PD_OK || pd_tensor_copy_to(&back, &y, cpu) != PD_OK) {
        snprintf(msg, size, "driver: %s", pd_last_error());
        goto done;
    }
    memcpy(out, back.data, (size_t)n * sizeof(float));
    rc = 0;
done:
    pd_tensor_release(&back);
    pd_tensor_release(&y);
    pd_tensor_release(&x);
    pd_tensor_release(&host);
    if (stream != NULL)
        pd_stream_destroy(stream);
    return rc;
}
"""


@pytest.fixture(scope="module")
def sim(pdext, tmp_path_factory):
    """(the handler library, the driver's pdx_relu, custom_relu's index in the handler's
    table) for gpu_ops.c's relu registered through pdext.jax."""
    import pdext.jax as pj
    from pdext import _pdext

    ops = pdext.load_library(GPU_OPS)
    pj.register(ops)
    _, index = pj._target(ops.custom_relu)
    source = tmp_path_factory.mktemp("driver") / "pdx_driver.c"
    source.write_text(DRIVER)
    libpdext = _pdext._library_path()
    path = _pdext.load(
        "pdx_driver",
        [str(source)],
        include_dirs=[jax.ffi.include_dir()],
        ldflags=[libpdext, "-Wl,-rpath," + os.path.dirname(libpdext)],
        library_only=True,
    )
    driver = ctypes.CDLL(path)
    driver.pdx_relu.restype = ctypes.c_int
    c = ctypes
    driver.pdx_relu.argtypes = [c.c_void_p, c.c_int64, c.c_char_p, c.c_void_p, c.c_void_p,
                                c.c_int64, c.c_int32, c.c_int, c.c_int, c.POINTER(c.c_int),
                                c.c_char_p, c.c_size_t]
    handler = pj._load_handler()[0]
    return handler, driver.pdx_relu, index


def relu(sim, x, device=0, calls=1, name=b"custom_relu", older=0):
    handler, drive, index = sim
    entry = ctypes.cast(handler.pdext_xla_ffi_handler_cuda, ctypes.c_void_p)
    out = np.full_like(x, np.nan)
    asks = ctypes.c_int(-1)
    msg = ctypes.create_string_buffer(1024)
    rc = drive(entry, index, name, x.ctypes.data, out.ctypes.data, x.size, device, calls, older,
               ctypes.byref(asks), msg, len(msg))
    return rc, out, asks.value, msg.value.decode()


def test_cuda_entry_runs_the_op_on_xlas_device_buffers_and_stream(sim):
    x = np.random.default_rng(0).standard_normal(1000).astype(np.float32)
    rc, out, asks, msg = relu(sim, x, calls=3)
    assert rc == 0, msg
    np.testing.assert_array_equal(out, np.maximum(x, 0))
    assert asks == 3  # each call takes XLA's stream from the execution context


def test_cuda_entry_errors_come_back_as_ffi_errors(sim):
    x = np.ones(8, dtype=np.float32)
    # a device ordinal pdext has no such GPU for: pdext's message, not a crash
    rc, out, _, msg = relu(sim, x, device=99)
    assert rc == -1 and "99" in msg, msg
    # the op's name is checked against the table, as on the CPU
    rc, _, _, msg = relu(sim, x, name=b"custom_pair")
    assert rc == -1 and "the call is for op 'custom_pair'" in msg, msg


def test_cuda_entry_refuses_an_older_ffi_api_naming_both(sim):
    import pdext.jax as pj

    major, minor = pj._built_version(sim[0])
    if minor == 0:
        pytest.skip("the handler was built against XLA FFI API %d.0: no older minor" % major)
    rc, _, asks, msg = relu(sim, np.ones(4, dtype=np.float32), older=1)
    assert rc == -1, msg
    assert "XLA FFI API of this jaxlib is %d.%d, older than the %d.%d" % (
        major, minor - 1, major, minor) in msg, msg
