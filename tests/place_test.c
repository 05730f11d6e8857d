/* place_test.c - places: constructors, accessors, equality, names, the registry of custom
 * device type names, and which places this CPU-only build can hold tensors on. */
#include "pd_test.h"

PD_TEST(Place, IsTwoInt32LikeDLDevice)
{
    PD_EXPECT_EQ(sizeof(pd_place), 8u);
    pd_place p = pd_place_gpu(5);
    PD_EXPECT_EQ(p.type, PD_PLACE_GPU);
    PD_EXPECT_EQ(p.device_id, 5);
}

PD_TEST(Place, CpuIsDeviceZero)
{
    pd_place p = pd_place_cpu();
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_CPU);
    PD_EXPECT_EQ(pd_place_device_id(p), 0);
    PD_EXPECT(pd_place_is_host(p));
    PD_EXPECT(!pd_place_is_custom(p));
}

PD_TEST(Place, GpuKeepsItsDeviceId)
{
    pd_place p = pd_place_gpu(3);
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_GPU);
    PD_EXPECT_EQ(pd_place_device_id(p), 3);
    PD_EXPECT(!pd_place_is_host(p));
}

PD_TEST(Place, GpuPinnedIsHostReadable)
{
    pd_place p = pd_place_gpu_pinned();
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_GPU_PINNED);
    PD_EXPECT_EQ(pd_place_device_id(p), 0);
    PD_EXPECT(pd_place_is_host(p));
}

PD_TEST(Place, BuiltInTypeNumbersAreFixed)
{
    PD_EXPECT_EQ(PD_PLACE_UNDEFINED, 0);
    PD_EXPECT_EQ(PD_PLACE_CPU, 1);
    PD_EXPECT_EQ(PD_PLACE_GPU, 2);
    PD_EXPECT_EQ(PD_PLACE_GPU_PINNED, 3);
    PD_EXPECT_EQ(PD_PLACE_CUSTOM_FIRST, 16);
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

PD_TEST(Place, TypeNamesAreTheOnesMessagesUse)
{
    pd_place cpu = pd_place_cpu(), gpu = pd_place_gpu(0), pinned = pd_place_gpu_pinned();
    pd_place undefined = pd_place_make(PD_PLACE_UNDEFINED, 0);
    pd_place unregistered_number = pd_place_make(PD_PLACE_CUSTOM_FIRST + 100, 0);
    PD_EXPECT_STREQ(pd_place_type_name(&cpu), "cpu");
    PD_EXPECT_STREQ(pd_place_type_name(&gpu), "gpu");
    PD_EXPECT_STREQ(pd_place_type_name(&pinned), "gpu_pinned");
    PD_EXPECT_STREQ(pd_place_type_name(&undefined), "undefined");
    PD_EXPECT_STREQ(pd_place_type_name(&unregistered_number), "undefined");
}

/* --- Custom device types ----------------------------------------------------------------- */

PD_TEST(PlaceCustom, RegisteredNameGetsANumberAndPlacesOfIt)
{
    int32_t npu = 0;
    PD_ASSERT_OK(pd_device_type_register("pt_npu", &npu));
    PD_EXPECT(npu >= PD_PLACE_CUSTOM_FIRST);
    pd_place p = pd_place_custom("pt_npu", 2);
    PD_EXPECT_EQ(p.type, npu);
    PD_EXPECT_EQ(pd_place_device_id(p), 2);
    PD_EXPECT(pd_place_is_custom(p));
    PD_EXPECT(!pd_place_is_host(p));
    PD_EXPECT_STREQ(pd_place_type_name(&p), "pt_npu");
    PD_EXPECT_STREQ(pd_device_type_name(npu), "pt_npu");
}

PD_TEST(PlaceCustom, RegisteringTwiceGivesTheSameNumber)
{
    int32_t a = 0, b = 0, other = 0;
    PD_ASSERT_OK(pd_device_type_register("pt_twice", &a));
    PD_ASSERT_OK(pd_device_type_register("pt_twice", &b));
    PD_ASSERT_OK(pd_device_type_register("pt_other", &other));
    PD_EXPECT_EQ(a, b);
    PD_EXPECT(other != a);
}

PD_TEST(PlaceCustom, EqualityOfCustomPlacesIsTheTypeNumberAndId)
{
    int32_t t = 0;
    PD_ASSERT_OK(pd_device_type_register("pt_eq_a", &t));
    PD_ASSERT_OK(pd_device_type_register("pt_eq_b", &t));
    PD_EXPECT(pd_place_equal(pd_place_custom("pt_eq_a", 0), pd_place_custom("pt_eq_a", 0)));
    PD_EXPECT(!pd_place_equal(pd_place_custom("pt_eq_a", 0), pd_place_custom("pt_eq_b", 0)));
    PD_EXPECT(!pd_place_equal(pd_place_custom("pt_eq_a", 0), pd_place_custom("pt_eq_a", 1)));
    PD_EXPECT(!pd_place_equal(pd_place_custom("pt_eq_a", 0), pd_place_gpu(0)));
}

PD_TEST(PlaceCustom, UnknownNameGivesAnUndefinedPlace)
{
    pd_place p = pd_place_custom("pt_never_registered", 0);
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_UNDEFINED);
    PD_EXPECT(!pd_place_is_custom(p));
    PD_EXPECT_STREQ(pd_place_type_name(&p), "undefined");
    PD_EXPECT(pd_device_type_name(PD_PLACE_CUSTOM_FIRST + 120) == NULL);
}

