/*
 * device_convert_test.c - strided copies and casts of device tensors that stay on the device:
 * the table's optional convert member (pd_device.h) as the simulated device implements it
 * (int32/int64/float32/float64 casts, contiguous of any dtype), the host staging that serves
 * the pairs it refuses and tables without the member (a plug-in built against the first
 * pd_device.h), with the results checked against the same casts on the CPU. The sim's
 * counters show which path ran: a kernel run is one `converts`, staging is device-to-host
 * copies.
 */
#include "pd_sim_device.h"
#include "runner_helpers.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static pd_place sim(int32_t id)
{
    int32_t type = 0;
    if (pd_sim_device_install(&type) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_sim_device_install: %s", pd_last_error());
    return pd_place_make(type, id);
}

static pd_sim_stats stats(void)
{
    pd_sim_stats s;
    pd_sim_stats_get(&s);
    return s;
}

/* A CPU float64 tensor of shape [2, 4] with values that test every rule: negatives with a
 * fraction, NaN, out of int32's range, out of int64's range, -0.5 and 2.5. */
static pd_tensor edge_values(void)
{
    static const double v[8] = {-2.75, 1.5, NAN, 3e9, -3e9, 1e19, -0.5, 2.5};
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t shape[2] = {2, 4};
    if (pd_tensor_empty(&t, PD_FLOAT64, pd_place_cpu(), 2, shape) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "%s", pd_last_error());
    memcpy(t.data, v, sizeof v);
    return t;
}

static pd_tensor on_cpu(const pd_tensor *t)
{
    pd_tensor h = PD_TENSOR_UNDEFINED;
    if (pd_tensor_copy_to(&h, t, pd_place_cpu()) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "%s", pd_last_error());
    return h;
}

/* Same dtype, shape and bytes (NaN equal to NaN). */
static bool same_tensor(const pd_tensor *a, const pd_tensor *b)
{
    return a->dtype == b->dtype && pd_same_shape(a, b) &&
           memcmp(a->data, b->data, (size_t)pd_numel(a) * pd_dtype_size(a->dtype)) == 0;
}

PD_TEST(DeviceConvert, CastsBetweenTheKernelsDtypesRunOnTheDeviceAsOnTheCpu)
{
    static const pd_data_type types[] = {PD_INT32, PD_INT64, PD_FLOAT32, PD_FLOAT64};
    pd_tensor host = edge_values();
    for (size_t a = 0; a < 4; ++a) {
        pd_tensor src_cpu, src_dev;
        PD_ASSERT_OK(pd_tensor_cast(&src_cpu, &host, types[a]));
        PD_ASSERT_OK(pd_tensor_copy_to(&src_dev, &src_cpu, sim(0)));
        for (size_t b = 0; b < 4; ++b) {
            if (a == b)
                continue;
            pd_sim_stats before = stats();
            pd_tensor want, got_dev;
            PD_ASSERT_OK(pd_tensor_cast(&want, &src_cpu, types[b]));
            PD_ASSERT_OK(pd_tensor_cast(&got_dev, &src_dev, types[b]));
            pd_tensor got = on_cpu(&got_dev); /* synchronizes: the kernel has run */
            pd_sim_stats after = stats();
            PD_EXPECT_EQ(after.converts, before.converts + 1);
            PD_EXPECT_EQ(after.copies_d2h, before.copies_d2h + 1); /* the read only */
            PD_EXPECT(pd_place_equal(got_dev.place, sim(0)));
            PD__TEST_CHECK((void)0, same_tensor(&got, &want),
                           "cast %s -> %s differs from the CPU's", pd_dtype_name(types[a]),
                           pd_dtype_name(types[b]));
            pd_tensor_release(&got);
            pd_tensor_release(&got_dev);
            pd_tensor_release(&want);
        }
        pd_tensor_release(&src_dev);
        pd_tensor_release(&src_cpu);
    }
    pd_tensor_release(&host);
}

PD_TEST(DeviceConvert, ContiguousOfAStridedViewOfAnyDtypeRunsTheKernel)
{
    static const pd_data_type types[] = {PD_BOOL,    PD_INT16,   PD_FLOAT16,
                                         PD_FLOAT32, PD_FLOAT64, PD_COMPLEX128};
    pd_tensor host = edge_values();
    for (size_t k = 0; k < sizeof types / sizeof types[0]; ++k) {
        pd_tensor src_cpu, src_dev, view_cpu, view_dev, want, got_dev;
        PD_ASSERT_OK(pd_tensor_cast(&src_cpu, &host, types[k]));
        PD_ASSERT_OK(pd_tensor_copy_to(&src_dev, &src_cpu, sim(1)));
        const int32_t dims[2] = {1, 0};
        PD_ASSERT_OK(pd_tensor_permute(&view_cpu, &src_cpu, 2, dims));
        PD_ASSERT_OK(pd_tensor_permute(&view_dev, &src_dev, 2, dims));
        PD_ASSERT_OK(pd_tensor_contiguous(&want, &view_cpu));
        pd_sim_stats before = stats();
        PD_ASSERT_OK(pd_tensor_contiguous(&got_dev, &view_dev));
        pd_tensor got = on_cpu(&got_dev);
        pd_sim_stats after = stats();
        PD_EXPECT_EQ(after.converts, before.converts + 1);
        PD_EXPECT_EQ(after.copies_d2h, before.copies_d2h + 1); /* the read only */
        PD_EXPECT(pd_place_equal(got_dev.place, sim(1)));
        PD_EXPECT(same_tensor(&got, &want));
        pd_tensor *all[] = {&got, &got_dev, &want, &view_dev, &view_cpu, &src_dev, &src_cpu};
        for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
            pd_tensor_release(all[i]);
    }
    pd_tensor_release(&host);
}

PD_TEST(DeviceConvert, AStridedCastRunsOneKernelAndCopyToWithinTheDeviceToo)
{
    pd_tensor host = edge_values(), dev, view, cast, copy, want_view, want, got, got_copy;
    PD_ASSERT_OK(pd_tensor_copy_to(&dev, &host, sim(0)));
    PD_ASSERT_OK(pd_tensor_slice_step(&view, &dev, 1, 0, 4, 2)); /* columns 0 and 2 */
    PD_ASSERT_OK(pd_tensor_slice_step(&want_view, &host, 1, 0, 4, 2));
    PD_ASSERT_OK(pd_tensor_cast(&want, &want_view, PD_INT32));
    pd_sim_stats before = stats();
    PD_ASSERT_OK(pd_tensor_cast(&cast, &view, PD_INT32));
    PD_ASSERT_OK(pd_tensor_copy_to(&copy, &view, sim(0)));
    got = on_cpu(&cast);
    got_copy = on_cpu(&copy);
    pd_sim_stats after = stats();
    PD_EXPECT_EQ(after.converts, before.converts + 2);
    PD_EXPECT_EQ(after.copies_d2h, before.copies_d2h + 2); /* the reads only */
    PD_EXPECT(same_tensor(&got, &want));
    pd_tensor want_copy;
    PD_ASSERT_OK(pd_tensor_contiguous(&want_copy, &want_view));
    PD_EXPECT(same_tensor(&got_copy, &want_copy));
    pd_tensor *all[] = {&host,      &dev,  &view, &cast,     &copy,
                        &want_view, &want, &got,  &got_copy, &want_copy};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        pd_tensor_release(all[i]);
}

PD_TEST(DeviceConvert, PairsTheKernelRefusesAreStagedThroughTheHost)
{
    pd_tensor host = edge_values(), dev, cast, want, got;
    PD_ASSERT_OK(pd_tensor_copy_to(&dev, &host, sim(0)));
    PD_ASSERT_OK(pd_tensor_cast(&want, &host, PD_FLOAT16));
    pd_sim_stats before = stats();
    PD_ASSERT_OK(pd_tensor_cast(&cast, &dev, PD_FLOAT16)); /* not one of the kernel's pairs */
    pd_sim_stats after = stats();
    PD_EXPECT_EQ(after.converts, before.converts);
    PD_EXPECT_EQ(after.copies_d2h, before.copies_d2h + 1);
    PD_EXPECT_EQ(after.copies_h2d, before.copies_h2d + 1);
    PD_EXPECT(pd_place_equal(cast.place, sim(0)));
    got = on_cpu(&cast);
    PD_EXPECT(same_tensor(&got, &want));
    pd_tensor *all[] = {&host, &dev, &cast, &want, &got};
    for (size_t i = 0; i < 5; ++i)
        pd_tensor_release(all[i]);
}

/* The sim's table as a plug-in built against the first pd_device.h: its struct_size ends
 * before the members appended since, so the runtime must not read them. */
static pd_device_table first_version_table(void)
{
    pd_device_table t = *pd_sim_device_table();
    t.struct_size = offsetof(pd_device_table, convert);
    t.convert = NULL; /* past struct_size: never read, whatever it holds */
    return t;
}

PD_TEST(DeviceConvert, ATableOfTheFirstVersionWithoutConvertIsServedByStaging)
{
    static pd_device_table old;
    old = first_version_table();
    int32_t type = 0;
    PD_ASSERT_OK(pd_device_register("dc_first_version", &old, &type));
    pd_tensor host = edge_values(), dev, cast, want, got;
    PD_ASSERT_OK(pd_tensor_copy_to(&dev, &host, pd_place_make(type, 0)));
    PD_ASSERT_OK(pd_tensor_cast(&want, &host, PD_INT64));
    pd_sim_stats before = stats();
    PD_ASSERT_OK(pd_tensor_cast(&cast, &dev, PD_INT64));
    pd_sim_stats after = stats();
    PD_EXPECT_EQ(after.converts, before.converts);
    PD_EXPECT_EQ(after.copies_d2h, before.copies_d2h + 1);
    got = on_cpu(&cast);
    PD_EXPECT(same_tensor(&got, &want));
    pd_tensor *all[] = {&host, &dev, &cast, &want, &got};
    for (size_t i = 0; i < 5; ++i)
        pd_tensor_release(all[i]);
}

PD_TEST(DeviceConvert, TheKernelRunsInStreamOrderOnlyWhenWaitedFor)
{
    pd_place p = sim(0);
    pd_stream_t *s = NULL;
    PD_ASSERT_OK(pd_stream_create(p, &s));
    PD_ASSERT_OK(pd_stream_set_current(p, s));
    pd_tensor host = edge_values(), dev, cast, got, want;
    PD_ASSERT_OK(pd_tensor_copy_to(&dev, &host, p));
    pd_sim_stats before = stats();
    PD_ASSERT_OK(pd_tensor_cast(&cast, &dev, PD_FLOAT32));
    PD_EXPECT_EQ(stats().converts, before.converts); /* queued on the stream, not yet run */
    PD_EXPECT(stats().pending > 0);
    got = on_cpu(&cast); /* the read synchronizes the stream first */
    PD_EXPECT_EQ(stats().converts, before.converts + 1);
    PD_ASSERT_OK(pd_tensor_cast(&want, &host, PD_FLOAT32));
    PD_EXPECT(same_tensor(&got, &want));
    PD_ASSERT_OK(pd_stream_set_current(p, NULL));
    pd_tensor *all[] = {&host, &dev, &cast, &got, &want};
    for (size_t i = 0; i < 5; ++i)
        pd_tensor_release(all[i]);
    PD_EXPECT_OK(pd_stream_destroy(s));
}

PD_TEST(DeviceConvert, ViewsWithNegativeStridesRunTheKernelWithinTheirAllocation)
{
    pd_tensor host = edge_values(), dev, rev_dev, rev_host, cast, want, got;
    PD_ASSERT_OK(pd_tensor_copy_to(&dev, &host, sim(1)));
    /* Columns 3, 1 of every row: the first element is not the lowest address. */
    PD_ASSERT_OK(pd_tensor_slice_step(&rev_dev, &dev, 1, 3, 0, -2));
    PD_ASSERT_OK(pd_tensor_slice_step(&rev_host, &host, 1, 3, 0, -2));
    PD_EXPECT(pd_stride(&rev_dev, 1) < 0);
    PD_ASSERT_OK(pd_tensor_cast(&want, &rev_host, PD_INT64));
    pd_sim_stats before = stats();
    PD_ASSERT_OK(pd_tensor_cast(&cast, &rev_dev, PD_INT64));
    got = on_cpu(&cast);
    PD_EXPECT_EQ(stats().converts, before.converts + 1);
    PD_EXPECT(same_tensor(&got, &want));
    pd_tensor *all[] = {&host, &dev, &rev_dev, &rev_host, &cast, &want, &got};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; ++i)
        pd_tensor_release(all[i]);
}
