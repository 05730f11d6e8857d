"""Device tensors from Python: DLPack import of kDLCUDA / kDLCUDAHost producers (with the
stream of the DLPack protocol), pdext.Tensor on GPU places (.device, .to, __dlpack_device__,
.numpy() refusing device memory), results of calls on GPU inputs, and the torch stream
helper. ctest serves the simulated device as the CUDA plug-in (PDEXT_CUDA_PLUGIN), so GPU
places work without a GPU; gpu_ops.c is a relu that runs there."""

import ctypes
import os
import sys
import types

import numpy as np
import pytest

GPU_OPS = os.environ.get("PDEXT_PY_GPU_OPS")
if not GPU_OPS or not os.environ.get("PDEXT_CUDA_PLUGIN"):
    pytest.skip("needs PDEXT_PY_GPU_OPS and PDEXT_CUDA_PLUGIN (ctest sets both)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def gops(pdext):
    return pdext.load_library(GPU_OPS)


def on_gpu(pdext, a, device="gpu:0"):
    return pdext.from_dlpack(np.ascontiguousarray(a)).to(device)


class Producer:
    """A foreign CUDA producer: shares a pdext GPU Tensor through DLPack and records the
    stream its consumer asked for."""

    def __init__(self, tensor, device=(2, 0)):
        self.tensor = tensor
        self.device = device
        self.streams = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.tensor.__dlpack__(stream=stream)


def test_tensor_to_gpu_and_back_keeps_values(pdext):
    a = np.arange(-6, 6, dtype=np.float32).reshape(3, 4)
    g = on_gpu(pdext, a)
    assert g.device == "gpu:0"
    assert g.__dlpack_device__() == (2, 0)
    assert g.shape == (3, 4) and g.dtype == "float32"
    back = g.to("cpu")
    assert back.device == "cpu"
    np.testing.assert_array_equal(back.numpy(), a)


def test_tensor_to_same_device_is_the_tensor_itself(pdext):
    g = on_gpu(pdext, np.ones(3, np.float32))
    assert g.to("gpu:0") is g
    assert g.to("cuda:0") is g


def test_tensor_to_pinned_has_cuda_host_device(pdext):
    p = on_gpu(pdext, np.ones(3, np.float32), "gpu_pinned")
    assert p.device == "gpu_pinned"
    assert p.__dlpack_device__() == (3, 0)


def test_tensor_to_rejects_unknown_device_names(pdext):
    t = pdext.from_dlpack(np.ones(2, np.float32))
    with pytest.raises(ValueError, match="unknown device 'tpu:0'"):
        t.to("tpu:0")
    with pytest.raises(ValueError, match="unknown device 'gpu:x'"):
        t.to("gpu:x")
    with pytest.raises(TypeError, match="device must be a str"):
        t.to(0)


def test_numpy_of_gpu_tensor_raises_saying_to_copy_first(pdext):
    g = on_gpu(pdext, np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"on gpu:0 has no numpy view; copy it to the host "
                                        r"first: t.to\('cpu'\).numpy\(\)"):
        g.numpy()
    with pytest.raises(TypeError, match="no numpy view"):
        np.asarray(g)


def test_relu_on_gpu_tensor_gives_gpu_tensor_matching_numpy(pdext, gops):
    a = np.linspace(-3, 3, 24, dtype=np.float32).reshape(4, 6)
    out = gops.custom_relu(on_gpu(pdext, a))
    assert type(out) is pdext.Tensor
    assert out.device == "gpu:0"
    np.testing.assert_array_equal(out.to("cpu").numpy(), np.maximum(a, 0))


def test_relu_on_cpu_input_still_gives_numpy(gops):
    a = np.array([-1.0, 2.0], np.float32)
    np.testing.assert_array_equal(gops.custom_relu(a), [0.0, 2.0])


def test_cuda_producer_is_imported_zero_copy_with_pdexts_stream(pdext, gops):
    a = np.array([-2.0, -1.0, 0.5, 3.0], np.float32)
    producer = Producer(on_gpu(pdext, a))
    t = pdext.from_dlpack(producer)
    assert t.device == "gpu:0"
    # The DLPack protocol: a CUDA consumer names the stream it runs on, an int (not None).
    assert len(producer.streams) == 1
    assert isinstance(producer.streams[0], int) and producer.streams[0] != 0
    np.testing.assert_array_equal(t.to("cpu").numpy(), a)
    # A call on the producer takes it as a GPU input; the producer's module has no
    # from_dlpack, so the result is a pdext.Tensor.
    out = gops.custom_relu(producer)
    assert len(producer.streams) == 2 and producer.streams[1] == producer.streams[0]
    assert out.device == "gpu:0"
    np.testing.assert_array_equal(out.to("cpu").numpy(), np.maximum(a, 0))


def test_cuda_host_producer_is_called_without_a_stream(pdext):
    pinned = on_gpu(pdext, np.arange(4, dtype=np.float32), "gpu_pinned")
    producer = Producer(pinned, device=(3, 0))
    t = pdext.from_dlpack(producer)
    assert t.device == "gpu_pinned"
    assert producer.streams == [None]


def data_pointer(tensor):
    """The data address in a tensor's DLPack capsule (DLManagedTensor's first member)."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    capsule = tensor.__dlpack__()  # kept while its struct is read
    return ctypes.c_void_p.from_address(get(capsule, b"dltensor")).value


def test_gpu_import_shares_memory_with_the_producer(pdext):
    g = on_gpu(pdext, np.array([-1.0, 4.0], np.float32))
    alias = pdext.from_dlpack(Producer(g))
    assert alias.device == "gpu:0"
    assert data_pointer(alias) == data_pointer(g)


def test_gpu_export_on_the_consumers_stream_or_none_keeps_values(pdext, gops):
    # A consumer naming the stream pdext ran on (what torch does once pdext follows torch's
    # stream) and one asking for no order (-1) both get the memory; a call's result read
    # back through them has the kernel's values (the sim runs queued work only when waited).
    a = np.array([-2.0, 0.5, 3.0], np.float32)
    first = Producer(on_gpu(pdext, a))
    y = gops.custom_relu(first)
    (handle,) = first.streams
    for stream in (handle, -1):
        alias = pdext.from_dlpack(Producer(y))  # asks with pdext's stream
        assert data_pointer(alias) == data_pointer(y)
        assert y.__dlpack__(stream=stream) is not None
    np.testing.assert_array_equal(y.to("cpu").numpy(), np.maximum(a, 0))


def test_producer_with_a_malformed_dlpack_device_is_refused(gops):
    class Wrong:
        def __dlpack_device__(self):
            return "cuda"

        def __dlpack__(self, stream=None):
            raise AssertionError("not asked: the device is checked first")

    with pytest.raises(TypeError, match=r"__dlpack_device__\(\) must return"):
        gops.custom_relu(Wrong())


def test_mixed_cpu_and_gpu_inputs_are_refused_with_the_runners_message(pdext, gops):
    g = on_gpu(pdext, np.ones(3, np.float32))
    c = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"custom_pair: input 'Y' is on cpu, but the call runs "
                                         r"on gpu:0"):
        gops.custom_pair(g, c)


def test_torch_stream_is_none_for_non_torch_objects(pdext):
    assert pdext._pdext._torch_stream(np.ones(2)) is None
    assert pdext._pdext._torch_stream(object()) is None


def test_torch_stream_reads_torchs_current_stream_of_a_cuda_tensor(pdext, monkeypatch):
    asked = []

    class Stream:
        cuda_stream = 0x1234

    fake_torch = types.ModuleType("torch")
    fake_torch.cuda = types.SimpleNamespace(
        current_stream=lambda dev: asked.append(dev) or Stream())
    FakeTensor = type("Tensor", (), {"__module__": "torch", "is_cuda": True, "device": "cuda:1"})
    CpuTensor = type("Tensor", (), {"__module__": "torch", "is_cuda": False, "device": "cpu"})
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    assert pdext._pdext._torch_stream(FakeTensor()) == 0x1234
    assert asked == ["cuda:1"]
    assert pdext._pdext._torch_stream(CpuTensor()) is None


def test_output_aliasing_a_borrowed_gpu_input_is_copied_on_the_gpu(pdext, gops):
    # custom_pair hands back X itself; X borrowed from a producer has no storage, so the
    # result is a copy made on X's place.
    a = np.array([1.0, -2.0, 3.0], np.float32)
    producer = Producer(on_gpu(pdext, a))
    out = gops.custom_pair(producer, Producer(on_gpu(pdext, np.zeros(3, np.float32))))
    assert out.device == "gpu:0"
    assert data_pointer(out) != data_pointer(producer.tensor)
    np.testing.assert_array_equal(out.to("cpu").numpy(), a)


def test_a_torch_cuda_tensor_runs_on_torchs_current_stream(pdext, gops, monkeypatch):
    # The stream pdext runs on is torch's current stream of the tensor's device, wrapped
    # (pd_stream_wrap): the DLPack exchange then names torch's own stream. Without a GPU the
    # handle is one the simulated device made (pdext's default stream, learned from a
    # producer), which fake torch reports as its current stream.
    first = Producer(on_gpu(pdext, np.ones(2, np.float32)))
    gops.custom_relu(first)
    (handle,) = first.streams
    asked = []

    class Stream:
        cuda_stream = handle

    fake_torch = types.ModuleType("torch")
    fake_torch.cuda = types.SimpleNamespace(
        current_stream=lambda dev: asked.append(dev) or Stream())
    fake_torch.from_dlpack = pdext.from_dlpack
    a = np.array([-1.0, 2.0, -3.0, 4.0], np.float32)
    g = on_gpu(pdext, a)

    class Tensor:
        __module__ = "torch"
        is_cuda = True
        device = "cuda:0"

        def __init__(self):
            self.streams = []

        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None):
            self.streams.append(stream)
            return g.__dlpack__(stream=stream)

    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    x = Tensor()
    for _ in range(2):  # the second call finds the wrapped stream again
        out = gops.custom_relu(x)
        np.testing.assert_array_equal(out.to("cpu").numpy(), np.maximum(a, 0))
    assert asked == ["cuda:0", "cuda:0"]
    assert x.streams == [handle, handle]


def test_an_executor_chain_on_gpu_tensors_crosses_streams_in_order(pdext, gops):
    """Each executor stream runs its GPU calls on a device stream of its own; a call on
    stream 1 reading stream 0's result waits for it on the device (the sim runs a stream's
    jobs only when something waits, so a missing wait would read unwritten memory)."""
    a = np.linspace(-3, 3, 13, dtype=np.float32)
    g = on_gpu(pdext, a)
    with pdext.Executor(streams=2) as ex:
        y = gops.custom_relu(g)  # stream 0
        ex.stream = 1
        z = gops.custom_relu(y)  # stream 1, after y
        assert z.device == "gpu:0"
        # read inside the block: only z's stream is waited for (the block's end would
        # synchronize both streams, in order)
        np.testing.assert_array_equal(z.to("cpu").numpy(), np.maximum(a, 0))
    ex.close()
