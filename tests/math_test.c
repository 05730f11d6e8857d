/*
 * math_test.c - the tensor functions of the table (pd_math.h) through C ops that call them
 * (tests/ops/math_ops.c): broadcasting arithmetic, comparisons and bitwise operators on every
 * dtype they take, scalars on either side, matmul (transpose flags, batches, vectors), sum
 * (axes, keepdim, dtype), fill of a strided view, strided operands, ops composing them (a
 * linear layer and its gradient), and each bad input's message. Expectations are computed
 * here with plain loops over doubles.
 */
#include "pd_sim_device.h"
#include "runner_helpers.h"

#include <math.h>

#define MT_MODULE "mt_math_ops"

/* A CPU tensor of `dtype` holding `values` (converted from double). */
static pd_tensor mt_tensor(pd_data_type dtype, int32_t ndim, const int64_t *shape,
                           const double *values)
{
    pd_tensor f = rt_tensor(PD_FLOAT64, ndim, shape, values), t = PD_TENSOR_UNDEFINED;
    if (pd_tensor_cast(&t, &f, dtype) != PD_OK)
        pd_test_fail(__FILE__, __LINE__, "pd_tensor_cast: %s", pd_last_error());
    pd_tensor_release(&f);
    return t;
}

/* Element i (C order of a dense tensor) as a double; complex: the real part. */
static double mt_at(const pd_tensor *t, int64_t i)
{
    const void *p = t->data;
    switch (t->dtype) {
    case PD_BOOL: return ((const uint8_t *)p)[i];
    case PD_INT8: return ((const int8_t *)p)[i];
    case PD_UINT8: return ((const uint8_t *)p)[i];
    case PD_INT16: return ((const int16_t *)p)[i];
    case PD_UINT16: return ((const uint16_t *)p)[i];
    case PD_INT32: return ((const int32_t *)p)[i];
    case PD_UINT32: return ((const uint32_t *)p)[i];
    case PD_INT64: return (double)((const int64_t *)p)[i];
    case PD_UINT64: return (double)((const uint64_t *)p)[i];
    case PD_FLOAT16: return pd_float16_to_float(((const pd_float16 *)p)[i]);
    case PD_BFLOAT16: return pd_bfloat16_to_float(((const pd_bfloat16 *)p)[i]);
    case PD_FLOAT32: return ((const float *)p)[i];
    case PD_FLOAT64: return ((const double *)p)[i];
    case PD_COMPLEX64: return ((const pd_complex64 *)p)[i].re;
    case PD_COMPLEX128: return ((const pd_complex128 *)p)[i].re;
    default: return NAN;
    }
}

/* Runs `op` of the test module with inputs and attrs; the outputs land in outs. */
static pd_status mt_run(const char *op, pd_tensor *ins, int nin, const pd_attr *attrs, int nattr,
                        pd_tensor *outs, int nout)
{
    pd_registry *reg = rt_registry1(MT_MODULE);
    if (reg == NULL)
        return PD_ERR_INTERNAL;
    pd_arg in[4], out[4];
    for (int i = 0; i < nin; ++i)
        in[i] = pd_arg_of(&ins[i]);
    for (int i = 0; i < nout; ++i) {
        outs[i] = (pd_tensor)PD_TENSOR_UNDEFINED;
        out[i] = pd_arg_of(&outs[i]);
    }
    pd_status st = pd_run(reg, op, in, nin, attrs, nattr, out, nout);
    pd_registry_destroy(reg);
    return st;
}

/* Out = op(a, b) through mt_binary. */
static pd_status mt_binary(pd_binary_op op, pd_tensor *a, pd_tensor *b, pd_tensor *out)
{
    pd_tensor ins[2] = {*a, *b};
    pd_attr attr = pd_attr_of_int("op", op);
    return mt_run("mt_binary", ins, 2, &attr, 1, out, 1);
}

static void expect_shape(const pd_tensor *t, int32_t ndim, const int64_t *shape)
{
    PD_EXPECT_EQ(t->ndim, ndim);
    for (int32_t d = 0; d < ndim && d < t->ndim; ++d)
        PD_EXPECT_EQ(t->shape[d], shape[d]);
}

/* --- elementwise --------------------------------------------------------------------------- */

PD_TEST(Math, AddBroadcastsABiasOverTheRowsAsNumpyDoes)
{
    int64_t sa[2] = {3, 4}, sb[1] = {4};
    pd_tensor a = rt_random(PD_FLOAT32, 2, sa), b = rt_random(PD_FLOAT32, 1, sb), out;
    PD_ASSERT_OK(mt_binary(PD_BINARY_ADD, &a, &b, &out));
    PD_EXPECT_EQ(out.dtype, PD_FLOAT32);
    expect_shape(&out, 2, sa);
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 4; ++j)
            PD_EXPECT_NEAR(mt_at(&out, i * 4 + j), mt_at(&a, i * 4 + j) + mt_at(&b, j), 1e-6);
    pd_tensor_release(&out);
    pd_tensor_release(&b);
    pd_tensor_release(&a);
}

