/* tensor_view_test.c - views that share storage: slice along axis 0, reshape (with one -1),
 * contiguous; with every error path. */
#include "tensor_util.h"

/* --- Views --------------------------------------------------------------------------------- */

PD_TEST(View, SliceIsAViewOfRowsSharingStorage)
{
    pd_tensor t = iota43(), rows;
    PD_ASSERT_OK(pd_tensor_slice(&rows, &t, 1, 3));
    PD_EXPECT(rows.storage == t.storage);
    PD_EXPECT(rows.data == (void *)((float *)t.data + 3));
    PD_EXPECT_EQ(pd_ndim(&rows), 2);
    PD_EXPECT_EQ(pd_dim(&rows, 0), 2);
    PD_EXPECT_EQ(pd_dim(&rows, 1), 3);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 2);
    for (int i = 0; i < 6; ++i)
        PD_EXPECT_EQ(((float *)rows.data)[i], i + 3);
    ((float *)rows.data)[0] = -1; /* writes through the view are seen by the source */
    PD_EXPECT_EQ(((float *)t.data)[3], -1);
    pd_tensor_release(&t);
    PD_EXPECT_EQ(pd_tensor_use_count(&rows), 1); /* the view keeps the storage alive */
    PD_EXPECT_EQ(((float *)rows.data)[5], 8);
    pd_tensor_release(&rows);
}

PD_TEST(View, SliceMayBeEmptyOrWhole)
{
    pd_tensor t = iota43(), empty, whole;
    PD_ASSERT_OK(pd_tensor_slice(&empty, &t, 4, 4));
    PD_EXPECT_EQ(pd_numel(&empty), 0);
    PD_EXPECT(pd_initialized(&empty));
    PD_ASSERT_OK(pd_tensor_slice(&whole, &t, 0, 4));
    PD_EXPECT(whole.data == t.data);
    PD_EXPECT(pd_same_shape(&whole, &t));
    pd_tensor_release(&empty);
    pd_tensor_release(&whole);
    pd_tensor_release(&t);
}

PD_TEST(View, SliceOfAVectorSelectsElements)
{
    pd_tensor t, part;
    const int64_t n = 10;
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_INT16, CPU, 1, &n));
    for (int i = 0; i < 10; ++i)
        ((int16_t *)t.data)[i] = (int16_t)(i * 10);
    PD_ASSERT_OK(pd_tensor_slice(&part, &t, 7, 10));
    PD_EXPECT_EQ(pd_numel(&part), 3);
    PD_EXPECT_EQ(((int16_t *)part.data)[0], 70);
    pd_tensor_release(&part);
    pd_tensor_release(&t);
}

PD_TEST(View, SliceRejectsRowsOutOfRange)
{
    pd_tensor t = iota43(), out;
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice(&out, &t, -1, 2), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_slice: rows [-1, 2) are out of range; expected 0 <= begin <= "
                           "end <= shape[0] = 4");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice(&out, &t, 0, 5), PD_ERR_INVALID_ARGUMENT,
                           "rows [0, 5) are out of range");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice(&out, &t, 3, 2), PD_ERR_INVALID_ARGUMENT,
                           "rows [3, 2) are out of range");
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    pd_tensor_release(&t);
}

PD_TEST(View, SliceRejectsScalarsAndMissingSources)
{
    pd_tensor s, out, undefined = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_zeros(&s, PD_FLOAT32, CPU, 0, NULL));
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice(&out, &s, 0, 0), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_slice: src is a scalar (ndim 0)");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice(&out, &undefined, 0, 0), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_slice: src is an undefined tensor");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_slice(&out, NULL, 0, 0), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_slice: src is NULL");
    PD_EXPECT_ERROR(pd_tensor_slice(NULL, &s, 0, 0), PD_ERR_INVALID_ARGUMENT, "out is NULL");
    pd_tensor_release(&s);
}

PD_TEST(View, ReshapeIsAViewSharingStorage)
{
    pd_tensor t = iota43(), r;
    const int64_t shape[3] = {2, 2, 3};
    PD_ASSERT_OK(pd_tensor_reshape(&r, &t, 3, shape));
    PD_EXPECT(r.data == t.data);
    PD_EXPECT(r.storage == t.storage);
    PD_EXPECT_EQ(pd_ndim(&r), 3);
    PD_EXPECT_EQ(pd_dim(&r, 0), 2);
    PD_EXPECT_EQ(pd_dim(&r, 2), 3);
    PD_EXPECT_EQ(r.shape[3], 0);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 2);
    PD_EXPECT_EQ(((float *)r.data)[11], 11);
    pd_tensor_release(&r);
    pd_tensor_release(&t);
}

PD_TEST(View, ReshapeInfersOneMinusOneDimension)
{
    pd_tensor t = iota43(), r;
    const int64_t shape[3] = {3, -1, 2};
    PD_ASSERT_OK(pd_tensor_reshape(&r, &t, 3, shape));
    PD_EXPECT_EQ(pd_dim(&r, 1), 2);
    PD_EXPECT_EQ(pd_numel(&r), 12);
    pd_tensor_release(&r);
    pd_tensor_release(&t);
}

