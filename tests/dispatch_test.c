/*
 * dispatch_test.c - the seven PD_DISPATCH_* macros, compiled into a C module and a C++ module
 * (tests/ops/dispatch_ops.{h,c,cc}): each accepts exactly its dtype list, binds data_t to the
 * right C type for each, and rejects every other dtype with
 * "function <name> is not implemented for data type `<dtype>` (input 'X'); it takes <list>"
 * (the op, the input and the dtypes it takes). A dispatch body that sums
 * with PD_ACC_TYPE / pd_to_acc / pd_from_acc accumulates float16 and bfloat16 in float, in C
 * and in C++; and the generic conversions (pd_to_float, pd_from_float) give hand-checked
 * values for every real type.
 */
#include "runner_helpers.h"

#define N_MACROS 7

static const char *const macro_lists[N_MACROS] = {"floating_types",
                                                  "floating_and_half_types",
                                                  "integral_types",
                                                  "complex_types",
                                                  "floating_and_integral_types",
                                                  "floating_and_complex_types",
                                                  "floating_and_integral_and_complex_types"};

/* What a refusal says each macro takes, written out here (independent of pd_dispatch.h). */
static const char *const macro_names[N_MACROS] =
    {"float32, float64",
     "float32, float64, float16, bfloat16",
     "int32, int64, int8, uint8, int16",
     "complex64, complex128",
     "float32, float64, int32, int64, int8, uint8, int16",
     "float32, float64, complex64, complex128",
     "float32, float64, int32, int64, int8, uint8, int16, complex64, complex128"};

/* The dtypes each macro must accept, independent of pd_dispatch.h: Paddle's lists. */
static bool accepts(int macro, pd_data_type t)
{
    bool floating = t == PD_FLOAT32 || t == PD_FLOAT64;
    bool half = t == PD_FLOAT16 || t == PD_BFLOAT16;
    bool integral = t == PD_INT8 || t == PD_UINT8 || t == PD_INT16 || t == PD_INT32 ||
                    t == PD_INT64;
    bool complex = t == PD_COMPLEX64 || t == PD_COMPLEX128;
    switch (macro) {
    case 0: return floating;
    case 1: return floating || half;
    case 2: return integral;
    case 3: return complex;
    case 4: return floating || integral;
    case 5: return floating || complex;
    case 6: return floating || integral || complex;
    default: return false;
    }
}

/* Size of each dtype's C type, independent of pd_dtype_size. */
static int64_t c_size(pd_data_type t)
{
    switch (t) {
    case PD_INT8: return sizeof(int8_t);
    case PD_UINT8: return sizeof(uint8_t);
    case PD_INT16: return sizeof(int16_t);
    case PD_INT32: return sizeof(int32_t);
    case PD_INT64: return sizeof(int64_t);
    case PD_FLOAT16: return sizeof(pd_float16);
    case PD_BFLOAT16: return sizeof(pd_bfloat16);
    case PD_FLOAT32: return sizeof(float);
    case PD_FLOAT64: return sizeof(double);
    case PD_COMPLEX64: return sizeof(pd_complex64);
    case PD_COMPLEX128: return sizeof(pd_complex128);
    default: return 0;
    }
}

static void check_module(const char *module, const char *op, const char *lang)
{
    pd_registry *reg = rt_registry1(module);
    PD_ASSERT(reg != NULL);
    for (int macro = 0; macro < N_MACROS; ++macro) {
        int accepted = 0;
        for (int t = PD_BOOL; t < PD_NUM_DTYPES; ++t) {
            pd_data_type dtype = (pd_data_type)t;
            pd_tensor x = PD_TENSOR_UNDEFINED, tag = PD_TENSOR_UNDEFINED;
            PD_ASSERT_OK(pd_tensor_empty(&x, dtype, pd_place_cpu(), 1, (int64_t[]){1}));
            pd_arg in = pd_arg_of(&x), out = pd_arg_of(&tag);
            pd_attr a = pd_attr_of_int("macro", macro);
            pd_status s = pd_run(reg, op, &in, 1, &a, 1, &out, 1);
            if (accepts(macro, dtype)) {
                ++accepted;
                PD_EXPECT_OK(s);
                if (s == PD_OK)
                    PD_EXPECT_EQ(*(const int64_t *)pd_data(&tag), t * 100 + c_size(dtype));
            } else {
                char want[512];
                snprintf(want, sizeof want,
                         "%s: function %s_%s is not implemented for data type `%s` (input 'X'); "
                         "it takes %s [dispatch_ops.h:",
                         op, lang, macro_lists[macro], pd_dtype_name(dtype), macro_names[macro]);
                PD_EXPECT_ERROR(s, PD_ERR_OP_FAILED, want);
            }
            pd_tensor_release(&tag);
            pd_tensor_release(&x);
        }
        static const int list_sizes[N_MACROS] = {2, 4, 5, 2, 7, 4, 9};
        PD_EXPECT_EQ(accepted, list_sizes[macro]);
    }
    pd_registry_destroy(reg);
}