PD_TEST(Math, BroadcastsBothOperandsIntoTheLargerShape)
{
    int64_t sa[3] = {2, 1, 3}, sb[2] = {4, 1}, want[3] = {2, 4, 3};
    double va[6] = {1, 2, 3, 4, 5, 6}, vb[4] = {10, 20, 30, 40};
    pd_tensor a = mt_tensor(PD_INT32, 3, sa, va), b = mt_tensor(PD_INT32, 2, sb, vb), out;
    PD_ASSERT_OK(mt_binary(PD_BINARY_MULTIPLY, &a, &b, &out));
    expect_shape(&out, 3, want);
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 3; ++k)
                PD_EXPECT_EQ(mt_at(&out, (i * 4 + j) * 3 + k), va[i * 3 + k] * vb[j]);
    pd_tensor_release(&out);
    pd_tensor_release(&b);
    pd_tensor_release(&a);
}

/* Reference results of the six arithmetic ops on small values every real dtype holds. */
static double reference(pd_binary_op op, pd_data_type dtype, double x, double y)
{
    bool integral = pd_dtype_is_integral(dtype);
    switch (op) {
    case PD_BINARY_ADD: return x + y;
    case PD_BINARY_SUBTRACT: return x - y;
    case PD_BINARY_MULTIPLY: return x * y;
    case PD_BINARY_DIVIDE: return integral ? trunc(x / y) : x / y;
    case PD_BINARY_MAXIMUM: return x > y ? x : y;
    case PD_BINARY_MINIMUM: return x < y ? x : y;
    default: return NAN;
    }
}

PD_TEST(Math, ArithmeticOnEveryRealDtypeMatchesAReferenceLoop)
{
    static const pd_data_type dtypes[] = {PD_INT8,    PD_UINT8,    PD_INT16,   PD_UINT16,
                                          PD_INT32,   PD_UINT32,   PD_INT64,   PD_UINT64,
                                          PD_FLOAT16, PD_BFLOAT16, PD_FLOAT32, PD_FLOAT64};
    static const pd_binary_op ops[] = {PD_BINARY_ADD,    PD_BINARY_SUBTRACT, PD_BINARY_MULTIPLY,
                                       PD_BINARY_DIVIDE, PD_BINARY_MAXIMUM,  PD_BINARY_MINIMUM};
    int64_t n = 6;
    double va[6] = {9, 8, 7, 12, 5, 11}, vb[6] = {1, 2, 3, 4, 5, 6};
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; ++d) {
        pd_tensor a = mt_tensor(dtypes[d], 1, &n, va), b = mt_tensor(dtypes[d], 1, &n, vb);
        for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
            pd_tensor out;
            PD_ASSERT_OK(mt_binary(ops[o], &a, &b, &out));
            PD_EXPECT_EQ(out.dtype, dtypes[d]);
            double tol = dtypes[d] == PD_FLOAT16 || dtypes[d] == PD_BFLOAT16 ? 0.05 : 1e-6;
            for (int i = 0; i < 6; ++i)
                PD_EXPECT_NEAR(mt_at(&out, i), reference(ops[o], dtypes[d], va[i], vb[i]), tol);
            pd_tensor_release(&out);
        }
        pd_tensor_release(&b);
        pd_tensor_release(&a);
    }
}

PD_TEST(Math, IntegerArithmeticWrapsAndDividesTowardZero)
{
    int64_t n = 3;
    pd_tensor a = mt_tensor(PD_INT8, 1, &n, (double[]){100, -7, -128});
    pd_tensor b = mt_tensor(PD_INT8, 1, &n, (double[]){100, 2, -1}), out;
    PD_ASSERT_OK(mt_binary(PD_BINARY_ADD, &a, &b, &out));
    PD_EXPECT_EQ(mt_at(&out, 0), -56); /* 200 wraps */
    pd_tensor_release(&out);
    PD_ASSERT_OK(mt_binary(PD_BINARY_DIVIDE, &a, &b, &out));
    PD_EXPECT_EQ(mt_at(&out, 1), -3);   /* toward zero */
    PD_EXPECT_EQ(mt_at(&out, 2), -128); /* INT8_MIN / -1 wraps */
    pd_tensor_release(&out);
    pd_tensor_release(&b);
    pd_tensor_release(&a);

    pd_tensor c = PD_TENSOR_UNDEFINED, d = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_empty(&c, PD_INT64, pd_place_cpu(), 1, &n));
    PD_ASSERT_OK(pd_tensor_empty(&d, PD_INT64, pd_place_cpu(), 1, &n));
    int64_t *pc = c.data, *pdd = d.data;
    pc[0] = INT64_MIN, pc[1] = INT64_MAX, pc[2] = 7;
    pdd[0] = -1, pdd[1] = 1, pdd[2] = -2;
    PD_ASSERT_OK(mt_binary(PD_BINARY_DIVIDE, &c, &d, &out));
    PD_EXPECT_EQ(((int64_t *)out.data)[0], INT64_MIN);
    PD_EXPECT_EQ(((int64_t *)out.data)[1], INT64_MAX);
    PD_EXPECT_EQ(((int64_t *)out.data)[2], -3);
    pd_tensor_release(&out);
    PD_ASSERT_OK(mt_binary(PD_BINARY_ADD, &c, &d, &out));
    PD_EXPECT_EQ(((int64_t *)out.data)[0], INT64_MAX); /* INT64_MIN - 1 wraps */
    PD_EXPECT_EQ(((int64_t *)out.data)[1], INT64_MIN); /* INT64_MAX + 1 wraps */
    pd_tensor_release(&out);
    pd_tensor_release(&d);
    pd_tensor_release(&c);
}

