/* tensor_test.c - the host tensor API's constructors (empty, full, zeros, ones, *_like) and
 * copy_to, with every error path. Views are in tensor_view_test.c, wrapped buffers and
 * reference counting in storage_test.c, element conversion in cast_test.c. */
#include "tensor_util.h"

#include <math.h>

/* --- Constructors --------------------------------------------------------------------------- */

PD_TEST(Tensor, EmptyHasTheRequestedDtypeShapeAndPlace)
{
    pd_tensor t;
    const int64_t shape[3] = {2, 3, 4};
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_FLOAT32, CPU, 3, shape));
    PD_EXPECT(pd_defined(&t));
    PD_EXPECT(pd_initialized(&t));
    PD_EXPECT(pd_is_cpu(&t));
    PD_EXPECT(!pd_is_gpu(&t));
    PD_EXPECT(pd_place_equal(pd_tensor_place(&t), CPU));
    PD_EXPECT_EQ(pd_dtype(&t), PD_FLOAT32);
    PD_EXPECT_EQ(pd_ndim(&t), 3);
    PD_EXPECT_EQ(pd_shape(&t)[0], 2);
    PD_EXPECT_EQ(pd_dim(&t, 1), 3);
    PD_EXPECT_EQ(pd_dim(&t, -1), 4);
    for (int i = 3; i < PD_MAX_DIMS; ++i)
        PD_EXPECT_EQ(t.shape[i], 0);
    PD_EXPECT_EQ(pd_numel(&t), 24);
    PD_EXPECT_EQ(pd_nbytes(&t), 96);
    PD_EXPECT(pd_data(&t) != NULL);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    pd_tensor_release(&t);
}

PD_TEST(Tensor, DataIs64ByteAligned)
{
    const int64_t sizes[] = {0, 1, 3, 17, 64, 1000};
    const pd_data_type types[] = {PD_BOOL, PD_INT16, PD_FLOAT32, PD_COMPLEX128};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; ++i)
        for (size_t j = 0; j < sizeof types / sizeof types[0]; ++j) {
            pd_tensor t;
            PD_ASSERT_OK(pd_tensor_empty(&t, types[j], CPU, 1, &sizes[i]));
            PD_EXPECT_EQ((uintptr_t)t.data % 64, 0);
            pd_tensor_release(&t);
        }
}

PD_TEST(Tensor, ScalarHasRankZeroAndOneElement)
{
    pd_tensor t;
    PD_ASSERT_OK(pd_tensor_full(&t, PD_INT64, CPU, 0, NULL, 42));
    PD_EXPECT_EQ(pd_ndim(&t), 0);
    PD_EXPECT_EQ(pd_numel(&t), 1);
    PD_EXPECT_EQ(*(int64_t *)t.data, 42);
    pd_tensor_release(&t);
}

PD_TEST(Tensor, ZeroElementTensorIsInitialized)
{
    pd_tensor t;
    const int64_t shape[2] = {4, 0};
    PD_ASSERT_OK(pd_tensor_ones(&t, PD_FLOAT64, CPU, 2, shape));
    PD_EXPECT(pd_initialized(&t));
    PD_EXPECT_EQ(pd_numel(&t), 0);
    PD_EXPECT_EQ(pd_nbytes(&t), 0);
    PD_EXPECT_EQ(pd_dim(&t, 0), 4);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    pd_tensor_release(&t);
}

PD_TEST(Tensor, FullFillsEveryElement)
{
    pd_tensor t;
    const int64_t shape[2] = {7, 13};
    PD_ASSERT_OK(pd_tensor_full(&t, PD_FLOAT32, CPU, 2, shape, 2.5));
    const float *v = t.data;
    for (int i = 0; i < 7 * 13; ++i)
        if (v[i] != 2.5f) {
            PD_EXPECT_NEAR(v[i], 2.5, 0);
            break;
        }
    pd_tensor_release(&t);
}

