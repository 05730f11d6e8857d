/* place_test.c - places: constructors, accessors, equality, names, and which places this
 * CPU-only build can hold tensors on. */
#include "pd_test.h"

static bool all_zero(const char *bytes, size_t n)
{
    for (size_t i = 0; i < n; ++i)
        if (bytes[i] != 0)
            return false;
    return true;
}

PD_TEST(Place, CpuIsDeviceZeroWithNoCustomName)
{
    pd_place p = pd_place_cpu();
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_CPU);
    PD_EXPECT_EQ(pd_place_device_id(p), 0);
    PD_EXPECT(all_zero(p.custom_type, sizeof p.custom_type));
    PD_EXPECT(pd_place_is_host(p));
}

PD_TEST(Place, GpuKeepsItsDeviceId)
{
    pd_place p = pd_place_gpu(3);
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_GPU);
    PD_EXPECT_EQ(pd_place_device_id(p), 3);
    PD_EXPECT(all_zero(p.custom_type, sizeof p.custom_type));
    PD_EXPECT(!pd_place_is_host(p));
}

PD_TEST(Place, GpuPinnedIsHostReadable)
{
    pd_place p = pd_place_gpu_pinned();
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_GPU_PINNED);
    PD_EXPECT_EQ(pd_place_device_id(p), 0);
    PD_EXPECT(pd_place_is_host(p));
}

PD_TEST(Place, CustomKeepsTypeNameAndId)
{
    pd_place p = pd_place_custom("npu", 2);
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_CUSTOM);
    PD_EXPECT_EQ(pd_place_device_id(p), 2);
    PD_EXPECT_STREQ(p.custom_type, "npu");
    PD_EXPECT_STREQ(pd_place_type_name(&p), "npu");
    PD_EXPECT(all_zero(p.custom_type + 3, sizeof p.custom_type - 3));
    PD_EXPECT(!pd_place_is_host(p));
}

PD_TEST(Place, CustomNameOfTheMaximumLengthIsKept)
{
    char name[PD_PLACE_CUSTOM_NAME_MAX + 1];
    memset(name, 'x', PD_PLACE_CUSTOM_NAME_MAX);
    name[PD_PLACE_CUSTOM_NAME_MAX] = '\0';
    pd_place p = pd_place_custom(name, 0);
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_CUSTOM);
    PD_EXPECT_STREQ(p.custom_type, name);
}

PD_TEST(Place, CustomNameTooLongGivesAnUndefinedPlaceRatherThanATruncatedOne)
{
    char name[PD_PLACE_CUSTOM_NAME_MAX + 2];
    memset(name, 'x', PD_PLACE_CUSTOM_NAME_MAX + 1);
    name[PD_PLACE_CUSTOM_NAME_MAX + 1] = '\0';
    pd_place p = pd_place_custom(name, 0);
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_UNDEFINED);
    PD_EXPECT(all_zero(p.custom_type, sizeof p.custom_type));
}

PD_TEST(Place, CustomWithoutANameOrWithANegativeIdIsUndefined)
{
    PD_EXPECT_EQ(pd_place_get_type(pd_place_custom(NULL, 0)), PD_PLACE_UNDEFINED);
    PD_EXPECT_EQ(pd_place_get_type(pd_place_custom("", 0)), PD_PLACE_UNDEFINED);
    PD_EXPECT_EQ(pd_place_get_type(pd_place_custom("npu", -1)), PD_PLACE_UNDEFINED);
}

PD_TEST(Place, EqualityComparesTypeAndDeviceId)
{
    PD_EXPECT(pd_place_equal(pd_place_cpu(), pd_place_cpu()));
    PD_EXPECT(pd_place_equal(pd_place_gpu(1), pd_place_gpu(1)));
    PD_EXPECT(!pd_place_equal(pd_place_gpu(0), pd_place_gpu(1)));
    PD_EXPECT(!pd_place_equal(pd_place_cpu(), pd_place_gpu(0)));
    PD_EXPECT(!pd_place_equal(pd_place_gpu(0), pd_place_gpu_pinned()));
    PD_EXPECT(!pd_place_equal(pd_place_cpu(), pd_place_gpu_pinned()));
}