PD_TEST(Math, IntegerDivisionByZeroIsAnErrorNamingTheFunction)
{
    int64_t n = 2;
    pd_tensor a = mt_tensor(PD_INT32, 1, &n, (double[]){1, 2});
    pd_tensor b = mt_tensor(PD_INT32, 1, &n, (double[]){1, 0}), out;
    PD_EXPECT_ERROR(mt_binary(PD_BINARY_DIVIDE, &a, &b, &out), PD_ERR_OP_FAILED,
                    "pd_divide: integer division by zero");
    pd_tensor_release(&b);
    pd_tensor_release(&a);
}

PD_TEST(Math, AViewReachingPastItsStorageIsRefusedNamingTheFunction)
{
    int64_t n = 4;
    pd_tensor a = mt_tensor(PD_FLOAT32, 1, &n, (double[]){1, 2, 3, 4}), out;
    PD_EXPECT_ERROR(mt_run("mt_past_storage", &a, 1, NULL, 0, &out, 1), PD_ERR_OP_FAILED,
                    "pd_add: a reaches bytes [0, 32) of its storage, which holds 16 bytes");
    pd_tensor_release(&a);
}

PD_TEST(Math, ComparisonsGiveBoolOverTheBroadcastShape)
{
    static const pd_binary_op ops[] = {PD_BINARY_LESS_THAN,    PD_BINARY_LESS_EQUAL,
                                       PD_BINARY_EQUAL,        PD_BINARY_NOT_EQUAL,
                                       PD_BINARY_GREATER_THAN, PD_BINARY_GREATER_EQUAL};
    int64_t sa[2] = {2, 1}, sb[1] = {3}, want[2] = {2, 3};
    double va[2] = {1, 2}, vb[3] = {0, 1, 2};
    pd_tensor a = mt_tensor(PD_FLOAT64, 2, sa, va), b = mt_tensor(PD_FLOAT64, 1, sb, vb);
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
        pd_tensor out;
        PD_ASSERT_OK(mt_binary(ops[o], &a, &b, &out));
        PD_EXPECT_EQ(out.dtype, PD_BOOL);
        expect_shape(&out, 2, want);
        for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 3; ++j) {
                double x = va[i], y = vb[j];
                bool r = o == 0   ? x < y
                         : o == 1 ? x <= y
                         : o == 2 ? x == y
                         : o == 3 ? x != y
                         : o == 4 ? x > y
                                  : x >= y;
                PD_EXPECT_EQ(mt_at(&out, i * 3 + j), r);
            }
        pd_tensor_release(&out);
    }
    pd_tensor_release(&b);
    pd_tensor_release(&a);
}

PD_TEST(Math, BitwiseOperatorsOnIntegersAndBool)
{
    int64_t n = 4;
    pd_tensor a = mt_tensor(PD_INT32, 1, &n, (double[]){12, 10, -1, 0});
    pd_tensor b = mt_tensor(PD_INT32, 1, &n, (double[]){10, 6, 5, 3}), out;
    PD_ASSERT_OK(mt_binary(PD_BINARY_BITWISE_AND, &a, &b, &out));
    for (int i = 0; i < 4; ++i)
        PD_EXPECT_EQ(mt_at(&out, i), (int32_t)mt_at(&a, i) & (int32_t)mt_at(&b, i));
    pd_tensor_release(&out);
    PD_ASSERT_OK(mt_binary(PD_BINARY_BITWISE_XOR, &a, &b, &out));
    for (int i = 0; i < 4; ++i)
        PD_EXPECT_EQ(mt_at(&out, i), (int32_t)mt_at(&a, i) ^ (int32_t)mt_at(&b, i));
    pd_tensor_release(&out);
    pd_tensor_release(&b);
    pd_tensor_release(&a);

    pd_tensor p = mt_tensor(PD_BOOL, 1, &n, (double[]){0, 0, 1, 1});
    pd_tensor q = mt_tensor(PD_BOOL, 1, &n, (double[]){0, 1, 0, 1});
    static const double want_or[4] = {0, 1, 1, 1}, want_and[4] = {0, 0, 0, 1},
                        want_xor[4] = {0, 1, 1, 0};
    pd_binary_op ops[3] = {PD_BINARY_BITWISE_OR, PD_BINARY_MULTIPLY, PD_BINARY_SUBTRACT};
    const double *wants[3] = {want_or, want_and, want_xor};
    for (int o = 0; o < 3; ++o) {
        PD_ASSERT_OK(mt_binary(ops[o], &p, &q, &out));
        PD_EXPECT_EQ(out.dtype, PD_BOOL);
        for (int i = 0; i < 4; ++i)
            PD_EXPECT_EQ(mt_at(&out, i), wants[o][i]);
        pd_tensor_release(&out);
    }
    PD_EXPECT_ERROR(mt_binary(PD_BINARY_DIVIDE, &p, &q, &out), PD_ERR_OP_FAILED,
                    "pd_divide is not implemented for data type `bool`");
    pd_tensor_release(&q);
    pd_tensor_release(&p);
}