PD_TEST(PlaceCustom, AllocationOnAnUnknownNameNamesItAndHowToRegisterIt)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t shape[1] = {2};
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, pd_place_custom("pt_typo", 0), 1, shape),
                    PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_empty: place is undefined: device type 'pt_typo' was not "
                    "registered");
    PD_EXPECT_CONTAINS(pd_last_error(), "pd_device_type_register(\"pt_typo\", &type)");
    PD_EXPECT(!pd_defined(&t));
}

PD_TEST(PlaceCustom, NameTooLongEmptyOrNullOrNegativeIdGivesAPlainUndefinedPlace)
{
    char name[PD_PLACE_CUSTOM_NAME_MAX + 2];
    memset(name, 'x', PD_PLACE_CUSTOM_NAME_MAX + 1);
    name[PD_PLACE_CUSTOM_NAME_MAX + 1] = '\0';
    pd_place p = pd_place_custom(name, 0);
    PD_EXPECT_EQ(pd_place_get_type(p), PD_PLACE_UNDEFINED);
    PD_EXPECT_EQ(pd_place_device_id(p), 0);
    PD_EXPECT_EQ(pd_place_get_type(pd_place_custom(NULL, 0)), PD_PLACE_UNDEFINED);
    PD_EXPECT_EQ(pd_place_get_type(pd_place_custom("", 0)), PD_PLACE_UNDEFINED);
    int32_t t = 0;
    PD_ASSERT_OK(pd_device_type_register("pt_neg", &t));
    PD_EXPECT_EQ(pd_place_get_type(pd_place_custom("pt_neg", -1)), PD_PLACE_UNDEFINED);
}

PD_TEST(PlaceCustom, NameOfTheMaximumLengthRegisters)
{
    char name[PD_PLACE_CUSTOM_NAME_MAX + 1];
    memset(name, 'm', PD_PLACE_CUSTOM_NAME_MAX);
    name[PD_PLACE_CUSTOM_NAME_MAX] = '\0';
    int32_t t = 0;
    PD_ASSERT_OK(pd_device_type_register(name, &t));
    pd_place p = pd_place_custom(name, 0);
    PD_EXPECT_EQ(p.type, t);
    PD_EXPECT_STREQ(pd_place_type_name(&p), name);
}

PD_TEST(PlaceCustom, RegisterRefusesBadNamesNamingThem)
{
    int32_t t = -5;
    char name[PD_PLACE_CUSTOM_NAME_MAX + 2];
    memset(name, 'x', PD_PLACE_CUSTOM_NAME_MAX + 1);
    name[PD_PLACE_CUSTOM_NAME_MAX + 1] = '\0';
    PD_EXPECT_ERROR(pd_device_type_register(name, &t), PD_ERR_INVALID_ARGUMENT,
                    "pd_device_type_register: name 'xxxxxxxxxxxxxxxxxxxxxxx...' is 24 characters "
                    "long; at most 23 are allowed");
    PD_EXPECT_ERROR(pd_device_type_register("", &t), PD_ERR_INVALID_ARGUMENT,
                    "name '' is not a device type name");
    PD_EXPECT_ERROR(pd_device_type_register("np:u", &t), PD_ERR_INVALID_ARGUMENT,
                    "name 'np:u' is not a device type name; expected 1 to 23 characters of "
                    "[A-Za-z0-9_]");
    PD_EXPECT_ERROR(pd_device_type_register(NULL, &t), PD_ERR_INVALID_ARGUMENT, "name is NULL");
    PD_EXPECT_ERROR(pd_device_type_register("gpu", &t), PD_ERR_ALREADY_EXISTS,
                    "'gpu' is a built-in device type");
    PD_EXPECT_ERROR(pd_device_type_register("pt_ok", NULL), PD_ERR_INVALID_ARGUMENT,
                    "type is NULL");
    PD_EXPECT_EQ(t, -5);
}

