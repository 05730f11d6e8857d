// device_cuda_test.cc - GPU places and the CUDA plug-in. Without a plug-in, a driver or a
// device, GPU use fails with PD_ERR_UNAVAILABLE naming which is missing and what to install;
// where a GPU is present (and the plug-in was built), tensors, copies, casts and streams work
// on it. Each test runs in a process of its own (ctest), so each meets the plug-in load
// afresh. Written in C++ gtest for GTEST_SKIP() where no GPU (or no plug-in) is present.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "pdext.h"

namespace {

const int64_t n4 = 4;

// True when this process can use a GPU; otherwise the reason is this thread's last error.
bool gpu_usable()
{
    int32_t count = 0;
    return pd_device_count(PD_PLACE_GPU, &count) == PD_OK && count > 0;
}

bool contains(const char *haystack, const char *needle)
{
    return haystack && std::strstr(haystack, needle) != nullptr;
}

TEST(DeviceCuda, MissingPluginNamesTheLibraryAndWhatToInstall)
{
    setenv("PDEXT_CUDA_PLUGIN", "/nonexistent/libpdext_cuda.so", 1);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    EXPECT_EQ(pd_tensor_empty(&t, PD_FLOAT32, pd_place_gpu(0), 1, &n4), PD_ERR_UNAVAILABLE);
    EXPECT_TRUE(contains(pd_last_error(), "pd_tensor_empty: place gpu:0 needs CUDA: the pdext "
                                          "CUDA plug-in /nonexistent/libpdext_cuda.so cannot be "
                                          "loaded"))
        << pd_last_error();
    EXPECT_TRUE(contains(pd_last_error(), "nvidia-cuda-toolkit")) << pd_last_error();
    // Tried once: later uses repeat the reason.
    EXPECT_EQ(pd_tensor_ones(&t, PD_FLOAT32, pd_place_gpu_pinned(), 1, &n4), PD_ERR_UNAVAILABLE);
    EXPECT_TRUE(contains(pd_last_error(), "pd_tensor_ones: place gpu_pinned needs CUDA"))
        << pd_last_error();
    int32_t count = -1;
    EXPECT_EQ(pd_device_count(PD_PLACE_GPU, &count), PD_ERR_UNAVAILABLE);
    EXPECT_TRUE(contains(pd_last_error(), "pd_device_count: gpu needs CUDA")) << pd_last_error();
    EXPECT_FALSE(pd_defined(&t));
}

TEST(DeviceCuda, PluginOfAnotherDeviceAbiVersionIsRefusedNamingBoth)
{
    std::string path = std::string(PD_TEST_BINARY_DIR) + "/dc_fake_cuda_abi.so";
    setenv("PDEXT_CUDA_PLUGIN", path.c_str(), 1);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    EXPECT_EQ(pd_tensor_empty(&t, PD_FLOAT32, pd_place_gpu(0), 1, &n4), PD_ERR_ABI_MISMATCH);
    EXPECT_TRUE(contains(pd_last_error(), "cannot be used: abi_version is 99, but this runtime "
                                          "serves device tables of version 1"))
        << pd_last_error();
    EXPECT_FALSE(pd_defined(&t));
}

TEST(DeviceCuda, LibraryWithoutTheEntryPointIsRefused)
{
    std::string path = std::string(PD_TEST_BINARY_DIR) + "/dc_fake_cuda_no_entry.so";
    setenv("PDEXT_CUDA_PLUGIN", path.c_str(), 1);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    EXPECT_EQ(pd_tensor_empty(&t, PD_FLOAT32, pd_place_gpu(0), 1, &n4), PD_ERR_ABI_MISMATCH);
    EXPECT_TRUE(contains(pd_last_error(), "has no pdext_cuda_device_table entry point"))
        << pd_last_error();
}

TEST(DeviceCuda, WithoutADriverOrDeviceGpuUseSaysWhichIsMissing)
{
#ifndef PDEXT_HAVE_CUDA_PLUGIN
    GTEST_SKIP() << "libpdext_cuda was not built (no CUDA toolkit at configure time)";
#else
    if (gpu_usable())
        GTEST_SKIP() << "a GPU is usable here";
    pd_tensor t = PD_TENSOR_UNDEFINED;
    EXPECT_EQ(pd_tensor_zeros(&t, PD_FLOAT32, pd_place_gpu(0), 1, &n4), PD_ERR_UNAVAILABLE);
    const char *msg = pd_last_error();
    EXPECT_TRUE(contains(msg, "pd_tensor_zeros: place gpu:0 needs CUDA")) << msg;
    EXPECT_TRUE(contains(msg, "no usable CUDA driver") || contains(msg, "no GPU is visible") ||
                contains(msg, "finds no GPU"))
        << msg;
    EXPECT_FALSE(pd_defined(&t));
#endif
}

TEST(DeviceCuda, TensorsCopiesCastsAndStreamsOnAGpu)
{
    if (!gpu_usable())
        GTEST_SKIP() << "no usable GPU here: " << pd_last_error();
    float host[4] = {-1, 2, -3, 4};
    pd_tensor x, g, g2, p, back;
    ASSERT_EQ(pd_tensor_from_buffer(&x, host, PD_FLOAT32, pd_place_cpu(), 1, &n4, nullptr, nullptr),
              PD_OK);
    ASSERT_EQ(pd_tensor_copy_to(&g, &x, pd_place_gpu(0)), PD_OK) << pd_last_error();
    ASSERT_EQ(pd_tensor_cast(&g2, &g, PD_FLOAT64), PD_OK) << pd_last_error();
    ASSERT_EQ(pd_tensor_copy_to(&p, &g2, pd_place_gpu_pinned()), PD_OK) << pd_last_error();
    ASSERT_EQ(pd_tensor_copy_to(&back, &p, pd_place_cpu()), PD_OK) << pd_last_error();
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(static_cast<double *>(back.data)[i], static_cast<double>(host[i]));
    pd_stream_t *s = nullptr;
    ASSERT_EQ(pd_stream_create(pd_place_gpu(0), &s), PD_OK) << pd_last_error();
    EXPECT_NE(pd_stream_handle(s), nullptr);
    EXPECT_EQ(pd_stream_synchronize(s), PD_OK);
    EXPECT_EQ(pd_stream_destroy(s), PD_OK);
    pd_tensor *all[] = {&x, &g, &g2, &p, &back};
    for (pd_tensor *t : all)
        pd_tensor_release(t);
}

} // namespace