PD_TEST(View, ReshapeToAndFromAScalar)
{
    pd_tensor s, v, back;
    PD_ASSERT_OK(pd_tensor_full(&s, PD_FLOAT64, CPU, 0, NULL, 4.5));
    const int64_t one[2] = {1, -1};
    PD_ASSERT_OK(pd_tensor_reshape(&v, &s, 2, one));
    PD_EXPECT_EQ(pd_dim(&v, 1), 1);
    PD_ASSERT_OK(pd_tensor_reshape(&back, &v, 0, NULL));
    PD_EXPECT_EQ(pd_ndim(&back), 0);
    PD_EXPECT_EQ(*(double *)back.data, 4.5);
    pd_tensor_release(&s);
    pd_tensor_release(&v);
    pd_tensor_release(&back);
}

PD_TEST(View, ReshapeOfZeroElementsKeepsZeroElements)
{
    pd_tensor t, r;
    const int64_t shape[2] = {0, 6}, target[3] = {2, 0, 3};
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_UINT8, CPU, 2, shape));
    PD_ASSERT_OK(pd_tensor_reshape(&r, &t, 3, target));
    PD_EXPECT_EQ(pd_numel(&r), 0);
    const int64_t infer[2] = {0, -1};
    pd_tensor out;
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, &t, 2, infer), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_reshape: cannot infer shape[1]");
    pd_tensor_release(&r);
    pd_tensor_release(&t);
}

PD_TEST(View, ReshapeRejectsAnotherElementCount)
{
    pd_tensor t = iota43(), out;
    const int64_t shape[2] = {2, 5};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, &t, 2, shape), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_reshape: the new shape has 10 elements, but src has 12");
    const int64_t infer[2] = {5, -1};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, &t, 2, infer), PD_ERR_INVALID_ARGUMENT,
                           "cannot infer shape[1]: src has 12 elements");
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    pd_tensor_release(&t);
}

PD_TEST(View, ReshapeRejectsTwoMinusOnes)
{
    pd_tensor t = iota43(), out;
    const int64_t shape[3] = {-1, 3, -1};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, &t, 3, shape), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_reshape: shape has 2 -1 entries; at most one dimension may "
                           "be -1");
    pd_tensor_release(&t);
}

PD_TEST(View, ReshapeRejectsBadDimensionsAndRanks)
{
    pd_tensor t = iota43(), out;
    const int64_t negative[2] = {-3, -4};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, &t, 2, negative), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_reshape: shape[0] is -3");
    const int64_t nine[9] = {1, 1, 1, 1, 1, 1, 1, 1, 12};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, &t, 9, nine), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_reshape: ndim is 9");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, &t, 2, NULL), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_reshape: shape is NULL but ndim is 2");
    const int64_t huge[3] = {INT64_C(1) << 40, INT64_C(1) << 40, 0};
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, &t, 3, huge), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_reshape: the new shape is too large");
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_reshape(&out, NULL, 2, shape23), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_reshape: src is NULL");
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    pd_tensor_release(&t);
}

PD_TEST(View, ContiguousReturnsANewReferenceToTheSameStorage)
{
    pd_tensor t = iota43(), c, out;
    PD_ASSERT_OK(pd_tensor_contiguous(&c, &t));
    PD_EXPECT(c.data == t.data);
    PD_EXPECT(pd_same_shape(&c, &t));
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 2);
    pd_tensor_release(&c);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    EXPECT_FAILS_UNTOUCHED(&out, pd_tensor_contiguous(&out, NULL), PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_contiguous: src is NULL");
    pd_tensor_release(&t);
}

/* Memory a host lends a tensor (data, no storage: how Python's numpy and DLPack inputs reach a
 * call) is memory: views of it are storage-less too, copies read it, and only a view at an
 * offset into a storage, which it has none of, is refused. */
PD_TEST(View, ViewsAndCopiesOfLentMemory)
{
    float buf[12];
    for (int i = 0; i < 12; ++i)
        buf[i] = (float)i;
    pd_tensor lent = PD_TENSOR_UNDEFINED, wide, copy, strided;
    lent.dtype = PD_FLOAT32;
    lent.place = pd_place_cpu();
    lent.ndim = 2;
    lent.shape[0] = 4;
    lent.shape[1] = 3;
    lent.data = buf;
    lent.layout = PD_LAYOUT_DENSE;
    PD_EXPECT(pd_initialized(&lent));
    int64_t shape[2] = {2, 6};
    PD_ASSERT_OK(pd_tensor_reshape(&wide, &lent, 2, shape));
    PD_EXPECT(wide.storage == NULL);
    PD_EXPECT(wide.data == (void *)buf);
    PD_EXPECT_EQ(pd_dim(&wide, 1), 6);
    pd_tensor rows;
    PD_ASSERT_OK(pd_tensor_slice(&rows, &lent, 1, 3));
    PD_EXPECT(rows.data == (void *)(buf + 3));
    PD_ASSERT_OK(pd_tensor_copy_to(&copy, &rows, pd_place_cpu()));
    PD_EXPECT(copy.storage != NULL);
    for (int i = 0; i < 6; ++i)
        PD_EXPECT_EQ(((float *)copy.data)[i], i + 3);
    int64_t st[1] = {2};
    PD_EXPECT_ERROR(pd_tensor_as_strided(&strided, &lent, 1, shape, st, 1), PD_ERR_INVALID_ARGUMENT,
                    "src has no storage");
    pd_tensor_release(&copy);
    pd_tensor_release(&rows);
    pd_tensor_release(&wide);
}
