/*
 * dispatch_test.c - the seven PD_DISPATCH_* macros, compiled into a C module and a C++ module
 * (tests/ops/dispatch_ops.{h,c,cc}): each accepts exactly its dtype list, binds data_t to the
 * right C type for each, and rejects every other dtype with
 * "function <name> is not implemented for data type `<dtype>`".
 */
#include "runner_helpers.h"

#define N_MACROS 7

static const char *const macro_lists[N_MACROS] = {
    "floating_types", "floating_and_half_types", "integral_types", "complex_types",
    "floating_and_integral_types", "floating_and_complex_types",
    "floating_and_integral_and_complex_types"};

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
                char want[256];
                snprintf(want, sizeof want,
                         "%s: function %s_%s is not implemented for data type `%s` [dispatch_ops.h:",
                         op, lang, macro_lists[macro], pd_dtype_name(dtype));
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

PD_TEST(Dispatch, EachMacroAcceptsExactlyItsDtypesInC) { check_module("rt_dispatch_c", "dispatch_c", "c"); }

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
                       "implemented for data type `uint64` [dispatch_ops.h:";
    PD_EXPECT(strncmp(msg, want, strlen(want)) == 0);
    PD_EXPECT(msg[strlen(msg) - 1] == ']');
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}
