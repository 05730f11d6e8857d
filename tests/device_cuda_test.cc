// device_cuda_test.cc - GPU places and the CUDA plug-in. Without a plug-in, a driver or a
// device, GPU use fails with PD_ERR_UNAVAILABLE naming which is missing and what to install;
// where a GPU is present (and the plug-in was built), tensors, copies, casts and streams work
// on it. Each test runs in a process of its own (ctest), so each meets the plug-in load
// afresh. Written in C++ gtest for GTEST_SKIP() where no GPU (or no plug-in) is present.
#include <gtest/gtest.h>

#include <cmath>
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

// Equal element by element, NaN equal to NaN (the GPU's NaN has another payload).
bool same_values(const pd_tensor *a, const pd_tensor *b)
{
    int64_t n = pd_numel(a);
    for (int64_t i = 0; i < n; ++i) {
        double x, y;
        if (a->dtype == PD_FLOAT32) {
            x = static_cast<const float *>(a->data)[i];
            y = static_cast<const float *>(b->data)[i];
        } else if (a->dtype == PD_FLOAT64) {
            x = static_cast<const double *>(a->data)[i];
            y = static_cast<const double *>(b->data)[i];
        } else {
            size_t size = pd_dtype_size(a->dtype);
            if (std::memcmp(static_cast<const char *>(a->data) + i * size,
                            static_cast<const char *>(b->data) + i * size, size) != 0)
                return false;
            continue;
        }
        if (!(x == y || (std::isnan(x) && std::isnan(y))))
            return false;
    }
    return true;
}

// The plug-in's convert kernel (cuda_convert.cu) against the CPU's casts: every pair of
// int32/int64/float32/float64 on a transposed view with NaN, fractions and values out of
// int32's and int64's range, and contiguous of a float16 view (an element copy by size).
TEST(DeviceCuda, StridedCastsAndContiguousOnAGpuMatchTheCpu)
{
    if (!gpu_usable())
        GTEST_SKIP() << "no usable GPU here: " << pd_last_error();
    const double v[8] = {-2.75, 1.5, std::nan(""), 3e9, -3e9, 1e19, -0.5, 2.5};
    const int64_t shape[2] = {2, 4};
    const int32_t dims[2] = {1, 0};
    pd_tensor host;
    ASSERT_EQ(pd_tensor_empty(&host, PD_FLOAT64, pd_place_cpu(), 2, shape), PD_OK);
    std::memcpy(host.data, v, sizeof v);
    const pd_data_type types[] = {PD_INT32, PD_INT64, PD_FLOAT32, PD_FLOAT64, PD_FLOAT16};
    for (pd_data_type a : types) {
        pd_tensor src, dev, view_cpu, view_dev;
        ASSERT_EQ(pd_tensor_cast(&src, &host, a), PD_OK) << pd_last_error();
        ASSERT_EQ(pd_tensor_copy_to(&dev, &src, pd_place_gpu(0)), PD_OK) << pd_last_error();
        ASSERT_EQ(pd_tensor_permute(&view_cpu, &src, 2, dims), PD_OK);
        ASSERT_EQ(pd_tensor_permute(&view_dev, &dev, 2, dims), PD_OK);
        for (pd_data_type b : types) {
            pd_tensor want, got_dev, got;
            ASSERT_EQ(pd_tensor_cast(&want, &view_cpu, b), PD_OK) << pd_last_error();
            ASSERT_EQ(pd_tensor_cast(&got_dev, &view_dev, b), PD_OK) << pd_last_error();
            EXPECT_TRUE(pd_is_gpu(&got_dev));
            ASSERT_EQ(pd_tensor_copy_to(&got, &got_dev, pd_place_cpu()), PD_OK) << pd_last_error();
            EXPECT_TRUE(same_values(&got, &want)) << pd_dtype_name(a) << " -> " << pd_dtype_name(b);
            for (pd_tensor *t : {&got, &got_dev, &want})
                pd_tensor_release(t);
        }
        for (pd_tensor *t : {&view_dev, &view_cpu, &dev, &src})
            pd_tensor_release(t);
    }
    pd_tensor_release(&host);
}

// Pinned tensors come from the pinned cache: a freed block is reused at the same address.
TEST(DeviceCuda, PinnedBlocksAreCachedAndReleased)
{
    if (!gpu_usable())
        GTEST_SKIP() << "no usable GPU here: " << pd_last_error();
    ASSERT_EQ(pd_device_cache_release(pd_place_gpu_pinned()), PD_OK) << pd_last_error();
    const int64_t n = 1 << 20;
    pd_tensor a, b;
    ASSERT_EQ(pd_tensor_zeros(&a, PD_FLOAT32, pd_place_gpu_pinned(), 1, &n), PD_OK)
        << pd_last_error();
    static_cast<float *>(a.data)[n - 1] = 7; // host-writable
    void *first = a.data;
    pd_tensor_release(&a);
    ASSERT_EQ(pd_tensor_empty(&b, PD_FLOAT32, pd_place_gpu_pinned(), 1, &n), PD_OK)
        << pd_last_error();
    EXPECT_EQ(b.data, first);
    pd_tensor_release(&b);
    EXPECT_EQ(pd_device_cache_release(pd_place_gpu_pinned()), PD_OK) << pd_last_error();
}

} // namespace
