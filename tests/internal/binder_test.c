/*
 * binder_test.c - the runner's one binder: its fast cases (a positional input of one good
 * tensor for a plain declaration; an output of one item handed over as inferred) are taken
 * by the usual call, as pd__runner_stats counts, and calls that leave them (names, vectors,
 * bad tensors, missing outputs) behave as any other and fail with the full messages. Linked
 * against the static library to read the internal counters.
 */
#include "call/kernel_ctx.h"
#include "runner_helpers.h"

#include <stdint.h>
#include <string.h>

static pd_registry *binder_registry(void) { return rt_registry1("bd_binder_ops"); }

/* A float32 tensor struct built by hand, as a host may: data points at `buf`, no storage. */
static pd_tensor hand_built(void *buf, int32_t ndim, const int64_t *shape)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    t.data = buf;
    t.dtype = PD_FLOAT32;
    t.ndim = ndim;
    for (int32_t d = 0; d < ndim; ++d)
        t.shape[d] = shape[d];
    t.place = pd_place_cpu();
    return t;
}

PD_TEST(Binder, OutputMirrorsTheInputAndIsZeroPastItsRank)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    float buf[6] = {0};
    pd_tensor x = hand_built(buf, 2, (int64_t[]){2, 3});
    x.shape[5] = 77; /* junk past ndim in the host's struct must not reach the output */
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "bd_make", &in, 1, NULL, 0, &oa, 1));
    PD_EXPECT_EQ(oa.count, 1);
    PD_EXPECT_EQ(out.dtype, PD_FLOAT32);
    PD_EXPECT_EQ(out.ndim, 2);
    PD_EXPECT_EQ(out.shape[0], 2);
    PD_EXPECT_EQ(out.shape[1], 3);
    for (int32_t d = 2; d < PD_MAX_DIMS; ++d)
        PD_EXPECT_EQ(out.shape[d], 0);
    PD_EXPECT(out.place.type == PD_PLACE_CPU);
    PD_EXPECT(out.data != NULL && (uintptr_t)out.data % 64 == 0);
    PD_EXPECT_EQ(pd_tensor_use_count(&out), 1);
    pd_tensor_release(&out);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, EmptyInputWithoutDataGivesAnEmptyOutput)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = hand_built(NULL, 2, (int64_t[]){0, 3});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "bd_make", &in, 1, NULL, 0, &oa, 1));
    PD_EXPECT_EQ(out.ndim, 2);
    PD_EXPECT_EQ(out.shape[0], 0);
    PD_EXPECT_EQ(out.shape[1], 3);
    PD_EXPECT_EQ(pd_numel(&out), 0);
    pd_tensor_release(&out);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, OutputOnAGpuInputsPlaceIsRefusedNamingThePlace)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    float buf[2] = {0};
    pd_tensor x = hand_built(buf, 1, (int64_t[]){2});
    x.place = pd_place_gpu(0);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&out);
    PD_EXPECT_ERROR(pd_run(reg, "bd_make", &in, 1, NULL, 0, &oa, 1), PD_ERR_UNAVAILABLE,
                    "bd_make: pd_output: place gpu:0 needs CUDA");
    PD_EXPECT(!pd_defined(&out));
    PD_EXPECT_EQ(oa.count, 1);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, OutputWhoseByteSizeOverflowsIsRefusedBeforeAllocating)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    float buf[1] = {0}; /* never read: the kernel only asks for its output */
    pd_tensor x = hand_built(buf, 2, (int64_t[]){(int64_t)1 << 62, 4});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&out);
    PD_EXPECT_ERROR(pd_run(reg, "bd_make", &in, 1, NULL, 0, &oa, 1), PD_ERR_OP_FAILED,
                    "bd_make: pd_output: shape is too large: the byte size of float32 elements "
                    "up to shape[0] = 4611686018427387904 overflows");
    PD_EXPECT(!pd_defined(&out));
    pd_registry_destroy(reg);
}

