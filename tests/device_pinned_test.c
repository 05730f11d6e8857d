/*
 * device_pinned_test.c - GPU and GPU-pinned places with the simulated device's table served
 * as the CUDA plug-in (tests/ops/sim_as_cuda_plugin.c through PDEXT_CUDA_PLUGIN): pinned host
 * memory from the table's host_alloc, readable by the CPU, cached and reused without a new
 * host_alloc, released by pd_device_cache_release and on out of memory; copies between pinned
 * and GPU memory; GPU device ids checked against the plug-in's count. Every test of this
 * program sets the same plug-in, so the one load per process serves them all.
 */
#include "pd_sim_device.h"
#include "runner_helpers.h"

#include <stdlib.h>

static void use_sim_as_cuda(void)
{
    setenv("PDEXT_CUDA_PLUGIN", pd_test_path("ds_sim_as_cuda.so"), 1);
}

static pd_sim_stats stats(void)
{
    pd_sim_stats s;
    pd_sim_stats_get(&s);
    return s;
}

PD_TEST(DevicePinned, PinnedTensorsAreHostMemoryFromTheTablesHostAlloc)
{
    use_sim_as_cuda();
    PD_ASSERT_OK(pd_device_cache_release(pd_place_gpu_pinned()));
    pd_sim_stats before = stats();
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t n = 1000;
    PD_ASSERT_OK(pd_tensor_full(&t, PD_FLOAT32, pd_place_gpu_pinned(), 1, &n, 2.5));
    PD_EXPECT(pd_place_equal(t.place, pd_place_gpu_pinned()));
    PD_EXPECT_EQ(stats().host_allocs, before.host_allocs + 1);
    PD_EXPECT_EQ(stats().allocs, before.allocs); /* no device memory */
    float *v = t.data;                           /* the CPU reads and writes it directly */
    PD_EXPECT_EQ(v[0], 2.5f);
    PD_EXPECT_EQ(v[999], 2.5f);
    v[3] = -1;
    PD_EXPECT_EQ(v[3], -1.0f);
    pd_tensor_release(&t);
}

PD_TEST(DevicePinned, AFreedPinnedBlockIsReusedWithoutAnotherHostAlloc)
{
    use_sim_as_cuda();
    PD_ASSERT_OK(pd_device_cache_release(pd_place_gpu_pinned()));
    pd_sim_stats before = stats();
    const int64_t n = 4096;
    for (int round = 0; round < 5; ++round) {
        pd_tensor t = PD_TENSOR_UNDEFINED;
        PD_ASSERT_OK(pd_tensor_empty(&t, PD_FLOAT32, pd_place_gpu_pinned(), 1, &n));
        pd_tensor_release(&t);
    }
    pd_sim_stats after = stats();
    PD_EXPECT_EQ(after.host_allocs, before.host_allocs + 1); /* once, then the cache */
    PD_EXPECT_EQ(after.host_frees, before.host_frees);       /* cached, not freed */
    PD_EXPECT_EQ(after.live_host_allocs, before.live_host_allocs + 1);
    PD_ASSERT_OK(pd_device_cache_release(pd_place_gpu_pinned()));
    PD_EXPECT_EQ(stats().host_frees, before.host_frees + 1);
    PD_EXPECT_EQ(stats().live_host_allocs, before.live_host_allocs);
}

PD_TEST(DevicePinned, PinnedOutOfMemoryReleasesTheCacheTriesOnceAndLeaksNothing)
{
    use_sim_as_cuda();
    PD_ASSERT_OK(pd_device_cache_release(pd_place_gpu_pinned()));
    const int64_t small = 64, huge = (int64_t)1 << 42; /* 16 TiB of float32 */
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_FLOAT32, pd_place_gpu_pinned(), 1, &small));
    pd_tensor_release(&t); /* one block in the cache */
    pd_sim_stats before = stats();
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, pd_place_gpu_pinned(), 1, &huge),
                    PD_ERR_OUT_OF_MEMORY,
                    "pd_tensor_empty: out of memory allocating 17592186044416 bytes on "
                    "gpu_pinned");
    PD_EXPECT(!pd_defined(&t));
    pd_sim_stats after = stats();
    PD_EXPECT_EQ(after.host_frees, before.host_frees + 1); /* the cached block was given back */
    PD_EXPECT_EQ(after.live_host_allocs, before.live_host_allocs - 1);
    PD_EXPECT_EQ(after.host_allocs, before.host_allocs); /* both tries failed */
}

PD_TEST(DevicePinned, CopiesBetweenPinnedAndGpuMemoryRunThroughTheTable)
{
    use_sim_as_cuda();
    const int64_t n = 256;
    pd_tensor pinned = PD_TENSOR_UNDEFINED, gpu, back;
    PD_ASSERT_OK(pd_tensor_empty(&pinned, PD_FLOAT64, pd_place_gpu_pinned(), 1, &n));
    for (int64_t i = 0; i < n; ++i)
        ((double *)pinned.data)[i] = (double)i * 0.5 - 3;
    pd_sim_stats before = stats();
    PD_ASSERT_OK(pd_tensor_copy_to(&gpu, &pinned, pd_place_gpu(1)));
    PD_ASSERT_OK(pd_tensor_copy_to(&back, &gpu, pd_place_gpu_pinned()));
    pd_sim_stats after = stats();
    PD_EXPECT_EQ(after.copies_h2d, before.copies_h2d + 1);
    PD_EXPECT_EQ(after.copies_d2h, before.copies_d2h + 1);
    PD_EXPECT(pd_place_equal(gpu.place, pd_place_gpu(1)));
    PD_EXPECT(pd_place_equal(back.place, pd_place_gpu_pinned()));
    for (int64_t i = 0; i < n; ++i)
        PD_EXPECT_EQ(((double *)back.data)[i], (double)i * 0.5 - 3);
    pd_tensor_release(&back);
    pd_tensor_release(&gpu);
    pd_tensor_release(&pinned);
}

PD_TEST(DevicePinned, GpuDeviceIdOutOfRangeIsRefusedNamingThePluginsCount)
{
    use_sim_as_cuda();
    int32_t count = 0;
    PD_ASSERT_OK(pd_device_count(PD_PLACE_GPU, &count));
    PD_EXPECT_EQ(count, PD_SIM_DEVICES);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t n = 2;
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, pd_place_gpu(PD_SIM_DEVICES), 1, &n),
                    PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_empty: place gpu:2: device id 2 is out of range; device type "
                    "'sim' has 2 devices");
    PD_EXPECT(!pd_defined(&t));
}