PD_TEST(PlaceCustom, NameRegisteredAfterAnUnknownLookupWorksForNewPlaces)
{
    pd_place before = pd_place_custom("pt_late", 1);
    PD_EXPECT_EQ(pd_place_get_type(before), PD_PLACE_UNDEFINED);
    int32_t t = 0;
    PD_ASSERT_OK(pd_device_type_register("pt_late", &t));
    pd_place after = pd_place_custom("pt_late", 1);
    PD_EXPECT_EQ(after.type, t);
    PD_EXPECT(!pd_place_equal(before, after));
}

/* --- Which places can hold tensors in this CPU-only build ------------------------------------ */

static const int64_t shape2[2] = {2, 3};

PD_TEST(Place, GpuAllocationIsUnavailableNamingTheFunctionAndThePlace)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tensor_empty(&t, PD_FLOAT32, pd_place_gpu(0), 2, shape2), PD_ERR_UNAVAILABLE,
                    "pd_tensor_empty: place gpu:0 needs CUDA");
    PD_EXPECT_CONTAINS(pd_last_error(), "pd_place_cpu()");
    PD_EXPECT_ERROR(pd_tensor_zeros(&t, PD_FLOAT32, pd_place_gpu(1), 2, shape2), PD_ERR_UNAVAILABLE,
                    "pd_tensor_zeros: place gpu:1");
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
    int32_t type = 0;
    PD_ASSERT_OK(pd_device_type_register("npu", &type));
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_tensor_full(&t, PD_FLOAT64, pd_place_custom("npu", 1), 2, shape2, 1.0),
                    PD_ERR_UNAVAILABLE,
                    "pd_tensor_full: place npu:1 is a custom device of type 'npu'");
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

/* --- Concurrency ------------------------------------------------------------------------------ */

#include <pthread.h>
#include <stdio.h>

enum { RACE_THREADS = 4, RACE_NAMES = 6 };

typedef struct race_arg {
    int index;
    int32_t common;          /* the number this thread got for the shared name */
    int32_t own[RACE_NAMES]; /* numbers of its own names */
    bool lookups_ok;
} race_arg;

static void *race_register(void *p)
{
    race_arg *a = p;
    a->lookups_ok = pd_device_type_register("pt_race_common", &a->common) == PD_OK;
    for (int i = 0; i < RACE_NAMES; ++i) {
        char name[32];
        snprintf(name, sizeof name, "pt_race_%d_%d", a->index, i);
        a->lookups_ok = a->lookups_ok && pd_device_type_register(name, &a->own[i]) == PD_OK;
        pd_place p = pd_place_custom(name, 0); /* lock-free lookup racing other registrations */
        a->lookups_ok = a->lookups_ok && p.type == a->own[i];
        a->lookups_ok = a->lookups_ok && pd_place_custom("pt_race_common", 1).type == a->common;
    }
    return NULL;
}

PD_TEST(PlaceCustom, ConcurrentRegistrationsAndLookupsAgree)
{
    pthread_t threads[RACE_THREADS];
    race_arg args[RACE_THREADS];
    for (int t = 0; t < RACE_THREADS; ++t) {
        memset(&args[t], 0, sizeof args[t]);
        args[t].index = t;
        PD_ASSERT_EQ(pthread_create(&threads[t], NULL, race_register, &args[t]), 0);
    }
    for (int t = 0; t < RACE_THREADS; ++t)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < RACE_THREADS; ++t) {
        PD_EXPECT(args[t].lookups_ok);
        PD_EXPECT_EQ(args[t].common, args[0].common);
        for (int i = 0; i < RACE_NAMES; ++i) {
            char name[32];
            snprintf(name, sizeof name, "pt_race_%d_%d", t, i);
            PD_EXPECT_STREQ(pd_device_type_name(args[t].own[i]), name);
            for (int u = 0; u < t; ++u) /* every name got a number of its own */
                for (int j = 0; j < RACE_NAMES; ++j)
                    PD_EXPECT_NE(args[t].own[i], args[u].own[j]);
        }
    }
}
