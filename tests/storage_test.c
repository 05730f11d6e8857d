/* storage_test.c - reference-counted storage as hosts see it: wrapped external buffers and
 * their deleters (called exactly once, never on failure), retain / release / use_count, also
 * across threads. */
#include "tensor_util.h"

#include <pthread.h>

/* --- Wrapped buffers ------------------------------------------------------------------------- */

PD_TEST(Storage, FromBufferWrapsWithoutCopying)
{
    double buf[6] = {1, 2, 3, 4, 5, 6};
    deleter_log log = {0, NULL};
    pd_tensor t;
    PD_ASSERT_OK(pd_tensor_from_buffer(&t, buf, PD_FLOAT64, CPU, 2, shape23, count_deleter, &log));
    PD_EXPECT(t.data == (void *)buf);
    PD_EXPECT(pd_initialized(&t));
    PD_EXPECT_EQ(pd_numel(&t), 6);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    buf[4] = 50;
    PD_EXPECT_EQ(((double *)t.data)[4], 50);
    PD_EXPECT_EQ(log.calls, 0);
    pd_tensor_release(&t);
    PD_EXPECT_EQ(log.calls, 1);
    PD_EXPECT(log.data == (void *)buf);
}

PD_TEST(Storage, DeleterRunsOnceWhenTheLastViewGoes)
{
    float buf[12] = {0};
    deleter_log log = {0, NULL};
    const int64_t shape[2] = {4, 3};
    pd_tensor t, second, rows, flat, dense;
    PD_ASSERT_OK(pd_tensor_from_buffer(&t, buf, PD_FLOAT32, CPU, 2, shape, count_deleter, &log));
    pd_tensor_retain(&second, &t);
    PD_ASSERT_OK(pd_tensor_slice(&rows, &t, 1, 3));
    const int64_t minus_one = -1;
    PD_ASSERT_OK(pd_tensor_reshape(&flat, &rows, 1, &minus_one));
    PD_ASSERT_OK(pd_tensor_contiguous(&dense, &flat));
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 5);
    pd_tensor_release(&t);
    pd_tensor_release(&second);
    pd_tensor_release(&rows);
    pd_tensor_release(&flat);
    PD_EXPECT_EQ(log.calls, 0);
    PD_EXPECT_EQ(pd_tensor_use_count(&dense), 1);
    pd_tensor_release(&dense);
    PD_EXPECT_EQ(log.calls, 1);
    pd_tensor_release(&dense); /* already undefined: nothing happens */
    PD_EXPECT_EQ(log.calls, 1);
}

PD_TEST(Storage, FromBufferWithoutDeleterBorrowsTheBuffer)
{
    int32_t buf[2] = {5, 6};
    pd_tensor t;
    const int64_t n = 2;
    PD_ASSERT_OK(pd_tensor_from_buffer(&t, buf, PD_INT32, CPU, 1, &n, NULL, NULL));
    pd_tensor_release(&t);
    PD_EXPECT_EQ(buf[1], 6);
}

PD_TEST(Storage, FromBufferAcceptsNullDataForZeroElements)
{
    pd_tensor t;
    const int64_t n = 0;
    PD_ASSERT_OK(pd_tensor_from_buffer(&t, NULL, PD_FLOAT32, CPU, 1, &n, NULL, NULL));
    PD_EXPECT(pd_initialized(&t));
    PD_EXPECT_EQ(pd_numel(&t), 0);
    pd_tensor_release(&t);
}

PD_TEST(Storage, FailedFromBufferNeverCallsTheDeleter)
{
    float buf[6];
    deleter_log log = {0, NULL};
    pd_tensor t;
    const int64_t bad[2] = {2, -1};
    EXPECT_FAILS_UNTOUCHED(&t,
                           pd_tensor_from_buffer(&t, buf, PD_FLOAT32, pd_place_gpu(0), 2, shape23,
                                                 count_deleter, &log),
                           PD_ERR_UNAVAILABLE, "pd_tensor_from_buffer: place gpu:0 needs CUDA");
    EXPECT_FAILS_UNTOUCHED(&t,
                           pd_tensor_from_buffer(&t, buf, PD_FLOAT32, CPU, 2, bad, count_deleter,
                                                 &log),
                           PD_ERR_INVALID_ARGUMENT, "pd_tensor_from_buffer: shape[1] is -1");
    EXPECT_FAILS_UNTOUCHED(&t,
                           pd_tensor_from_buffer(&t, buf, PD_UNDEFINED, CPU, 2, shape23,
                                                 count_deleter, &log),
                           PD_ERR_INVALID_ARGUMENT, "dtype is PD_UNDEFINED");
    PD_EXPECT_EQ(log.calls, 0);
}

PD_TEST(Storage, FromBufferRejectsNullData)
{
    pd_tensor t;
    EXPECT_FAILS_UNTOUCHED(&t,
                           pd_tensor_from_buffer(&t, NULL, PD_FLOAT32, CPU, 2, shape23, NULL, NULL),
                           PD_ERR_INVALID_ARGUMENT,
                           "pd_tensor_from_buffer: data is NULL for 24 bytes");
}