PD_TEST(Math, BitwiseOnFloatsIsRefusedNamingTheFunctionAndDtype)
{
    int64_t n = 2;
    pd_tensor a = rt_random(PD_FLOAT32, 1, &n), out;
    PD_EXPECT_ERROR(mt_binary(PD_BINARY_BITWISE_OR, &a, &a, &out), PD_ERR_OP_FAILED,
                    "pd_bitwise_or is not implemented for data type `float32`");
    pd_tensor_release(&a);
}

PD_TEST(Math, ComplexArithmeticAndEquality)
{
    int64_t n = 2;
    pd_tensor a = PD_TENSOR_UNDEFINED, b = PD_TENSOR_UNDEFINED, out;
    PD_ASSERT_OK(pd_tensor_empty(&a, PD_COMPLEX64, pd_place_cpu(), 1, &n));
    PD_ASSERT_OK(pd_tensor_empty(&b, PD_COMPLEX64, pd_place_cpu(), 1, &n));
    pd_complex64 *pa = a.data, *pb = b.data;
    pa[0] = (pd_complex64){1, 2}, pa[1] = (pd_complex64){3, -1};
    pb[0] = (pd_complex64){3, 4}, pb[1] = (pd_complex64){3, -1};
    PD_ASSERT_OK(mt_binary(PD_BINARY_MULTIPLY, &a, &b, &out));
    const pd_complex64 *po = out.data; /* (1+2i)(3+4i) = -5+10i */
    PD_EXPECT_NEAR(po[0].re, -5, 1e-6);
    PD_EXPECT_NEAR(po[0].im, 10, 1e-6);
    pd_tensor_release(&out);
    PD_ASSERT_OK(mt_binary(PD_BINARY_DIVIDE, &a, &b, &out));
    po = out.data; /* (1+2i)/(3+4i) = (11+2i)/25 */
    PD_EXPECT_NEAR(po[0].re, 11.0 / 25, 1e-6);
    PD_EXPECT_NEAR(po[0].im, 2.0 / 25, 1e-6);
    pd_tensor_release(&out);
    PD_ASSERT_OK(mt_binary(PD_BINARY_EQUAL, &a, &b, &out));
    PD_EXPECT_EQ(mt_at(&out, 0), 0);
    PD_EXPECT_EQ(mt_at(&out, 1), 1);
    pd_tensor_release(&out);
    PD_EXPECT_ERROR(mt_binary(PD_BINARY_LESS_THAN, &a, &b, &out), PD_ERR_OP_FAILED,
                    "pd_less_than is not implemented for data type `complex64`");
    pd_tensor_release(&b);
    pd_tensor_release(&a);
}

PD_TEST(Math, ScalarOperandsOnEitherSide)
{
    int64_t n = 3;
    pd_tensor a = mt_tensor(PD_FLOAT32, 1, &n, (double[]){1, 2, 4}), out;
    pd_attr attrs[3] = {pd_attr_of_int("op", PD_BINARY_DIVIDE), pd_attr_of_double("value", 2),
                        pd_attr_of_bool("first", false)};
    PD_ASSERT_OK(mt_run("mt_binary_scalar", &a, 1, attrs, 3, &out, 1));
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_NEAR(mt_at(&out, i), mt_at(&a, i) / 2, 1e-6);
    expect_shape(&out, 1, &n);
    pd_tensor_release(&out);
    attrs[2] = pd_attr_of_bool("first", true); /* 2 / a */
    PD_ASSERT_OK(mt_run("mt_binary_scalar", &a, 1, attrs, 3, &out, 1));
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_NEAR(mt_at(&out, i), 2 / mt_at(&a, i), 1e-6);
    pd_tensor_release(&out);
    attrs[0] = pd_attr_of_int("op", PD_BINARY_GREATER_THAN); /* 2 > a */
    PD_ASSERT_OK(mt_run("mt_binary_scalar", &a, 1, attrs, 3, &out, 1));
    PD_EXPECT_EQ(out.dtype, PD_BOOL);
    PD_EXPECT_EQ(mt_at(&out, 0), 1);
    PD_EXPECT_EQ(mt_at(&out, 1), 0);
    pd_tensor_release(&out);
    pd_tensor_release(&a);
}

PD_TEST(Math, StridedOperandsAreReadThroughTheirStrides)
{
    int64_t s[2] = {3, 4};
    pd_tensor a = rt_random(PD_FLOAT64, 2, s), at, b = rt_random(PD_FLOAT64, 2, (int64_t[]){4, 3});
    PD_ASSERT_OK(pd_tensor_transpose(&at, &a, 0, 1)); /* [4, 3], strides (1, 4) */
    PD_EXPECT(!pd_is_contiguous(&at));
    pd_tensor out;
    PD_ASSERT_OK(mt_binary(PD_BINARY_SUBTRACT, &at, &b, &out));
    PD_EXPECT(pd_is_contiguous(&out));
    for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 3; ++j)
            PD_EXPECT_EQ(mt_at(&out, i * 3 + j), mt_at(&a, j * 4 + i) - mt_at(&b, i * 3 + j));
    pd_tensor_release(&out);
    pd_tensor_release(&b);
    pd_tensor_release(&at);
    pd_tensor_release(&a);
}

