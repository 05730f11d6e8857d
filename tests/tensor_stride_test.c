/*
 * tensor_stride_test.c - strided tensors on the host side: the layout fields of new tensors,
 * views along every axis with steps (negative ones too), transpose / permute, expand,
 * as_strided, reshape of strided views, and contiguous / cast / copy_to of strided sources,
 * each against values computed here from the element formula; with every error path.
 */
#include "tensor_util.h"

#include "pdext_npy.h"

#include <stdio.h>

/* A [2, 3, 4] int32 tensor whose element [a, b, c] is 100a + 10b + c. */
static pd_tensor abc(void)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    const int64_t shape[3] = {2, 3, 4};
    if (pd_tensor_empty(&t, PD_INT32, CPU, 3, shape) != PD_OK) {
        pd_test_fail(__FILE__, __LINE__, "pd_tensor_empty: %s", pd_last_error());
        return t;
    }
    int32_t *d = t.data;
    for (int a = 0; a < 2; ++a)
        for (int b = 0; b < 3; ++b)
            for (int c = 0; c < 4; ++c)
                *d++ = 100 * a + 10 * b + c;
    return t;
}

/* Element `index` of a 3-d int32 tensor, through pd_stride (any layout). */
static int32_t at3(const pd_tensor *t, int64_t i, int64_t j, int64_t k)
{
    const int32_t *d = t->data;
    return d[i * pd_stride(t, 0) + j * pd_stride(t, 1) + k * pd_stride(t, 2)];
}

/* Every element of a 3-d int32 view equals expect(i, j, k), read through its strides and, in
 * C order, in its dense copy. */
#define EXPECT_VIEW_VALUES(view, expect)                          \
    do {                                                          \
        pd_tensor dense_;                                         \
        PD_ASSERT_OK(pd_tensor_contiguous(&dense_, (view)));      \
        PD_EXPECT(pd_is_contiguous(&dense_));                     \
        const int32_t *flat_ = dense_.data;                       \
        for (int64_t i = 0; i < (view)->shape[0]; ++i)            \
            for (int64_t j = 0; j < (view)->shape[1]; ++j)        \
                for (int64_t k = 0; k < (view)->shape[2]; ++k) {  \
                    PD_EXPECT_EQ(at3((view), i, j, k), (expect)); \
                    PD_EXPECT_EQ(*flat_++, (expect));             \
                }                                                 \
        pd_tensor_release(&dense_);                               \
    } while (0)

static void release4(pd_tensor *a, pd_tensor *b, pd_tensor *c, pd_tensor *d)
{
    pd_tensor_release(a);
    pd_tensor_release(b);
    pd_tensor_release(c);
    pd_tensor_release(d);
}

/* --- Layout of new tensors ------------------------------------------------------------------ */

PD_TEST(Stride, NewTensorsAreDenseWithRowMajorStridesAndNoOffset)
{
    pd_tensor t = abc();
    PD_EXPECT(pd_is_contiguous(&t));
    PD_EXPECT_EQ(t.layout, PD_LAYOUT_DENSE);
    PD_EXPECT_EQ(t.offset, 0);
    PD_EXPECT_EQ(t.strides[0], 12);
    PD_EXPECT_EQ(t.strides[1], 4);
    PD_EXPECT_EQ(t.strides[2], 1);
    PD_EXPECT_EQ(t.strides[3], 0);
    PD_EXPECT_EQ(pd_stride(&t, -1), 1);
    PD_EXPECT_EQ(pd_stride(&t, 3), 0);
    pd_tensor_release(&t);
}

PD_TEST(Stride, HandFilledDenseStructReadsRowMajorThroughPdStride)
{
    int32_t buf[6] = {0};
    pd_tensor t = PD_TENSOR_UNDEFINED; /* as a 0.1 host fills it: strides left 0 */
    t.data = buf;
    t.dtype = PD_INT32;
    t.ndim = 2;
    t.shape[0] = 2;
    t.shape[1] = 3;
    PD_EXPECT(pd_is_contiguous(&t));
    PD_EXPECT_EQ(pd_stride(&t, 0), 3);
    PD_EXPECT_EQ(pd_stride(&t, 1), 1);
}

PD_TEST(Stride, AxisZeroSliceRecordsItsOffset)
{
    pd_tensor t = iota43(), rows;
    PD_ASSERT_OK(pd_tensor_slice(&rows, &t, 1, 3));
    PD_EXPECT_EQ(rows.offset, 3);
    PD_EXPECT(pd_is_contiguous(&rows));
    PD_EXPECT(rows.data == (void *)((float *)t.data + 3));
    pd_tensor_release(&rows);
    pd_tensor_release(&t);
}