PD_TEST(Tensor, FullOfEveryDtypeHoldsTheConvertedValue)
{
    /* -1.5 in each type, written out by hand. */
    pd_tensor t;
    const int64_t n = 5;
#define CHECK_FULL(dtype, ctype, cond)                             \
    do {                                                           \
        PD_ASSERT_OK(pd_tensor_full(&t, dtype, CPU, 1, &n, -1.5)); \
        const ctype *e = t.data;                                   \
        for (int i = 0; i < n; ++i)                                \
            PD_EXPECT(cond);                                       \
        pd_tensor_release(&t);                                     \
    } while (0)
    CHECK_FULL(PD_BOOL, unsigned char, e[i] == 1);
    CHECK_FULL(PD_INT8, int8_t, e[i] == -1);
    CHECK_FULL(PD_UINT8, uint8_t, e[i] == 0);
    CHECK_FULL(PD_INT16, int16_t, e[i] == -1);
    CHECK_FULL(PD_UINT16, uint16_t, e[i] == 0);
    CHECK_FULL(PD_INT32, int32_t, e[i] == -1);
    CHECK_FULL(PD_UINT32, uint32_t, e[i] == 0);
    CHECK_FULL(PD_INT64, int64_t, e[i] == -1);
    CHECK_FULL(PD_UINT64, uint64_t, e[i] == 0);
    CHECK_FULL(PD_FLOAT16, pd_float16, e[i].bits == 0xbe00);
    CHECK_FULL(PD_BFLOAT16, pd_bfloat16, e[i].bits == 0xbfc0);
    CHECK_FULL(PD_FLOAT32, float, e[i] == -1.5f);
    CHECK_FULL(PD_FLOAT64, double, e[i] == -1.5);
    CHECK_FULL(PD_COMPLEX64, pd_complex64, e[i].re == -1.5f && e[i].im == 0.0f);
    CHECK_FULL(PD_COMPLEX128, pd_complex128, e[i].re == -1.5 && e[i].im == 0.0);
#undef CHECK_FULL
}

/* Reads element 0 of a one-element tensor made by full. */
static pd_tensor full1(pd_data_type dtype, double value)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t one = 1;
    if (pd_tensor_full(&t, dtype, CPU, 1, &one, value) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_tensor_full failed: %s", pd_last_error());
    return t;
}

PD_TEST(Tensor, FullSaturatesIntegersAndMapsNaNToZero)
{
    pd_tensor t;
    t = full1(PD_INT8, 300.7);
    PD_EXPECT_EQ(*(int8_t *)t.data, 127);
    pd_tensor_release(&t);
    t = full1(PD_INT8, -300);
    PD_EXPECT_EQ(*(int8_t *)t.data, -128);
    pd_tensor_release(&t);
    t = full1(PD_UINT8, -5);
    PD_EXPECT_EQ(*(uint8_t *)t.data, 0);
    pd_tensor_release(&t);
    t = full1(PD_INT32, -2.9);
    PD_EXPECT_EQ(*(int32_t *)t.data, -2);
    pd_tensor_release(&t);
    t = full1(PD_INT32, NAN);
    PD_EXPECT_EQ(*(int32_t *)t.data, 0);
    pd_tensor_release(&t);
    t = full1(PD_UINT64, 1e30);
    PD_EXPECT(*(uint64_t *)t.data == UINT64_MAX);
    pd_tensor_release(&t);
    t = full1(PD_INT64, -1e30);
    PD_EXPECT(*(int64_t *)t.data == INT64_MIN);
    pd_tensor_release(&t);
    t = full1(PD_INT64, INFINITY);
    PD_EXPECT(*(int64_t *)t.data == INT64_MAX);
    pd_tensor_release(&t);
}