PD_TEST(Dispatch, EachMacroAcceptsExactlyItsDtypesInC)
{
    check_module("rt_dispatch_c", "dispatch_c", "c");
}

PD_TEST(Dispatch, EachMacroAcceptsExactlyItsDtypesInCxx)
{
    check_module("rt_dispatch_cc", "dispatch_cc", "cc");
}

PD_TEST(Dispatch, RejectionMessageHasTheExactFormat)
{
    pd_registry *reg = rt_registry1("rt_dispatch_c");
    PD_ASSERT(reg != NULL);
    pd_tensor x = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_empty(&x, PD_UINT64, pd_place_cpu(), 1, (int64_t[]){1}));
    pd_arg in = pd_arg_of(&x);
    pd_attr a = pd_attr_of_int("macro", 6);
    PD_EXPECT_EQ(pd_run(reg, "dispatch_c", &in, 1, &a, 1, NULL, 0), PD_ERR_OP_FAILED);
    const char *msg = pd_last_error();
    const char *want = "dispatch_c: function c_floating_and_integral_and_complex_types is not "
                       "implemented for data type `uint64` (input 'X'); it takes float32, "
                       "float64, int32, int64, int8, uint8, int16, complex64, complex128 "
                       "[dispatch_ops.h:";
    PD_EXPECT(strncmp(msg, want, strlen(want)) == 0);
    PD_EXPECT(msg[strlen(msg) - 1] == ']');
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* Runs sum_<lang> on n elements of `dtype` (element i from make(i)), macro `macro`; the
 * sum as a double through pd_to_float of its C type, and the accumulation type's tag. */
typedef struct sum_result {
    pd_status status;
    double sum;
    int64_t acc_tag;
} sum_result;

static sum_result run_sum(const char *module, const char *op, pd_data_type dtype, int macro,
                          const double *values, int64_t n)
{
    sum_result r = {PD_OK, 0, -1};
    pd_registry *reg = rt_registry1(module);
    if (reg == NULL) {
        r.status = PD_ERR_NOT_FOUND;
        return r;
    }
    pd_tensor x = PD_TENSOR_UNDEFINED, sum = PD_TENSOR_UNDEFINED, tag = PD_TENSOR_UNDEFINED;
    pd_tensor_empty(&x, dtype, pd_place_cpu(), 1, (int64_t[]){n});
    for (int64_t i = 0; i < n; ++i) {
        void *p = (char *)pd_data(&x) + i * (int64_t)pd_dtype_size(dtype);
        switch (dtype) {
        case PD_FLOAT16: *(pd_float16 *)p = pd_float16_from_float((float)values[i]); break;
        case PD_BFLOAT16: *(pd_bfloat16 *)p = pd_bfloat16_from_float((float)values[i]); break;
        case PD_FLOAT32: *(float *)p = (float)values[i]; break;
        case PD_FLOAT64: *(double *)p = values[i]; break;
        case PD_INT8: *(int8_t *)p = (int8_t)values[i]; break;
        case PD_INT64: *(int64_t *)p = (int64_t)values[i]; break;
        default: break;
        }
    }
    pd_arg in = pd_arg_of(&x);
    pd_arg out[2] = {pd_arg_of(&sum), pd_arg_of(&tag)};
    pd_attr a = pd_attr_of_int("macro", macro);
    r.status = pd_run(reg, op, &in, 1, &a, 1, out, 2);
    if (r.status == PD_OK) {
        const void *p = pd_data(&sum);
        switch (dtype) {
        case PD_FLOAT16: r.sum = pd_float16_to_float(*(const pd_float16 *)p); break;
        case PD_BFLOAT16: r.sum = pd_bfloat16_to_float(*(const pd_bfloat16 *)p); break;
        case PD_FLOAT32: r.sum = *(const float *)p; break;
        case PD_FLOAT64: r.sum = *(const double *)p; break;
        case PD_INT8: r.sum = *(const int8_t *)p; break;
        case PD_INT64: r.sum = (double)*(const int64_t *)p; break;
        default: break;
        }
        r.acc_tag = *(const int64_t *)pd_data(&tag);
    }
    pd_tensor_release(&x);
    pd_tensor_release(&sum);
    pd_tensor_release(&tag);
    pd_registry_destroy(reg);
    return r;
}

/* 2048 followed by sixteen 1s: 2064 when added in float; a float16 accumulator would stay at
 * 2048 (its spacing there is 2). For bfloat16 the same with 256 (spacing 2 from 256 on). */