/* --- Slices with a step ----------------------------------------------------------------------- */

PD_TEST(Stride, SliceWithAStepAlongEveryAxis)
{
    pd_tensor t = abc(), v;
    PD_ASSERT_OK(pd_tensor_slice_step(&v, &t, 0, 1, 2, 1)); /* a = 1 only: still dense */
    PD_EXPECT(pd_is_contiguous(&v));
    EXPECT_VIEW_VALUES(&v, 100 * (1 + i) + 10 * j + k);
    pd_tensor_release(&v);

    PD_ASSERT_OK(pd_tensor_slice_step(&v, &t, 1, 0, 3, 2)); /* b = 0, 2 */
    PD_EXPECT_EQ(v.shape[1], 2);
    PD_EXPECT_EQ(v.strides[1], 8);
    PD_EXPECT(!pd_is_contiguous(&v));
    EXPECT_VIEW_VALUES(&v, 100 * i + 10 * (2 * j) + k);
    pd_tensor_release(&v);

    PD_ASSERT_OK(pd_tensor_slice_step(&v, &t, -1, 1, 4, 2)); /* c = 1, 3 */
    PD_EXPECT_EQ(v.shape[2], 2);
    PD_EXPECT_EQ(v.strides[2], 2);
    PD_EXPECT_EQ(v.offset, 1);
    EXPECT_VIEW_VALUES(&v, 100 * i + 10 * j + (1 + 2 * k));
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 2);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, NegativeStepWalksBackwards)
{
    pd_tensor t = abc(), v, w;
    PD_ASSERT_OK(pd_tensor_slice_step(&v, &t, 2, 3, -1, -1)); /* c = 3, 2, 1, 0 */
    PD_EXPECT_EQ(v.shape[2], 4);
    PD_EXPECT_EQ(v.strides[2], -1);
    PD_EXPECT_EQ(v.offset, 3);
    EXPECT_VIEW_VALUES(&v, 100 * i + 10 * j + (3 - k));
    PD_ASSERT_OK(pd_tensor_slice_step(&w, &v, 1, 2, 0, -2)); /* b = 2 only (2 > i > 0) */
    PD_EXPECT_EQ(w.shape[1], 1);
    EXPECT_VIEW_VALUES(&w, 100 * i + 20 + (3 - k));
    pd_tensor_release(&w);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, SliceStepRejectsBadRangesStepsAndAxesNamingThem)
{
    pd_tensor t = abc(), out;
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice_step(&out, &t, 1, 0, 3, 0),
                           PD_ERR_INVALID_ARGUMENT, "pd_tensor_slice_step: step is 0");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice_step(&out, &t, 1, 0, 4, 1),
                           PD_ERR_INVALID_ARGUMENT,
                           "[0, 4) along axis 1 is out of range; with step 1 expected 0 <= "
                           "begin <= end <= shape[1] = 3");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice_step(&out, &t, 2, 4, -1, -1),
                           PD_ERR_INVALID_ARGUMENT,
                           "with the negative step -1 expected -1 <= end <= begin < shape[2] = 4");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice_step(&out, &t, 3, 0, 1, 1),
                           PD_ERR_INVALID_ARGUMENT,
                           "axis 3 is out of range for a tensor of ndim 3; expected -3 .. 2");
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    pd_tensor_release(&t);
}

/* --- Transpose and permute ------------------------------------------------------------------- */