PD_TEST(Binder, UnsetOutputIsReportedAndNothingIsWritten)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&out);
    PD_EXPECT_ERROR(pd_run(reg, "bd_unset", &in, 1, NULL, 0, &oa, 1), PD_ERR_OP_FAILED,
                    "bd_unset: output 'Out' was not set by the kernel");
    PD_EXPECT(!pd_defined(&out));
    PD_EXPECT_EQ(oa.count, 1);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, OutputSlotWithoutRoomIsRefusedAfterTheKernelAndFreed)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2});
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), oa = pd_arg_named(NULL, &out, 0);
    PD_EXPECT_ERROR(pd_run(reg, "bd_make", &in, 1, NULL, 0, &oa, 1), PD_ERR_INVALID_ARGUMENT,
                    "bd_make: output 'Out' has 1 tensor, but its pd_arg has room for 0");
    PD_EXPECT(!pd_defined(&out));
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, OutputsTheHostDidNotAskForAreReleased)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2}), y = rt_vec_f64(1, (double[]){3});
    pd_tensor ins[2] = {x, y}, a = PD_TENSOR_UNDEFINED;
    pd_arg in[2] = {pd_arg_of(&ins[0]), pd_arg_of(&ins[1])}, oa = pd_arg_of(&a);
    PD_ASSERT_OK(pd_run(reg, "bd_alias", in, 2, NULL, 0, &oa, 1));
    PD_EXPECT(a.storage == x.storage);
    PD_EXPECT_EQ(pd_tensor_use_count(&x), 2); /* x and A */
    PD_EXPECT_EQ(pd_tensor_use_count(&y), 1); /* B was made and dropped */
    pd_tensor_release(&a);
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, NamedOutputsInAnyOrderGetTheirOwnTensors)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2}), y = rt_vec_f64(1, (double[]){3});
    pd_tensor ins[2] = {x, y}, a = PD_TENSOR_UNDEFINED, b = PD_TENSOR_UNDEFINED;
    pd_arg in[2] = {pd_arg_of(&ins[0]), pd_arg_of(&ins[1])};
    pd_arg out[2] = {pd_arg_named("B", &b, 1), pd_arg_named("A", &a, 1)};
    PD_ASSERT_OK(pd_run(reg, "bd_alias", in, 2, NULL, 0, out, 2));
    PD_EXPECT(a.storage == x.storage);
    PD_EXPECT(b.storage == y.storage);
    PD_EXPECT_EQ(out[0].count, 1);
    PD_EXPECT_EQ(out[1].count, 1);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
}

/* Where the runner made bd_where's output: the address its kernel wrote. */
static int64_t made_at(pd_registry *reg, pd_tensor *out)
{
    pd_tensor x = PD_TENSOR_UNDEFINED;
    if (pd_tensor_full(&x, PD_INT64, pd_place_cpu(), 1, (int64_t[]){1}, 0) != PD_OK)
        return -1;
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(out);
    pd_status s = pd_run(reg, "bd_where", &in, 1, NULL, 0, &oa, 1);
    pd_tensor_release(&x);
    return s == PD_OK && oa.count == 1 ? *(const int64_t *)pd_data(out) : -1;
}

PD_TEST(Binder, AnOutputGivenAnUndefinedTensorIsMadeInTheHostsTensor)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    PD_EXPECT_EQ(made_at(reg, &out), (int64_t)(uintptr_t)&out);
    PD_EXPECT_EQ(out.ndim, 1);
    PD_EXPECT_EQ(out.strides[0], 1);
    PD_EXPECT_EQ(pd_tensor_use_count(&out), 1);
    pd_tensor_release(&out);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, AnOutputGivenATensorThatIsNotUndefinedIsMadeApartAndHandedOver)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    out.ndim = 3; /* not an undefined tensor: a struct the host did not clear */
    int64_t at = made_at(reg, &out);
    PD_EXPECT(at != -1 && at != (int64_t)(uintptr_t)&out);
    PD_EXPECT_EQ(out.ndim, 1);
    PD_EXPECT_EQ(out.shape[1], 0);
    PD_EXPECT_EQ(pd_tensor_use_count(&out), 1);
    pd_tensor_release(&out);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, AKernelFailingAfterMakingItsOutputLeavesTheHostsTensorUndefined)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2});
    pd_tensor out = PD_TENSOR_UNDEFINED, zero;
    memset(&zero, 0, sizeof zero);
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&out);
    PD_EXPECT(pd_run(reg, "bd_make_fail", &in, 1, NULL, 0, &oa, 1) == PD_ERR_OP_FAILED);
    PD_EXPECT(strstr(pd_last_error(), "failed after making Out") != NULL);
    PD_EXPECT(memcmp(&out, &zero, sizeof out) == 0); /* released (the sanitizer run: no leak) */
    PD_EXPECT_EQ(oa.count, 1);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, OutputsLikeInput0TakeItsShapeAndDtypeByThePlainInference)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    float buf[6] = {0};
    pd_tensor x = hand_built(buf, 2, (int64_t[]){2, 3}), y = rt_vec_f64(1, (double[]){3});
    pd_tensor a = PD_TENSOR_UNDEFINED, b = PD_TENSOR_UNDEFINED;
    pd_arg in[2] = {pd_arg_of(&x), pd_arg_of(&y)}, out[2] = {pd_arg_of(&a), pd_arg_of(&b)};
    pd__runner_stats_t before = pd__runner_stats;
    PD_ASSERT_OK(pd_run(reg, "bd_like0", in, 2, NULL, 0, out, 2));
    PD_EXPECT_EQ(pd__runner_stats.plain_infers - before.plain_infers, 1);
    for (int i = 0; i < 2; ++i) {
        const pd_tensor *t = i ? &b : &a;
        PD_EXPECT_EQ(t->dtype, PD_FLOAT32);
        PD_EXPECT_EQ(t->ndim, 2);
        PD_EXPECT_EQ(t->shape[0], 2);
        PD_EXPECT_EQ(t->shape[1], 3);
        PD_EXPECT_EQ(t->strides[0], 3);
        PD_EXPECT_EQ(t->strides[1], 1);
    }
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, AShapeSetInTheKernelSizesTheOutputItMakes)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(1, (double[]){1}), out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "bd_resize", &in, 1, NULL, 0, &oa, 1));
    PD_EXPECT_EQ(out.ndim, 1);
    PD_EXPECT_EQ(out.shape[0], 3);
    PD_EXPECT(out.storage->bytes >= 3 * sizeof(double));
    for (int i = 0; i < 3; ++i) /* written in full (the sanitizer run: inside the block) */
        PD_EXPECT_EQ(((double *)out.data)[i], i + 0.5);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, MissingInputIsRefusedNamingIt)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2}), a = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), oa = pd_arg_of(&a);
    PD_EXPECT_ERROR(pd_run(reg, "bd_alias", &in, 1, NULL, 0, &oa, 1), PD_ERR_INVALID_ARGUMENT,
                    "bd_alias: input 'Y' is missing; it takes exactly one defined tensor");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* --- Which case ran ------------------------------------------------------------------------ */