PD_TEST(Place, EqualityOfCustomPlacesComparesTheTypeName)
{
    PD_EXPECT(pd_place_equal(pd_place_custom("npu", 0), pd_place_custom("npu", 0)));
    PD_EXPECT(!pd_place_equal(pd_place_custom("npu", 0), pd_place_custom("xpu", 0)));
    PD_EXPECT(!pd_place_equal(pd_place_custom("npu", 0), pd_place_custom("npu", 1)));
    PD_EXPECT(!pd_place_equal(pd_place_custom("npu", 0), pd_place_custom("npu2", 0)));
    PD_EXPECT(!pd_place_equal(pd_place_custom("npu", 0), pd_place_gpu(0)));
}

PD_TEST(Place, TypeNamesAreTheOnesMessagesUse)
{
    pd_place cpu = pd_place_cpu(), gpu = pd_place_gpu(0), pinned = pd_place_gpu_pinned();
    pd_place undefined = pd_place_make(PD_PLACE_UNDEFINED, 0);
    PD_EXPECT_STREQ(pd_place_type_name(&cpu), "cpu");
    PD_EXPECT_STREQ(pd_place_type_name(&gpu), "gpu");
    PD_EXPECT_STREQ(pd_place_type_name(&pinned), "gpu_pinned");
    PD_EXPECT_STREQ(pd_place_type_name(&undefined), "undefined");
}

/* --- Which places can hold tensors in this CPU-only build ------------------------------------ */

static const int64_t shape2[2] = {2, 3};

PD_TEST(Place, GpuAllocationIsUnavailableNamingTheFunctionAndThePlace)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, pd_place_gpu(0), 2, shape2),
                    PD_ERR_UNAVAILABLE, "pd_tensor_empty: place gpu:0 needs CUDA");
    PD_EXPECT_CONTAINS(pd_last_error(), "pd_place_cpu()");
    PD_EXPECT_ERROR(pd_tensor_zeros(&t, PD_FLOAT32, pd_place_gpu(1), 2, shape2),
                    PD_ERR_UNAVAILABLE, "pd_tensor_zeros: place gpu:1");
    PD_EXPECT(!pd_defined(&t));
}

PD_TEST(Place, GpuPinnedAllocationIsUnavailable)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tensor_ones(&t, PD_INT32, pd_place_gpu_pinned(), 2, shape2),
                    PD_ERR_UNAVAILABLE, "pd_tensor_ones: place gpu_pinned needs CUDA");
    PD_EXPECT(!pd_defined(&t));
}

PD_TEST(Place, CustomAllocationIsUnavailableNamingTheDeviceType)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tensor_full(&t, PD_FLOAT64, pd_place_custom("npu", 1), 2, shape2, 1.0),
                    PD_ERR_UNAVAILABLE, "pd_tensor_full: place npu:1 is a custom device of type 'npu'");
    PD_EXPECT(!pd_defined(&t));
}

PD_TEST(Place, UndefinedPlaceIsAnInvalidArgument)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, pd_place_custom("this-name-is-far-too-long", 0),
                                    2, shape2),
                    PD_ERR_INVALID_ARGUMENT, "pd_tensor_empty: place is undefined");
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, pd_place_make((pd_place_type)42, 0), 2, shape2),
                    PD_ERR_INVALID_ARGUMENT, "place is undefined (type 42)");
    PD_EXPECT(!pd_defined(&t));
}

PD_TEST(Place, CpuPlaceWithADeviceIdIsAnInvalidArgument)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, pd_place_make(PD_PLACE_CPU, 3), 2, shape2),
                    PD_ERR_INVALID_ARGUMENT, "place cpu has device id 3");
    PD_EXPECT(!pd_defined(&t));
}