static void check_sums(const char *module, const char *op)
{
    double v[17];
    for (int i = 1; i < 17; ++i)
        v[i] = 1;
    v[0] = 2048;
    sum_result r = run_sum(module, op, PD_FLOAT16, 0, v, 17);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.sum, 2064);
    PD_EXPECT_EQ(r.acc_tag, PD_FLOAT32 * 100 + 4);
    v[0] = 256;
    r = run_sum(module, op, PD_BFLOAT16, 0, v, 17);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.sum, 272);
    PD_EXPECT_EQ(r.acc_tag, PD_FLOAT32 * 100 + 4);
    r = run_sum(module, op, PD_FLOAT32, 0, v, 17);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.sum, 272);
    PD_EXPECT_EQ(r.acc_tag, PD_FLOAT32 * 100 + 4);
    v[0] = 0.5;
    r = run_sum(module, op, PD_FLOAT64, 0, v, 17);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.sum * 2, 33);
    PD_EXPECT_EQ(r.acc_tag, PD_FLOAT64 * 100 + 8);
    v[0] = -3;
    r = run_sum(module, op, PD_INT8, 1, v, 17);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.sum, 13);
    PD_EXPECT_EQ(r.acc_tag, PD_INT8 * 100 + 1);
    r = run_sum(module, op, PD_INT64, 1, v, 17);
    PD_EXPECT_OK(r.status);
    PD_EXPECT_EQ(r.sum, 13);
    PD_EXPECT_EQ(r.acc_tag, PD_INT64 * 100 + 8);
}

PD_TEST(Dispatch, HalvesAccumulateInFloatInC) { check_sums("rt_dispatch_c", "sum_c"); }

PD_TEST(Dispatch, HalvesAccumulateInFloatInCxx) { check_sums("rt_dispatch_cc", "sum_cc"); }

/* The generic conversions in C host code, against values worked out by hand. */
PD_TEST(HalfHelpers, ToFloatConvertsEveryRealType)
{
    PD_EXPECT_EQ(pd_to_float(pd_float16_from_float(1.5f)), 1.5f);
    PD_EXPECT_EQ(pd_to_float((pd_float16){0x3c00}), 1.0f);  /* 1.0 in binary16 */
    PD_EXPECT_EQ(pd_to_float((pd_bfloat16){0x3fc0}), 1.5f); /* 1.5 in bfloat16 */
    PD_EXPECT_EQ(pd_to_float((int8_t)-7), -7.0f);
    PD_EXPECT_EQ(pd_to_float((uint8_t)200), 200.0f);
    PD_EXPECT_EQ(pd_to_float((int64_t)1 << 40), 1099511627776.0f);
    PD_EXPECT_EQ(pd_to_float(0.1), 0.1f);
    PD_EXPECT_EQ(pd_to_float(2.5f), 2.5f);
}

PD_TEST(HalfHelpers, FromFloatRoundsToNearestEvenForHalves)
{
    /* 1 + 2^-11 lies halfway between 1 and the next binary16 (1 + 2^-10): ties go to even. */
    PD_EXPECT_EQ(pd_from_float(pd_float16, 1.0f + 0x1p-11f).bits, 0x3c00);
    PD_EXPECT_EQ(pd_from_float(pd_float16, 1.0f + 0x1p-11f + 0x1p-20f).bits, 0x3c01);
    PD_EXPECT_EQ(pd_from_float(pd_bfloat16, 1.5f).bits, 0x3fc0);
    PD_EXPECT_EQ(pd_from_float(int32_t, 7.75f), 7);
    PD_EXPECT_EQ(pd_from_float(double, 0.1), 0.1);
    PD_EXPECT_EQ(pd_from_acc(int16_t, 300), 300);
}

/* The dtype of a C type, independent of pd_dtype.h's helpers. */
#define TYPE_TAG(T) \
    _Generic((T *)0, float *: PD_FLOAT32, double *: PD_FLOAT64, pd_float16 *: PD_FLOAT16,    \
             pd_bfloat16 *: PD_BFLOAT16, int8_t *: PD_INT8, pd_complex64 *: PD_COMPLEX64,   \
             default: PD_UNDEFINED)

PD_TEST(HalfHelpers, AccTypeIsFloatForHalvesAndTheTypeItselfOtherwise)
{
    PD_EXPECT_EQ(TYPE_TAG(PD_ACC_TYPE(pd_float16)), PD_FLOAT32);
    PD_EXPECT_EQ(TYPE_TAG(PD_ACC_TYPE(pd_bfloat16)), PD_FLOAT32);
    PD_EXPECT_EQ(TYPE_TAG(PD_ACC_TYPE(float)), PD_FLOAT32);
    PD_EXPECT_EQ(TYPE_TAG(PD_ACC_TYPE(double)), PD_FLOAT64);
    PD_EXPECT_EQ(TYPE_TAG(PD_ACC_TYPE(int8_t)), PD_INT8);
    PD_EXPECT_EQ(TYPE_TAG(PD_ACC_TYPE(pd_complex64)), PD_COMPLEX64);
    pd_complex128 z = {1.0, -2.0};
    PD_EXPECT_EQ(pd_to_acc(z).im, -2.0);
    PD_EXPECT_EQ(pd_from_acc(pd_complex128, z).re, 1.0);
    PD_EXPECT_EQ(pd_to_acc(pd_bfloat16_from_float(-0.5f)), -0.5f);
}