PD_TEST(Tensor, FullOfBoolIsValueNotEqualToZero)
{
    pd_tensor t;
    t = full1(PD_BOOL, 0.0);
    PD_EXPECT_EQ(*(unsigned char *)t.data, 0);
    pd_tensor_release(&t);
    t = full1(PD_BOOL, 0.25);
    PD_EXPECT_EQ(*(unsigned char *)t.data, 1);
    pd_tensor_release(&t);
    t = full1(PD_BOOL, NAN);
    PD_EXPECT_EQ(*(unsigned char *)t.data, 1);
    pd_tensor_release(&t);
}

PD_TEST(Tensor, FullOfHalfTypesRoundsToNearestEven)
{
    pd_tensor t;
    t = full1(PD_FLOAT16, 1.0);
    PD_EXPECT_EQ(((pd_float16 *)t.data)->bits, 0x3c00);
    pd_tensor_release(&t);
    t = full1(PD_FLOAT16, 1e9);
    PD_EXPECT_EQ(((pd_float16 *)t.data)->bits, 0x7c00);
    pd_tensor_release(&t);
    t = full1(PD_BFLOAT16, 1.0);
    PD_EXPECT_EQ(((pd_bfloat16 *)t.data)->bits, 0x3f80);
    pd_tensor_release(&t);
}

PD_TEST(Tensor, FullOfNegativeZeroKeepsTheSign)
{
    pd_tensor t;
    const int64_t n = 9;
    PD_ASSERT_OK(pd_tensor_full(&t, PD_FLOAT64, CPU, 1, &n, -0.0));
    for (int i = 0; i < n; ++i)
        PD_EXPECT(((double *)t.data)[i] == 0.0 && signbit(((double *)t.data)[i]));
    pd_tensor_release(&t);
}

PD_TEST(Tensor, ZerosAndOnesOfEveryDtype)
{
    for (int d = 1; d < PD_NUM_DTYPES; ++d) {
        pd_tensor z, o, ref;
        const int64_t n = 3;
        PD_ASSERT_OK(pd_tensor_zeros(&z, (pd_data_type)d, CPU, 1, &n));
        PD_ASSERT_OK(pd_tensor_ones(&o, (pd_data_type)d, CPU, 1, &n));
        PD_ASSERT_OK(pd_tensor_full(&ref, (pd_data_type)d, CPU, 1, &n, 1.0));
        size_t size = pd_dtype_size((pd_data_type)d);
        const unsigned char *zb = z.data;
        for (size_t i = 0; i < n * size; ++i)
            PD_EXPECT_EQ(zb[i], 0);
        PD_EXPECT(memcmp(o.data, ref.data, n * size) == 0);
        /* The first byte of a little-endian 1 is non-zero in every type but the halves. */
        PD_EXPECT(memcmp(o.data, z.data, n * size) != 0);
        pd_tensor_release(&z);
        pd_tensor_release(&o);
        pd_tensor_release(&ref);
    }
}

PD_TEST(Tensor, EmptyLikeAndFullLikeCopyDtypeShapeAndPlace)
{
    pd_tensor a, b, c;
    const int64_t shape[3] = {2, 1, 5};
    PD_ASSERT_OK(pd_tensor_zeros(&a, PD_INT16, CPU, 3, shape));
    PD_ASSERT_OK(pd_tensor_empty_like(&b, &a));
    PD_ASSERT_OK(pd_tensor_full_like(&c, &a, 7));
    PD_EXPECT_EQ(b.dtype, PD_INT16);
    PD_EXPECT(pd_same_shape(&a, &b));
    PD_EXPECT(pd_same_shape(&a, &c));
    PD_EXPECT(pd_place_equal(b.place, a.place));
    PD_EXPECT(b.data != a.data);
    for (int i = 0; i < 10; ++i)
        PD_EXPECT_EQ(((int16_t *)c.data)[i], 7);
    PD_EXPECT_EQ(pd_tensor_use_count(&a), 1);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_tensor_release(&c);
}