PD_TEST(Stride, TransposeSwapsShapeAndStrides)
{
    pd_tensor t = abc(), v, back;
    PD_ASSERT_OK(pd_tensor_transpose(&v, &t, 0, 2));
    PD_EXPECT_EQ(v.shape[0], 4);
    PD_EXPECT_EQ(v.shape[2], 2);
    PD_EXPECT_EQ(v.strides[0], 1);
    PD_EXPECT_EQ(v.strides[1], 4);
    PD_EXPECT_EQ(v.strides[2], 12);
    PD_EXPECT(!pd_is_contiguous(&v));
    PD_EXPECT(v.data == t.data);
    EXPECT_VIEW_VALUES(&v, 100 * k + 10 * j + i);
    PD_ASSERT_OK(pd_tensor_transpose(&back, &v, -1, 0)); /* twice: dense again */
    PD_EXPECT(pd_is_contiguous(&back));
    EXPECT_VIEW_VALUES(&back, 100 * i + 10 * j + k);
    pd_tensor_release(&back);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, PermuteReordersEveryAxis)
{
    pd_tensor t = abc(), v;
    const int32_t dims[3] = {1, 2, 0};
    PD_ASSERT_OK(pd_tensor_permute(&v, &t, 3, dims));
    PD_EXPECT_EQ(v.shape[0], 3);
    PD_EXPECT_EQ(v.shape[1], 4);
    PD_EXPECT_EQ(v.shape[2], 2);
    EXPECT_VIEW_VALUES(&v, 100 * k + 10 * i + j);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, PermuteRejectsAWrongRankAndARepeatedAxis)
{
    pd_tensor t = abc(), out;
    const int32_t two[2] = {1, 0}, repeated[3] = {0, 2, -1};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_permute(&out, &t, 2, two), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_permute: ndim is 2, but src has 3 axes");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_permute(&out, &t, 3, repeated), PD_ERR_INVALID_ARGUMENT,
                           "dims names axis 2 twice; expected a permutation of 0 .. 2");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_transpose(&out, &t, 0, 5), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_transpose: axis b 5 is out of range");
    pd_tensor_release(&t);
}

/* --- Expand ------------------------------------------------------------------------------------
 */

PD_TEST(Stride, ExpandBroadcastsWithZeroStrides)
{
    pd_tensor t, col, v;
    const int64_t three = 3;
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_INT32, CPU, 1, &three));
    for (int i = 0; i < 3; ++i)
        ((int32_t *)t.data)[i] = 10 * i;
    const int64_t col_shape[2] = {3, 1}, target[3] = {2, -1, 4};
    PD_ASSERT_OK(pd_tensor_reshape(&col, &t, 2, col_shape));
    PD_ASSERT_OK(pd_tensor_expand(&v, &col, 3, target));
    PD_EXPECT_EQ(v.shape[0], 2);
    PD_EXPECT_EQ(v.shape[1], 3);
    PD_EXPECT_EQ(v.shape[2], 4);
    PD_EXPECT_EQ(v.strides[0], 0);
    PD_EXPECT_EQ(v.strides[1], 1);
    PD_EXPECT_EQ(v.strides[2], 0);
    PD_EXPECT(!pd_is_contiguous(&v));
    EXPECT_VIEW_VALUES(&v, 10 * j);
    pd_tensor_release(&v);
    pd_tensor_release(&col);
    pd_tensor_release(&t);
}

PD_TEST(Stride, ExpandRejectsAnAxisThatIsNotOne)
{
    pd_tensor t = abc(), out;
    const int64_t target[3] = {2, 5, 4};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_expand(&out, &t, 3, target), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_expand: shape[1] is 5, but src's axis 1 has size 3; an axis "
                           "can only be expanded from size 1");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_expand(&out, &t, 2, target), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_expand: ndim is 2; expected src's 3 up to 8");
    const int64_t lead[4] = {-1, 2, 3, 4};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_expand(&out, &t, 4, lead), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_expand: shape[0] is -1; a new leading axis needs a size >= "
                           "0");
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    pd_tensor_release(&t);
}

/* --- as_strided --------------------------------------------------------------------------------
 */

PD_TEST(Stride, AsStridedMakesAnyViewInsideTheStorage)
{
    pd_tensor t = abc(), v;
    /* Element [i, j, k] at 5 + 12i + 4k - j: offset 5 covers the -j. */
    const int64_t shape[3] = {2, 2, 2}, strides[3] = {12, -1, 4};
    PD_ASSERT_OK(pd_tensor_as_strided(&v, &t, 3, shape, strides, 5));
    PD_EXPECT_EQ(v.offset, 5);
    EXPECT_VIEW_VALUES(&v, 100 * i + 10 * ((5 - j + 4 * k) / 4) + (5 - j + 4 * k) % 4);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, AsStridedOutOfTheStorageIsAnErrorNamingTheBytes)
{
    pd_tensor t = abc(), out; /* 24 int32: 96 bytes */
    const int64_t shape[2] = {4, 6}, strides[2] = {6, 1};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_as_strided(&out, &t, 2, shape, strides, 1),
                           PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_as_strided: the view reaches bytes [4, 100) of its storage, "
                           "which holds 96 bytes");
    const int64_t back[2] = {2, 2}, neg[2] = {1, -1};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_as_strided(&out, &t, 2, back, neg, 0),
                           PD_ERR_INVALID_ARGUMENT, "reaches bytes [-4, 8)");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_as_strided(&out, &t, 2, back, neg, -1),
                           PD_ERR_INVALID_ARGUMENT, "offset -1 is outside the storage");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_as_strided(&out, &t, 2, back, NULL, 0),
                           PD_ERR_INVALID_ARGUMENT, "strides is NULL but ndim is 2");
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    pd_tensor_release(&t);
}