PD_TEST(Storage, FromBufferRejectsDataMisalignedForItsElements)
{
    double buf[8];
    pd_tensor t;
    const int64_t n = 2;
    char *odd = (char *)buf + 4;
    EXPECT_FAILS_UNTOUCHED(&t, pd_tensor_from_buffer(&t, odd, PD_FLOAT64, CPU, 1, &n, NULL, NULL),
                           PD_ERR_INVALID_ARGUMENT,
                           "is not aligned to 8 bytes, as float64 elements need");
    /* float32 elements need only 4. */
    PD_ASSERT_OK(pd_tensor_from_buffer(&t, odd, PD_FLOAT32, CPU, 1, &n, NULL, NULL));
    pd_tensor_release(&t);
}

/* --- References ------------------------------------------------------------------------------ */

PD_TEST(Storage, RetainAddsAnOwnerAndReleaseDropsOne)
{
    pd_tensor t = iota43(), u;
    pd_tensor_retain(&u, &t);
    PD_EXPECT(u.data == t.data);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 2);
    PD_EXPECT_EQ(pd_tensor_use_count(&u), 2);
    pd_tensor_release(&t);
    PD_EXPECT(!pd_defined(&t));
    PD_EXPECT(t.data == NULL && t.storage == NULL);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 0);
    PD_EXPECT_EQ(pd_tensor_use_count(&u), 1);
    pd_tensor_release(&u);
}

PD_TEST(Storage, ReleaseAndUseCountAcceptNullAndUndefinedTensors)
{
    pd_tensor undefined = PD_TENSOR_UNDEFINED, copy;
    pd_tensor_release(NULL);
    pd_tensor_release(&undefined);
    PD_EXPECT_EQ(pd_tensor_use_count(NULL), 0);
    PD_EXPECT_EQ(pd_tensor_use_count(&undefined), 0);
    pd_tensor_retain(&copy, &undefined);
    PD_EXPECT(!pd_defined(&copy));
    pd_tensor_retain(NULL, &undefined);
}

typedef struct share_job {
    const pd_tensor *t;
    int rounds;
} share_job;

static void *retain_release_many(void *arg)
{
    share_job *job = arg;
    for (int i = 0; i < job->rounds; ++i) {
        pd_tensor mine, view;
        pd_tensor_retain(&mine, job->t);
        if (pd_tensor_slice(&view, &mine, 0, 1) == PD_OK)
            pd_tensor_release(&view);
        pd_tensor_release(&mine);
    }
    return NULL;
}

PD_TEST(Storage, ReferenceCountingIsSafeAcrossThreads)
{
    float buf[4] = {0};
    deleter_log log = {0, NULL};
    const int64_t n = 4;
    pd_tensor t;
    PD_ASSERT_OK(pd_tensor_from_buffer(&t, buf, PD_FLOAT32, CPU, 1, &n, count_deleter, &log));
    pthread_t threads[4];
    share_job job = {&t, 2000};
    for (int i = 0; i < 4; ++i)
        PD_ASSERT_EQ(pthread_create(&threads[i], NULL, retain_release_many, &job), 0);
    for (int i = 0; i < 4; ++i)
        pthread_join(threads[i], NULL);
    PD_EXPECT_EQ(pd_tensor_use_count(&t), 1);
    PD_EXPECT_EQ(log.calls, 0);
    pd_tensor_release(&t);
    PD_EXPECT_EQ(log.calls, 1);
}

/* --- The big-block cache ------------------------------------------------------------------ */

static void *big_block(pd_tensor *t, int64_t floats)
{
    int64_t shape[1] = {floats};
    if (pd_tensor_empty(t, PD_FLOAT32, CPU, 1, shape) != PD_OK)
        return NULL;
    return t->data;
}

PD_TEST(Storage, FreedBigBlockIsReusedBySameSizedAllocation)
{
    pd_storage_cache_clear();
    pd_tensor a, b;
    void *first = big_block(&a, 1 << 20); /* 4 MiB */
    PD_ASSERT(first != NULL);
    PD_EXPECT_EQ((uintptr_t)first % 64, 0);
    ((float *)first)[(1 << 20) - 1] = 7.0f; /* the whole block is usable */
    pd_tensor_release(&a);
    void *second = big_block(&b, 1 << 20);
    PD_EXPECT(second == first);
    pd_tensor_release(&b);
    pd_storage_cache_clear();
}

PD_TEST(Storage, CachedBlockIsNotSpentOnAMuchSmallerTensor)
{
    pd_storage_cache_clear();
    pd_tensor a, b;
    void *first = big_block(&a, 1 << 21); /* 8 MiB */
    PD_ASSERT(first != NULL);
    pd_tensor_release(&a);                       /* cached, so malloc cannot hand out its address */
    void *second = big_block(&b, (1 << 19) + 1); /* a bit over 2 MiB: less than half */
    PD_ASSERT(second != NULL);
    PD_EXPECT(second != first);
    PD_EXPECT_EQ((uintptr_t)second % 64, 0);
    pd_tensor_release(&b);
    pd_storage_cache_clear();
}

PD_TEST(Storage, SmallBlocksAreAlignedForEverySize)
{
    for (int64_t n = 0; n < 200; n += 7) {
        pd_tensor t;
        int64_t shape[1] = {n};
        PD_ASSERT_OK(pd_tensor_empty(&t, PD_UINT8, CPU, 1, shape));
        PD_EXPECT_EQ((uintptr_t)t.data % 64, 0);
        pd_tensor_release(&t);
    }
}