PD_TEST(Tensor, LikeFunctionsRejectAMissingOrUndefinedModel)
{
    pd_tensor out, undefined = PD_TENSOR_UNDEFINED;
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_empty_like(&out, NULL), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_empty_like: like is NULL");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_full_like(&out, &undefined, 1), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_full_like: like is an undefined tensor");
}

/* --- Constructor errors ---------------------------------------------------------------------- */

PD_TEST(Tensor, RejectsAnUndefinedOrUnknownDtype)
{
    pd_tensor t;
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_empty(&t, PD_UNDEFINED, CPU, 2, shape23),
                           PD_ERR_INVALID_ARGUMENT, "pd_tensor_empty: dtype is PD_UNDEFINED");
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_full(&t, PD_NUM_DTYPES, CPU, 2, shape23, 0),
                           PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_full: dtype 16 is not a pdext data type");
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_zeros(&t, (pd_data_type)-2, CPU, 2, shape23),
                           PD_ERR_INVALID_ARGUMENT, "dtype -2 is not a pdext data type");
}

PD_TEST(Tensor, RejectsANegativeDimensionNamingIt)
{
    pd_tensor t;
    const int64_t shape[3] = {2, -3, 4};
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_empty(&t, PD_FLOAT32, CPU, 3, shape),
                           PD_ERR_INVALID_ARGUMENT, "pd_tensor_empty: shape[1] is -3");
}

PD_TEST(Tensor, RejectsNdimOutsideZeroToMaxDims)
{
    pd_tensor t;
    const int64_t shape[PD_MAX_DIMS + 1] = {1, 1, 1, 1, 1, 1, 1, 1, 1};
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_empty(&t, PD_FLOAT32, CPU, PD_MAX_DIMS + 1, shape),
                           PD_ERR_INVALID_ARGUMENT, "pd_tensor_empty: ndim is 9; expected 0..8");
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_ones(&t, PD_FLOAT32, CPU, -1, shape),
                           PD_ERR_INVALID_ARGUMENT, "pd_tensor_ones: ndim is -1");
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_FLOAT32, CPU, PD_MAX_DIMS, shape));
    PD_EXPECT_EQ(pd_numel(&t), 1);
    pd_tensor_release(&t);
}

PD_TEST(Tensor, RejectsANullShapeWithPositiveNdim)
{
    pd_tensor t;
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_empty(&t, PD_FLOAT32, CPU, 2, NULL),
                           PD_ERR_INVALID_ARGUMENT, "pd_tensor_empty: shape is NULL but ndim is 2");
}

PD_TEST(Tensor, RejectsAByteSizeThatOverflows)
{
    pd_tensor t;
    const int64_t huge[2] = {INT64_MAX, 2};
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_empty(&t, PD_INT8, CPU, 2, huge), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_empty: shape is too large");
    const int64_t big[1] = {INT64_MAX / 4};
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_empty(&t, PD_COMPLEX128, CPU, 1, big),
                           PD_ERR_INVALID_ARGUMENT, "too large");
}

PD_TEST(Tensor, RejectsOverflowingDimensionsEvenBesideAZeroDimension)
{
    /* numel would be 0, but pd_numel multiplies left to right and would overflow first. */
    pd_tensor t;
    const int64_t shape[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_empty(&t, PD_FLOAT32, CPU, 3, shape),
                           PD_ERR_INVALID_ARGUMENT, "too large");
}