/* --- Reshape of strided views ------------------------------------------------------------------
 */

PD_TEST(Stride, ReshapeOfAStridedViewWhereTheStridesAllowIt)
{
    pd_tensor t = abc(), v, r;
    const int32_t dims[3] = {1, 0, 2};
    PD_ASSERT_OK(pd_tensor_permute(&v, &t, 3, dims)); /* [3, 2, 4], strides [4, 12, 1] */
    const int64_t split[4] = {3, 2, 2, 2}; /* splitting the dense last axis needs no copy */
    PD_ASSERT_OK(pd_tensor_reshape(&r, &v, 4, split));
    PD_EXPECT(r.data == t.data);
    PD_EXPECT_EQ(r.strides[0], 4);
    PD_EXPECT_EQ(r.strides[1], 12);
    PD_EXPECT_EQ(r.strides[2], 2);
    PD_EXPECT_EQ(r.strides[3], 1);
    const int32_t *d = t.data;
    for (int64_t i = 0; i < 3; ++i)
        for (int64_t j = 0; j < 2; ++j)
            for (int64_t k = 0; k < 4; ++k)
                PD_EXPECT_EQ(d[i * r.strides[0] + j * r.strides[1] + (k / 2) * r.strides[2] +
                               (k % 2) * r.strides[3]],
                             100 * j + 10 * i + k);
    pd_tensor_release(&r);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, ReshapeOfANonViewableTensorSaysToMakeItContiguous)
{
    pd_tensor t = abc(), v, out;
    PD_ASSERT_OK(pd_tensor_transpose(&v, &t, 0, 1)); /* [3, 2, 4], strides [4, 12, 1] */
    const int64_t flat[1] = {24};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, &v, 1, flat), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_reshape: src is a strided view (shape [3, 2, 4], strides "
                           "[4, 12, 1]) whose elements cannot be addressed with shape [24] "
                           "without a copy; make it contiguous first (pd_tensor_contiguous)");
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 2);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

/* --- Contiguous, cast and copy_to of strided sources -------------------------------------------
 */

PD_TEST(Stride, ContiguousOfADenseTensorSharesItsStorage)
{
    pd_tensor t = abc(), c;
    PD_ASSERT_OK(pd_tensor_contiguous(&c, &t));
    PD_EXPECT(c.storage == t.storage);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 2);
    pd_tensor_release(&c);
    pd_tensor_release(&t);
}