PD_TEST(Math, EmptyOperandsGiveAnEmptyResult)
{
    int64_t sa[2] = {0, 3}, sb[1] = {3};
    pd_tensor a = rt_tensor(PD_FLOAT32, 2, sa, NULL), b = rt_random(PD_FLOAT32, 1, sb), out;
    PD_ASSERT_OK(mt_binary(PD_BINARY_ADD, &a, &b, &out));
    expect_shape(&out, 2, sa);
    pd_tensor_release(&out);
    pd_tensor_release(&b);
    pd_tensor_release(&a);
}

PD_TEST(Math, ShapesThatDoNotBroadcastAreAClearError)
{
    int64_t sa[2] = {2, 3}, sb[1] = {4};
    pd_tensor a = rt_random(PD_FLOAT32, 2, sa), b = rt_random(PD_FLOAT32, 1, sb), out;
    PD_EXPECT_ERROR(mt_binary(PD_BINARY_ADD, &a, &b, &out), PD_ERR_OP_FAILED,
                    "mt_binary: pd_add: shapes [2, 3] (a) and [4] (b) do not broadcast");
    pd_tensor_release(&b);
    pd_tensor_release(&a);
}

PD_TEST(Math, OperandsOfTwoDtypesAreRefused)
{
    int64_t n = 2;
    pd_tensor a = rt_random(PD_FLOAT32, 1, &n), b = rt_random(PD_FLOAT64, 1, &n), out;
    PD_EXPECT_ERROR(mt_binary(PD_BINARY_MULTIPLY, &a, &b, &out), PD_ERR_OP_FAILED,
                    "pd_multiply: a is float32 and b is float64; expected one data type");
    pd_tensor_release(&b);
    pd_tensor_release(&a);
}

PD_TEST(Math, AMissingOperandOrAnUnknownOperatorIsNamed)
{
    int64_t n = 2;
    pd_tensor a = rt_random(PD_FLOAT32, 1, &n), out;
    PD_EXPECT_ERROR(mt_run("mt_null_operand", &a, 1, NULL, 0, &out, 1), PD_ERR_OP_FAILED,
                    "pd_add: b is NULL");
    PD_EXPECT_ERROR(mt_binary((pd_binary_op)99, &a, &a, &out), PD_ERR_OP_FAILED,
                    "pd_binary: op 99 is no pd_binary_op");
    pd_tensor_release(&a);
}

PD_TEST(Math, DeviceOperandsAreRefusedAsUnavailable)
{
    int32_t type = 0;
    PD_ASSERT_OK(pd_sim_device_install(&type));
    int64_t n = 2;
    pd_tensor a = rt_random(PD_FLOAT32, 1, &n), d = PD_TENSOR_UNDEFINED, out;
    PD_ASSERT_OK(pd_tensor_copy_to(&d, &a, pd_place_make(type, 0)));
    PD_EXPECT_ERROR(mt_binary(PD_BINARY_ADD, &d, &d, &out), PD_ERR_UNAVAILABLE,
                    "pd_add: a is on sim:0; the tensor functions compute in host memory only");
    pd_tensor_release(&d);
    pd_tensor_release(&a);
}

/* --- matmul -------------------------------------------------------------------------------- */

/* out[i][j] = sum_p x[i][p] * y[p][j] of dense row-major arrays. */
static void reference_matmul(const double *x, const double *y, double *out, int m, int k, int n)
{
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            out[i * n + j] = 0;
            for (int p = 0; p < k; ++p)
                out[i * n + j] += x[i * k + p] * y[p * n + j];
        }
}

/* Runs mt_matmul with the given flags and compares with the reference. */
static void check_matmul(bool ta, bool tb)
{
    int m = 2, k = 3, n = 4;
    double x[6], y[12], xs[6], ys[12], want[8];
    for (int i = 0; i < 6; ++i)
        x[i] = pd_test_uniform(-1, 1);
    for (int i = 0; i < 12; ++i)
        y[i] = pd_test_uniform(-1, 1);
    /* What is passed: x, or x^T stored densely when ta; likewise y. */
    for (int i = 0; i < m; ++i)
        for (int p = 0; p < k; ++p)
            xs[ta ? p * m + i : i * k + p] = x[i * k + p];
    for (int p = 0; p < k; ++p)
        for (int j = 0; j < n; ++j)
            ys[tb ? j * k + p : p * n + j] = y[p * n + j];
    int64_t sx[2] = {ta ? k : m, ta ? m : k}, sy[2] = {tb ? n : k, tb ? k : n}, so[2] = {m, n};
    pd_tensor ins[2] = {mt_tensor(PD_FLOAT64, 2, sx, xs), mt_tensor(PD_FLOAT64, 2, sy, ys)}, out;
    pd_attr attrs[2] = {pd_attr_of_bool("ta", ta), pd_attr_of_bool("tb", tb)};
    PD_ASSERT_OK(mt_run("mt_matmul", ins, 2, attrs, 2, &out, 1));
    reference_matmul(x, y, want, m, k, n);
    expect_shape(&out, 2, so);
    for (int i = 0; i < m * n; ++i)
        PD_EXPECT_NEAR(mt_at(&out, i), want[i], 1e-12);
    pd_tensor_release(&out);
    rt_release_all(ins, 2);
}