PD_TEST(Binder, APositionalCallOfAPlainOpTakesTheFastCases)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2}), y = rt_vec_f64(1, (double[]){3});
    pd_tensor ins[2] = {x, y}, a = PD_TENSOR_UNDEFINED, b = PD_TENSOR_UNDEFINED;
    pd_arg in[2] = {pd_arg_of(&ins[0]), pd_arg_of(&ins[1])},
           out[2] = {pd_arg_of(&a), pd_arg_of(&b)};
    pd__runner_stats_t before = pd__runner_stats;
    PD_ASSERT_OK(pd_run(reg, "bd_alias", in, 2, NULL, 0, out, 2));
    PD_EXPECT_EQ(pd__runner_stats.fast_inputs - before.fast_inputs, 2);
    PD_EXPECT_EQ(pd__runner_stats.fast_outputs - before.fast_outputs, 2);
    PD_EXPECT_EQ(pd__runner_stats.plain_infers - before.plain_infers, 1);
    PD_EXPECT_EQ(pd__runner_stats.ready_inputs - before.ready_inputs, 1);
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, NamedInputsAndVectorInputsLeaveTheFastCaseButBind)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2}), out = PD_TENSOR_UNDEFINED;
    pd_arg named = pd_arg_named("X", &x, 1), oa = pd_arg_of(&out);
    pd__runner_stats_t before = pd__runner_stats;
    PD_ASSERT_OK(pd_run(reg, "bd_make", &named, 1, NULL, 0, &oa, 1));
    PD_EXPECT_EQ(pd__runner_stats.fast_inputs - before.fast_inputs, 0);
    PD_EXPECT_EQ(pd__runner_stats.ready_inputs - before.ready_inputs, 0);
    PD_EXPECT_EQ(pd__runner_stats.fast_outputs - before.fast_outputs, 1);
    PD_EXPECT_EQ(out.shape[0], 2);
    pd_tensor_release(&out);
    pd_arg xs = pd_arg_named(NULL, &x, 1);
    before = pd__runner_stats;
    PD_ASSERT_OK(pd_run(reg, "bd_first", &xs, 1, NULL, 0, &oa, 1));
    PD_EXPECT_EQ(pd__runner_stats.fast_inputs - before.fast_inputs, 0);   /* a vector input */
    PD_EXPECT_EQ(pd__runner_stats.plain_infers - before.plain_infers, 1); /* one plain output */
    PD_EXPECT_EQ(out.shape[0], 2);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, AnInputAfterTheFastPrefixIsCheckedFully)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2}), y = rt_vec_f64(1, (double[]){3});
    pd_tensor ins[2] = {x, y}, a = PD_TENSOR_UNDEFINED;
    ins[1].dtype = (pd_data_type)99;
    pd_arg in[2] = {pd_arg_of(&ins[0]), pd_arg_of(&ins[1])}, oa = pd_arg_of(&a);
    pd__runner_stats_t before = pd__runner_stats;
    PD_EXPECT_ERROR(pd_run(reg, "bd_alias", in, 2, NULL, 0, &oa, 1), PD_ERR_INVALID_ARGUMENT,
                    "bd_alias: input 'Y' has dtype 99, which is not a data type");
    PD_EXPECT_EQ(pd__runner_stats.fast_inputs - before.fast_inputs, 1); /* X only */
    PD_EXPECT(!pd_defined(&a));
    pd_tensor_release(&x);
    pd_tensor_release(&y);
    pd_registry_destroy(reg);
}

PD_TEST(Binder, APositionalInputAfterANamedOneBindingTheSameSlotIsRefused)
{
    pd_registry *reg = binder_registry();
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_vec_f64(2, (double[]){1, 2}), a = PD_TENSOR_UNDEFINED;
    pd_tensor ins[2] = {x, x};
    pd_arg in[2] = {pd_arg_named("Y", &ins[0], 1), pd_arg_of(&ins[1])}, oa = pd_arg_of(&a);
    PD_EXPECT_ERROR(pd_run(reg, "bd_alias", in, 2, NULL, 0, &oa, 1), PD_ERR_INVALID_ARGUMENT,
                    "bd_alias: input 'Y' is bound twice (pd_arg 1)");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}