PD_TEST(Stride, ContiguousOfAStridedViewIsADenseCopy)
{
    pd_tensor t = abc(), v, c;
    PD_ASSERT_OK(pd_tensor_transpose(&v, &t, 1, 2));
    PD_ASSERT_OK(pd_tensor_contiguous(&c, &v));
    PD_EXPECT(c.storage != t.storage);
    PD_EXPECT(pd_is_contiguous(&c));
    PD_EXPECT_EQ(c.offset, 0);
    PD_EXPECT(pd_same_shape(&c, &v));
    PD_EXPECT_EQ(pd_tensor_use_count(&c), 1);
    const int32_t *d = c.data;
    for (int64_t a = 0; a < 2; ++a)
        for (int64_t cc = 0; cc < 4; ++cc)
            for (int64_t b = 0; b < 3; ++b)
                PD_EXPECT_EQ(*d++, 100 * a + 10 * b + cc);
    pd_tensor_release(&c);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, CastOfAStridedSourceConvertsInItsOrder)
{
    pd_tensor t = abc(), v, f;
    PD_ASSERT_OK(pd_tensor_slice_step(&v, &t, 2, 3, -1, -2)); /* c = 3, 1 */
    PD_ASSERT_OK(pd_tensor_cast(&f, &v, PD_FLOAT64));
    PD_EXPECT(pd_is_contiguous(&f));
    PD_EXPECT_EQ(f.shape[2], 2);
    const double *d = f.data;
    for (int64_t a = 0; a < 2; ++a)
        for (int64_t b = 0; b < 3; ++b)
            for (int64_t k = 0; k < 2; ++k)
                PD_EXPECT_EQ(*d++, 100.0 * a + 10.0 * b + (3 - 2 * k));
    pd_tensor_release(&f);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, CastOfALongStridedRowGoesThroughChunks)
{
    /* A transposed [2, 3000] int16 -> [3000, 2]: rows of stride 3000, longer than a chunk. */
    pd_tensor t, v, f;
    const int64_t shape[2] = {2, 3000};
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_INT16, CPU, 2, shape));
    for (int i = 0; i < 6000; ++i)
        ((int16_t *)t.data)[i] = (int16_t)(i % 3000 - (i / 3000) * 7);
    PD_ASSERT_OK(pd_tensor_transpose(&v, &t, 0, 1));
    PD_ASSERT_OK(pd_tensor_cast(&f, &v, PD_FLOAT32));
    const float *d = f.data;
    for (int i = 0; i < 3000; ++i) {
        PD_EXPECT_EQ(d[2 * i], (float)i);
        PD_EXPECT_EQ(d[2 * i + 1], (float)(i - 7));
    }
    pd_tensor_release(&f);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, CopyToOfAnExpandedViewRepeatsTheElements)
{
    pd_tensor t, v, c;
    PD_ASSERT_OK(pd_tensor_full(&t, PD_FLOAT64, CPU, 0, NULL, 2.5));
    const int64_t shape[2] = {3, 5};
    PD_ASSERT_OK(pd_tensor_expand(&v, &t, 2, shape));
    PD_EXPECT_EQ(v.strides[0], 0);
    PD_EXPECT_EQ(v.strides[1], 0);
    PD_ASSERT_OK(pd_tensor_copy_to(&c, &v, CPU));
    PD_EXPECT_EQ(pd_numel(&c), 15);
    for (int i = 0; i < 15; ++i)
        PD_EXPECT_EQ(((double *)c.data)[i], 2.5);
    pd_tensor_release(&c);
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

/* --- Structs edited by hand are checked against their storage ----------------------------------
 */

PD_TEST(Stride, HostFunctionsRefuseATensorReachingPastItsStorage)
{
    pd_tensor t = iota43(), out;
    pd_tensor bad = t; /* no reference taken: a host's edited copy */
    bad.shape[0] = 5;
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_cast(&out, &bad, PD_FLOAT64), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_cast: src reaches bytes [0, 60) of its storage, which "
                           "holds 48 bytes (shape [5, 3], strides [3, 1], data at byte 0)");
    bad = t;
    bad.layout = PD_LAYOUT_STRIDED;
    bad.strides[1] = 4;
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_copy_to(&out, &bad, CPU), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_copy_to: src reaches bytes [0, 72)");
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    pd_tensor_release(&t);
}

PD_TEST(Stride, SavingAStridedViewAsNpySaysToMakeItContiguous)
{
    pd_tensor t = abc(), v;
    PD_ASSERT_OK(pd_tensor_transpose(&v, &t, 0, 2));
    char path[512];
    snprintf(path, sizeof path, "%s", pd_test_path("stride_test_view.npy"));
    PD_EXPECT_ERROR(pd_npy_save(path, &v), PD_ERR_INVALID_ARGUMENT,
                    "pd_npy_save: the tensor is a strided view; make it contiguous first");
    pd_tensor_release(&v);
    pd_tensor_release(&t);
}

PD_TEST(Stride, TransposedCopiesOfEveryElementSizeGoThroughTiles)
{
    /* [37, 21] (not a multiple of the 16-element tiles) transposed, for elements of 1, 2, 4, 8
     * and 16 bytes; element [i, j] of the transpose is (21j + i) % 100. */
    const int64_t shape[2] = {37, 21};
    pd_tensor src;
    PD_ASSERT_OK(pd_tensor_empty(&src, PD_FLOAT64, CPU, 2, shape));
    for (int64_t k = 0; k < 37 * 21; ++k)
        ((double *)src.data)[k] = (double)(k % 100);
    const pd_data_type types[5] = {PD_INT8, PD_INT16, PD_FLOAT32, PD_INT64, PD_COMPLEX128};
    for (int t = 0; t < 5; ++t) {
        pd_tensor typed, view, dense, back;
        PD_ASSERT_OK(pd_tensor_cast(&typed, &src, types[t]));
        PD_ASSERT_OK(pd_tensor_transpose(&view, &typed, 0, 1));
        PD_ASSERT_OK(pd_tensor_contiguous(&dense, &view));
        PD_ASSERT_OK(pd_tensor_cast(&back, &dense, PD_FLOAT64));
        for (int64_t i = 0; i < 21; ++i)
            for (int64_t j = 0; j < 37; ++j)
                PD_EXPECT_EQ(((double *)back.data)[i * 37 + j], (double)((21 * j + i) % 100));
        release4(&typed, &view, &dense, &back);
    }
    pd_tensor_release(&src);
}