PD_TEST(Math, MatmulMatchesAReferenceForEveryTransposeFlag)
{
    check_matmul(false, false);
    check_matmul(true, false);
    check_matmul(false, true);
    check_matmul(true, true);
}

PD_TEST(Math, MatmulBroadcastsBatchDims)
{
    int64_t sa[4] = {2, 1, 2, 3}, sb[3] = {3, 3, 2}, want[4] = {2, 3, 2, 2};
    pd_tensor ins[2] = {rt_random(PD_FLOAT32, 4, sa), rt_random(PD_FLOAT32, 3, sb)}, out;
    pd_attr attrs[2] = {pd_attr_of_bool("ta", false), pd_attr_of_bool("tb", false)};
    PD_ASSERT_OK(mt_run("mt_matmul", ins, 2, attrs, 2, &out, 1));
    expect_shape(&out, 4, want);
    for (int b0 = 0; b0 < 2; ++b0)
        for (int b1 = 0; b1 < 3; ++b1) {
            double x[6], y[6], r[4];
            for (int i = 0; i < 6; ++i) {
                x[i] = mt_at(&ins[0], b0 * 6 + i);
                y[i] = mt_at(&ins[1], b1 * 6 + i);
            }
            reference_matmul(x, y, r, 2, 3, 2);
            for (int i = 0; i < 4; ++i)
                PD_EXPECT_NEAR(mt_at(&out, (b0 * 3 + b1) * 4 + i), r[i], 1e-5);
        }
    pd_tensor_release(&out);
    rt_release_all(ins, 2);
}

PD_TEST(Math, MatmulOfVectorsDropsTheirUnitDim)
{
    int64_t s3 = 3, s32[2] = {3, 2}, s23[2] = {2, 3};
    double v[3] = {1, 2, 3}, m32[6] = {1, 2, 3, 4, 5, 6};
    pd_attr attrs[2] = {pd_attr_of_bool("ta", false), pd_attr_of_bool("tb", false)};
    pd_tensor vec = mt_tensor(PD_INT64, 1, &s3, v), a = mt_tensor(PD_INT64, 2, s32, m32);
    pd_tensor b = mt_tensor(PD_INT64, 2, s23, m32), out;
    pd_tensor ins[2] = {vec, a};
    PD_ASSERT_OK(mt_run("mt_matmul", ins, 2, attrs, 2, &out, 1)); /* [3] @ [3, 2] -> [2] */
    PD_EXPECT_EQ(out.ndim, 1);
    PD_EXPECT_EQ(mt_at(&out, 0), 1 * 1 + 2 * 3 + 3 * 5);
    PD_EXPECT_EQ(mt_at(&out, 1), 1 * 2 + 2 * 4 + 3 * 6);
    pd_tensor_release(&out);
    ins[0] = b, ins[1] = vec; /* [2, 3] @ [3] -> [2] */
    PD_ASSERT_OK(mt_run("mt_matmul", ins, 2, attrs, 2, &out, 1));
    PD_EXPECT_EQ(out.ndim, 1);
    PD_EXPECT_EQ(mt_at(&out, 0), 1 * 1 + 2 * 2 + 3 * 3);
    PD_EXPECT_EQ(mt_at(&out, 1), 4 * 1 + 5 * 2 + 6 * 3);
    pd_tensor_release(&out);
    ins[0] = vec; /* [3] @ [3] -> a 0-dim dot product */
    PD_ASSERT_OK(mt_run("mt_matmul", ins, 2, attrs, 2, &out, 1));
    PD_EXPECT_EQ(out.ndim, 0);
    PD_EXPECT_EQ(mt_at(&out, 0), 14);
    pd_tensor_release(&out);
    pd_tensor_release(&b);
    pd_tensor_release(&a);
    pd_tensor_release(&vec);
}

PD_TEST(Math, MatmulOnHalvesAndComplex)
{
    int64_t s[2] = {2, 2};
    double x[4] = {1, 2, 3, 4}, y[4] = {5, 6, 7, 8}, want[4];
    reference_matmul(x, y, want, 2, 2, 2);
    pd_attr attrs[2] = {pd_attr_of_bool("ta", false), pd_attr_of_bool("tb", false)};
    static const pd_data_type dtypes[] = {PD_FLOAT16, PD_BFLOAT16, PD_COMPLEX128, PD_UINT8};
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; ++d) {
        pd_tensor ins[2] = {mt_tensor(dtypes[d], 2, s, x), mt_tensor(dtypes[d], 2, s, y)}, out;
        PD_ASSERT_OK(mt_run("mt_matmul", ins, 2, attrs, 2, &out, 1));
        PD_EXPECT_EQ(out.dtype, dtypes[d]);
        for (int i = 0; i < 4; ++i)
            PD_EXPECT_NEAR(mt_at(&out, i), want[i], 0.5);
        pd_tensor_release(&out);
        rt_release_all(ins, 2);
    }
}