PD_TEST(Tensor, RejectsANullOut)
{
    PD_EXPECT_ERROR(pd_tensor_empty(NULL, PD_FLOAT32, CPU, 2, shape23), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_empty: out is NULL");
    PD_EXPECT_ERROR(pd_tensor_full(NULL, PD_FLOAT32, CPU, 2, shape23, 1), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_full: out is NULL");
}

/* --- Copies ---------------------------------------------------------------------------------- */

PD_TEST(Tensor, CopyToCpuCopiesTheValuesIntoNewStorage)
{
    int64_t buf[6] = {1, -2, 3, -4, INT64_MAX, INT64_MIN};
    pd_tensor src, copy;
    PD_ASSERT_OK(pd_tensor_from_buffer(&src, buf, PD_INT64, CPU, 2, shape23, NULL, NULL));
    PD_ASSERT_OK(pd_tensor_copy_to(&copy, &src, CPU));
    PD_EXPECT(copy.data != src.data);
    PD_EXPECT(copy.storage != src.storage);
    PD_EXPECT_EQ((uintptr_t)copy.data % 64, 0);
    PD_EXPECT(pd_same_shape(&copy, &src));
    PD_EXPECT_EQ(copy.dtype, PD_INT64);
    PD_EXPECT(memcmp(copy.data, buf, sizeof buf) == 0);
    buf[0] = 100;
    PD_EXPECT_EQ(((int64_t *)copy.data)[0], 1);
    PD_EXPECT_EQ(pd_tensor_use_count(&src), 1);
    PD_EXPECT_EQ(pd_tensor_use_count(&copy), 1);
    pd_tensor_release(&src);
    pd_tensor_release(&copy);
}

PD_TEST(Tensor, CopyToCopiesZeroElementAndScalarTensors)
{
    pd_tensor a, b;
    const int64_t zero = 0;
    PD_ASSERT_OK(pd_tensor_empty(&a, PD_INT8, CPU, 1, &zero));
    PD_ASSERT_OK(pd_tensor_copy_to(&b, &a, CPU));
    PD_EXPECT_EQ(pd_numel(&b), 0);
    PD_EXPECT(pd_initialized(&b));
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    PD_ASSERT_OK(pd_tensor_full(&a, PD_COMPLEX64, CPU, 0, NULL, 3));
    PD_ASSERT_OK(pd_tensor_copy_to(&b, &a, CPU));
    PD_EXPECT(((pd_complex64 *)b.data)->re == 3.0f);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
}

PD_TEST(Tensor, CopyToAGpuIsUnavailable)
{
    pd_tensor src, out;
    int32_t npu = 0; /* custom device types are registered names */
    PD_ASSERT_OK(pd_device_type_register("npu", &npu));
    PD_ASSERT_OK(pd_tensor_zeros(&src, PD_FLOAT32, CPU, 2, shape23));
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_copy_to(&out, &src, pd_place_gpu(0)), PD_ERR_UNAVAILABLE,
                           "pd_tensor_copy_to: place gpu:0 needs CUDA");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_copy_to(&out, &src, pd_place_custom("npu", 0)),
                           PD_ERR_UNAVAILABLE, "custom device of type 'npu'");
    PD_EXPECT_EQ(pd_tensor_use_count(&src), 1);
    pd_tensor_release(&src);
}

PD_TEST(Tensor, CopyToRejectsAMissingSource)
{
    pd_tensor out, undefined = PD_TENSOR_UNDEFINED;
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_copy_to(&out, NULL, CPU), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_copy_to: src is NULL");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_copy_to(&out, &undefined, CPU), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_copy_to: src is an undefined tensor");
    PD_EXPECT_ERROR(pd_tensor_copy_to(NULL, &undefined, CPU), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_copy_to: out is NULL");
}

PD_TEST(Tensor, CopyFromANonCpuTensorIsUnavailable)
{
    /* A tensor claiming GPU memory where no CUDA plug-in is loaded (tests run without one). */
    pd_tensor src, out;
    PD_ASSERT_OK(pd_tensor_zeros(&src, PD_FLOAT32, CPU, 2, shape23));
    pd_tensor gpu = src;
    gpu.place = pd_place_gpu(1);
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_copy_to(&out, &gpu, CPU), PD_ERR_UNAVAILABLE,
                           "pd_tensor_copy_to: place gpu:1 needs CUDA");
    pd_tensor_release(&src);
}