PD_TEST(Math, MatmulOfMismatchedShapesNamesBoth)
{
    int64_t sa[2] = {2, 3}, sb[2] = {2, 3};
    pd_tensor ins[2] = {rt_random(PD_FLOAT32, 2, sa), rt_random(PD_FLOAT32, 2, sb)}, out;
    pd_attr attrs[2] = {pd_attr_of_bool("ta", false), pd_attr_of_bool("tb", false)};
    PD_EXPECT_ERROR(mt_run("mt_matmul", ins, 2, attrs, 2, &out, 1), PD_ERR_OP_FAILED,
                    "pd_matmul: a [2, 3] and b [2, 3] do not multiply: a's columns (3) must "
                    "equal b's rows (2)");
    attrs[1] = pd_attr_of_bool("tb", true); /* [2, 3] @ [3, 2] fits */
    PD_EXPECT_OK(mt_run("mt_matmul", ins, 2, attrs, 2, &out, 1));
    pd_tensor_release(&out);
    rt_release_all(ins, 2);
}

PD_TEST(Math, MatmulBatchDimsThatDoNotBroadcastNameBothShapesAndTheAxis)
{
    int64_t sa[3] = {2, 2, 3}, sb[3] = {3, 3, 2};
    pd_tensor ins[2] = {rt_random(PD_FLOAT32, 3, sa), rt_random(PD_FLOAT32, 3, sb)}, out;
    pd_attr attrs[2] = {pd_attr_of_bool("ta", false), pd_attr_of_bool("tb", false)};
    PD_EXPECT_ERROR(mt_run("mt_matmul", ins, 2, attrs, 2, &out, 1), PD_ERR_OP_FAILED,
                    "pd_matmul: the batch dims of [2, 2, 3] (a) and [3, 3, 2] (b) do not "
                    "broadcast: axis 0 of the result would be 2 and 3");
    rt_release_all(ins, 2);
}

/* --- sum ----------------------------------------------------------------------------------- */

/* Runs mt_sum over `axes`. */
static pd_status run_sum(pd_tensor *x, int32_t naxes, const int64_t *axes, bool keepdim,
                         pd_data_type dtype, pd_tensor *out)
{
    pd_attr attrs[3] = {pd_attr_of_int64s("axes", axes, naxes), pd_attr_of_bool("keepdim", keepdim),
                        pd_attr_of_int("dtype", dtype)};
    return mt_run("mt_sum", x, 1, attrs, 3, out, 1);
}

PD_TEST(Math, SumOverAxesWithAndWithoutKeepdim)
{
    int64_t s[3] = {2, 3, 4};
    pd_tensor x = rt_random(PD_FLOAT32, 3, s), out;
    double want[3] = {0, 0, 0}, total = 0;
    for (int i = 0; i < 2; ++i)
        for (int j = 0; j < 3; ++j)
            for (int k = 0; k < 4; ++k) {
                want[j] += mt_at(&x, (i * 3 + j) * 4 + k);
                total += mt_at(&x, (i * 3 + j) * 4 + k);
            }
    int64_t axes[2] = {0, -1}, kept[3] = {1, 3, 1};
    PD_ASSERT_OK(run_sum(&x, 2, axes, true, PD_UNDEFINED, &out));
    PD_EXPECT_EQ(out.dtype, PD_FLOAT32);
    expect_shape(&out, 3, kept);
    for (int j = 0; j < 3; ++j)
        PD_EXPECT_NEAR(mt_at(&out, j), want[j], 1e-5);
    pd_tensor_release(&out);
    PD_ASSERT_OK(run_sum(&x, 2, axes, false, PD_UNDEFINED, &out));
    expect_shape(&out, 1, &kept[1]);
    pd_tensor_release(&out);
    PD_ASSERT_OK(run_sum(&x, 0, NULL, false, PD_FLOAT64, &out)); /* every axis, into float64 */
    PD_EXPECT_EQ(out.ndim, 0);
    PD_EXPECT_EQ(out.dtype, PD_FLOAT64);
    PD_EXPECT_NEAR(mt_at(&out, 0), total, 1e-5);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
}

PD_TEST(Math, SumOfInt32AndBoolIsInt64AsInPaddle)
{
    int64_t s[2] = {2, 2};
    pd_tensor x = mt_tensor(PD_INT32, 2, s, (double[]){1, 2, 3, 4}), out;
    int64_t axis = 1;
    PD_ASSERT_OK(run_sum(&x, 1, &axis, false, PD_UNDEFINED, &out));
    PD_EXPECT_EQ(out.dtype, PD_INT64);
    PD_EXPECT_EQ(mt_at(&out, 0), 3);
    PD_EXPECT_EQ(mt_at(&out, 1), 7);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_tensor b = mt_tensor(PD_BOOL, 2, s, (double[]){1, 0, 1, 1});
    pd_attr attr = pd_attr_of_int("axis", PD_ALL_AXES);
    PD_ASSERT_OK(mt_run("mt_sum_axis", &b, 1, &attr, 1, &out, 1));
    PD_EXPECT_EQ(out.dtype, PD_INT64);
    PD_EXPECT_EQ(mt_at(&out, 0), 3);
    pd_tensor_release(&out);
    pd_tensor_release(&b);
}

PD_TEST(Math, SumOfAStridedView)
{
    int64_t s[2] = {3, 4};
    pd_tensor x = rt_random(PD_FLOAT64, 2, s), xt, out;
    PD_ASSERT_OK(pd_tensor_transpose(&xt, &x, 0, 1)); /* [4, 3] */
    int64_t axis = 0;
    PD_ASSERT_OK(run_sum(&xt, 1, &axis, false, PD_UNDEFINED, &out)); /* = row sums of x */
    PD_EXPECT_EQ(out.shape[0], 3);
    for (int i = 0; i < 3; ++i) {
        double want = 0;
        for (int j = 0; j < 4; ++j)
            want += mt_at(&x, i * 4 + j);
        PD_EXPECT_NEAR(mt_at(&out, i), want, 1e-12);
    }
    pd_tensor_release(&out);
    pd_tensor_release(&xt);
    pd_tensor_release(&x);
}

PD_TEST(Math, SumOverAnAxisOutOfRangeIsAClearError)
{
    int64_t s[2] = {3, 4};
    pd_tensor x = rt_random(PD_FLOAT64, 2, s), out;
    int64_t axis = 2;
    PD_EXPECT_ERROR(run_sum(&x, 1, &axis, false, PD_UNDEFINED, &out), PD_ERR_OP_FAILED,
                    "pd_sum: axis 2 is out of range for x of 2 dims (expected -2 to 1)");
    PD_EXPECT_ERROR(run_sum(&x, 0, NULL, false, (pd_data_type)77, &out), PD_ERR_OP_FAILED,
                    "pd_sum: dtype is data type number 77, which is none");
    pd_tensor_release(&x);
}

/* --- fill and composed ops ---------------------------------------------------------------- */

PD_TEST(Math, FillSetsEveryElementOfAStridedView)
{
    int64_t s[2] = {2, 5};
    pd_tensor x = mt_tensor(PD_INT16, 2, s, (double[]){0, 1, 2, 3, 4, 5, 6, 7, 8, 9}), out;
    pd_attr attr = pd_attr_of_double("value", -7.9); /* converted to int16: -7 */
    PD_ASSERT_OK(mt_run("mt_fill_columns", &x, 1, &attr, 1, &out, 1));
    for (int i = 0; i < 10; ++i)
        PD_EXPECT_EQ(mt_at(&out, i), i % 5 % 2 == 0 ? -7 : i);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
}

PD_TEST(Math, ALinearLayerComposedInCMatchesItsReference)
{
    int m = 3, k = 4, n = 2;
    int64_t sx[2] = {m, k}, sw[2] = {k, n}, sb = n, sg[2] = {m, n};
    pd_tensor ins[3] = {rt_random(PD_FLOAT64, 2, sx), rt_random(PD_FLOAT64, 2, sw),
                        rt_random(PD_FLOAT64, 1, &sb)};
    pd_tensor out;
    PD_ASSERT_OK(mt_run("mt_linear", ins, 3, NULL, 0, &out, 1));
    expect_shape(&out, 2, sg);
    for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
            double want = mt_at(&ins[2], j);
            for (int p = 0; p < k; ++p)
                want += mt_at(&ins[0], i * k + p) * mt_at(&ins[1], p * n + j);
            PD_EXPECT_NEAR(mt_at(&out, i * n + j), want, 1e-12);
        }
    pd_tensor_release(&out);

    pd_tensor g = rt_random(PD_FLOAT64, 2, sg), gins[3] = {ins[0], ins[1], g}, grads[3];
    PD_ASSERT_OK(mt_run("mt_linear_grad", gins, 3, NULL, 0, grads, 3));
    for (int i = 0; i < m; ++i) /* dX = G W^T */
        for (int p = 0; p < k; ++p) {
            double want = 0;
            for (int j = 0; j < n; ++j)
                want += mt_at(&g, i * n + j) * mt_at(&ins[1], p * n + j);
            PD_EXPECT_NEAR(mt_at(&grads[0], i * k + p), want, 1e-12);
        }
    for (int p = 0; p < k; ++p) /* dW = X^T G */
        for (int j = 0; j < n; ++j) {
            double want = 0;
            for (int i = 0; i < m; ++i)
                want += mt_at(&ins[0], i * k + p) * mt_at(&g, i * n + j);
            PD_EXPECT_NEAR(mt_at(&grads[1], p * n + j), want, 1e-12);
        }
    for (int j = 0; j < n; ++j) { /* dBias = column sums of G */
        double want = 0;
        for (int i = 0; i < m; ++i)
            want += mt_at(&g, i * n + j);
        PD_EXPECT_NEAR(mt_at(&grads[2], j), want, 1e-12);
    }
    rt_release_all(grads, 3);
    pd_tensor_release(&g);
    rt_release_all(ins, 3);
}

PD_TEST(Math, OpCodeComposesWithATransposedView)
{
    int64_t s[2] = {3, 3};
    pd_tensor x = rt_random(PD_FLOAT32, 2, s), out;
    PD_ASSERT_OK(mt_run("mt_symmetric", &x, 1, NULL, 0, &out, 1));
    for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
            PD_EXPECT_NEAR(mt_at(&out, i * 3 + j),
                           (mt_at(&x, i * 3 + j) + mt_at(&x, j * 3 + i)) * 0.5, 1e-6);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
}
