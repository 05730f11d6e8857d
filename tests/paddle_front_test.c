/*
 * paddle_front_test.c - the Paddle C++ front (paddle/extension.h) from a C host: Paddle-style
 * sources (examples/paddle, tests/paddle_ops) built as modules, by the JIT and linked into
 * this program, run through pd_run and checked against values computed here. Covers every
 * kernel signature form, every attr type, optional, vector and inplace inputs, multiple
 * outputs, infer functions (with -1), double grad, tensor functions, and the errors a Paddle
 * author meets: PD_CHECK / PD_THROW messages, C++ exceptions, dispatch on an unsupported
 * dtype, data<T>() with the wrong T, signatures that do not match the declarations, a missing
 * kernel and an inplace map naming an unknown input. Past 500 lines: one suite per front, as
 * the other areas have, so that each Paddle behaviour is one named test next to the others.
 */
#include "jit_support.h"
#include "pdext_npy.h"
#include "runner_helpers.h"

#include <math.h>

/* "[<file>:<line>]" of the line of tests/paddle_ops/<file> containing `text`. */
static const char *site_of(const char *file, const char *text)
{
    static char buf[4][128];
    static int next;
    char path[512], line[512];
    snprintf(path, sizeof path, "%s/tests/paddle_ops/%s", PD_TEST_SOURCE_DIR, file);
    char *out = buf[next++ % 4];
    snprintf(out, 128, "(no line with %s in %s)", text, file);
    FILE *f = fopen(path, "r");
    if (f == NULL)
        return out;
    for (int n = 1; fgets(line, sizeof line, f); ++n)
        if (strstr(line, text)) {
            snprintf(out, 128, "[%s:%d]", file, n);
            break;
        }
    fclose(f);
    return out;
}

static pd_registry *forms(void) { return rt_registry1("pp_forms"); }

static pd_tensor f32(int32_t ndim, const int64_t *shape, const double *values)
{
    return rt_tensor(PD_FLOAT32, ndim, shape, values);
}

/* Runs `op` on one input X; the output goes to *out. */
static pd_status run1(pd_registry *reg, const char *op, pd_tensor *x, const pd_attr *attrs,
                      int32_t n_attrs, pd_tensor *out)
{
    pd_arg in = pd_arg_named("X", x, 1), o = pd_arg_of(out);
    return pd_run(reg, op, &in, 1, attrs, n_attrs, &o, 1);
}

/* --- the examples ------------------------------------------------------------------------- */

PD_TEST(PaddleFront, ReluForwardBackwardAndDoubleGradMatchRelu)
{
    pd_registry *reg = rt_registry1("pp_relu");
    PD_ASSERT(reg != NULL);
    int64_t shape[2] = {2, 3};
    double xs[6] = {-1.5, 2, 0, 3.25, -0.5, 7}, gs[6] = {1, 2, 3, 4, 5, 6};
    for (int d = 0; d < 2; ++d) {
        pd_data_type dt = d ? PD_FLOAT64 : PD_FLOAT32;
        pd_tensor x = rt_tensor(dt, 2, shape, xs), g = rt_tensor(dt, 2, shape, gs);
        pd_tensor out = PD_TENSOR_UNDEFINED, gx = PD_TENSOR_UNDEFINED, ddo = PD_TENSOR_UNDEFINED;
        PD_ASSERT_OK(run1(reg, "custom_relu", &x, NULL, 0, &out));
        PD_EXPECT_EQ(pd_dtype(&out), dt);
        PD_EXPECT(pd_same_shape(&out, &x));
        pd_arg in[3] = {pd_arg_named("X", &x, 1), pd_arg_named("Out", &out, 1),
                        pd_arg_named("Out@GRAD", &g, 1)};
        pd_arg o = pd_arg_of(&gx);
        PD_ASSERT_OK(pd_run(reg, "custom_relu_grad", in, 3, NULL, 0, &o, 1));
        pd_arg in2[2] = {pd_arg_named("Out", &out, 1), pd_arg_named("X@GRAD@GRAD", &g, 1)};
        pd_arg o2 = pd_arg_of(&ddo);
        PD_ASSERT_OK(pd_run(reg, "custom_relu_grad_grad", in2, 2, NULL, 0, &o2, 1));
        for (int i = 0; i < 6; ++i) {
            PD_EXPECT_NEAR(rt_at(&out, i), xs[i] > 0 ? xs[i] : 0, 0);
            PD_EXPECT_NEAR(rt_at(&gx, i), xs[i] > 0 ? gs[i] : 0, 0);
            PD_EXPECT_NEAR(rt_at(&ddo, i), xs[i] > 0 ? gs[i] : 0, 0);
        }
        pd_tensor ts[5] = {x, g, out, gx, ddo};
        rt_release_all(ts, 5);
    }
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, DispatchOnAnUnsupportedDtypeNamesTheFunctionTheDtypeAndTheSource)
{
    pd_registry *reg = rt_registry1("pp_relu");
    PD_ASSERT(reg != NULL);
    int64_t n = 3;
    pd_tensor x = rt_tensor(PD_INT32, 1, &n, NULL), out = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(run1(reg, "custom_relu", &x, NULL, 0, &out), PD_ERR_OP_FAILED,
                    "custom_relu: function relu_cpu_forward is not implemented for data type "
                    "`int32` (input 'X'); it takes float32, float64 [custom_relu_op.cc:");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, ConcatJoinsAVectorInputAlongTheAttrAxisAndItsGradSplitsIt)
{
    pd_registry *reg = rt_registry1("pp_concat");
    PD_ASSERT(reg != NULL);
    int64_t sa[2] = {2, 2}, sb[2] = {2, 1};
    double va[4] = {1, 2, 3, 4}, vb[2] = {5, 6}, want[6] = {1, 2, 5, 3, 4, 6};
    pd_tensor xs[2] = {f32(2, sa, va), f32(2, sb, vb)}, out = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_named("X", xs, 2), o = pd_arg_of(&out);
    pd_attr axis = pd_attr_of_int64("axis", -1);
    PD_ASSERT_OK(pd_run(reg, "custom_concat", &in, 1, &axis, 1, &o, 1));
    PD_EXPECT_EQ(out.shape[0], 2);
    PD_EXPECT_EQ(out.shape[1], 3);
    for (int i = 0; i < 6; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), want[i], 0);
    pd_tensor grads[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_arg gin[2] = {pd_arg_named("X", xs, 2), pd_arg_named("Out@GRAD", &out, 1)};
    pd_arg go = {NULL, grads, 2};
    PD_ASSERT_OK(pd_run(reg, "custom_concat_grad", gin, 2, &axis, 1, &go, 1));
    PD_ASSERT_EQ(go.count, 2);
    for (int i = 0; i < 4; ++i)
        PD_EXPECT_NEAR(rt_at(&grads[0], i), va[i], 0);
    for (int i = 0; i < 2; ++i)
        PD_EXPECT_NEAR(rt_at(&grads[1], i), vb[i], 0);
    pd_attr bad = pd_attr_of_int64("axis", 2);
    pd_tensor none = PD_TENSOR_UNDEFINED;
    pd_arg o2 = pd_arg_of(&none);
    PD_EXPECT_ERROR(pd_run(reg, "custom_concat", &in, 1, &bad, 1, &o2, 1), PD_ERR_OP_FAILED,
                    "The axis is expected to be in range of [-2, 2), but got 2");
    pd_tensor ts[5] = {xs[0], xs[1], out, grads[0], grads[1]};
    rt_release_all(ts, 5);
    pd_registry_destroy(reg);
}

/* --- signature forms ---------------------------------------------------------------------- */

PD_TEST(PaddleFront, AttrsOfAllTenTypesReachTheKernel)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 1;
    pd_tensor x = f32(1, &n, NULL), out = PD_TENSOR_UNDEFINED;
    const int32_t ints[3] = {1, 2, 3};
    const float floats[2] = {0.5f, 0.25f};
    const int64_t int64s[2] = {10000000000LL, 5};
    const char *const strings[2] = {"ab", "cde"};
    pd_attr attrs[10] = {pd_attr_of_bool("b", true),
                         pd_attr_of_int("i", -7),
                         pd_attr_of_float("f", 1.5f),
                         pd_attr_of_double("d", 2.25),
                         pd_attr_of_int64("i64", 1LL << 40),
                         pd_attr_of_string("s", "hello"),
                         pd_attr_of_ints("ints", ints, 3),
                         pd_attr_of_floats("floats", floats, 2),
                         pd_attr_of_int64s("int64s", int64s, 2),
                         pd_attr_of_strings("strings", strings, 2)};
    PD_ASSERT_OK(run1(reg, "pf_attrs", &x, attrs, 10, &out));
    double want[10] = {1, -7, 1.5, 2.25, (double)(1LL << 40), 5, 6, 0.75, 10000000005.0, 5};
    PD_ASSERT_EQ(pd_numel(&out), 10);
    for (int i = 0; i < 10; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), want[i], 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* Paddle's rule (custom_operator.cc): a shape function is handed every attr but the
 * std::vector<int64_t> ones, in declared order. */
PD_TEST(PaddleFront, InferShapeIsHandedEveryAttrButTheInt64Vectors)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 2;
    double vx[2] = {1.5, -2};
    pd_tensor x = f32(1, &n, vx), out = PD_TENSOR_UNDEFINED;
    const int64_t unused[1] = {9};
    pd_attr attrs[2] = {pd_attr_of_int64s("unused", unused, 1), pd_attr_of_int("times", 3)};
    PD_ASSERT_OK(run1(reg, "pf_repeat", &x, attrs, 2, &out));
    PD_ASSERT_EQ(pd_numel(&out), 6);
    for (int i = 0; i < 6; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), vx[i % 2], 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, OptionalInputsMayBeAbsentOrBound)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 3;
    double vx[3] = {1, 2, 3}, vy[3] = {10, 20, 30}, vz[3] = {100, 200, 300};
    pd_tensor x = f32(1, &n, vx), y = f32(1, &n, vy), zs[2] = {f32(1, &n, vz), f32(1, &n, vz)};
    pd_tensor out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pf_optional", &x, NULL, 0, &out));
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), vx[i], 0);
    pd_tensor_release(&out);
    pd_arg in[3] = {pd_arg_named("X", &x, 1), pd_arg_named("Y", &y, 1), pd_arg_named("Zs", zs, 2)};
    pd_arg o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "pf_optional", in, 3, NULL, 0, &o, 1));
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), vx[i] + vy[i] + 2 * vz[i], 0);
    pd_tensor ts[5] = {x, y, zs[0], zs[1], out};
    rt_release_all(ts, 5);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, InplaceVoidKernelsWriteIntoTheirInputs)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 3;
    double vx[3] = {1, 2, 3}, vy[3] = {10, 20, 30};
    pd_tensor x = f32(1, &n, vx), y = f32(1, &n, vy), out = PD_TENSOR_UNDEFINED;
    pd_arg in[2] = {pd_arg_named("X", &x, 1), pd_arg_named("Y", &y, 1)};
    pd_arg o = pd_arg_of(&out);
    PD_ASSERT_OK(pd_run(reg, "pf_add_inplace", in, 2, NULL, 0, &o, 1));
    for (int i = 0; i < 3; ++i) {
        PD_EXPECT_NEAR(rt_at(&x, i), vx[i] + vy[i], 0);
        PD_EXPECT_NEAR(rt_at(&out, i), vx[i] + vy[i], 0);
    }
    PD_EXPECT(out.data == x.data);
    pd_tensor_release(&out);
    pd_tensor xs[2] = {f32(1, &n, vx), f32(1, &n, vy)},
              outs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_arg vin = pd_arg_named("X", xs, 2), vo = {NULL, outs, 2};
    PD_ASSERT_OK(pd_run(reg, "pf_vec_inplace", &vin, 1, NULL, 0, &vo, 1));
    PD_ASSERT_EQ(vo.count, 2);
    for (int i = 0; i < 3; ++i) {
        PD_EXPECT_NEAR(rt_at(&xs[0], i), 2 * vx[i], 0);
        PD_EXPECT_NEAR(rt_at(&outs[1], i), 2 * vy[i], 0);
    }
    pd_tensor ts[6] = {x, y, xs[0], xs[1], outs[0], outs[1]};
    rt_release_all(ts, 6);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, TensorPointerOutputsAndTheLegacyConstructorAllocateOnMutableData)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t shape[2] = {2, 2};
    double vx[4] = {1, -2, 3, 0.5};
    pd_tensor x = f32(2, shape, vx), sq = PD_TENSOR_UNDEFINED, tri = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pf_out_param", &x, NULL, 0, &sq));
    PD_ASSERT_OK(run1(reg, "pf_legacy", &x, NULL, 0, &tri));
    PD_EXPECT(pd_same_shape(&sq, &x));
    PD_EXPECT(pd_same_shape(&tri, &x));
    PD_EXPECT_EQ(pd_dtype(&tri), PD_FLOAT32);
    for (int i = 0; i < 4; ++i) {
        PD_EXPECT_NEAR(rt_at(&sq, i), vx[i] * vx[i], 0);
        PD_EXPECT_NEAR(rt_at(&tri, i), 3 * vx[i], 0);
    }
    pd_tensor ts[3] = {x, sq, tri};
    rt_release_all(ts, 3);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, MultipleOutputsTakeTheirInferredDtypes)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 3;
    double vx[3] = {1.5, -2.25, 3};
    pd_tensor x = f32(1, &n, vx),
              outs[3] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_arg in = pd_arg_named("X", &x, 1);
    pd_arg o[3] = {pd_arg_named("Plus", &outs[0], 1), pd_arg_named("AsInt", &outs[1], 1),
                   pd_arg_named("Count", &outs[2], 1)};
    PD_ASSERT_OK(pd_run(reg, "pf_multi", &in, 1, NULL, 0, o, 3));
    PD_EXPECT_EQ(pd_dtype(&outs[0]), PD_FLOAT32);
    PD_EXPECT_EQ(pd_dtype(&outs[1]), PD_INT32);
    PD_EXPECT_EQ(pd_dtype(&outs[2]), PD_INT64);
    for (int i = 0; i < 3; ++i) {
        PD_EXPECT_NEAR(rt_at(&outs[0], i), vx[i] + 1, 0);
        PD_EXPECT_NEAR(rt_at(&outs[1], i), (double)(int)vx[i], 0);
    }
    PD_EXPECT_NEAR(rt_at(&outs[2], 0), 3, 0);
    pd_tensor ts[4] = {x, outs[0], outs[1], outs[2]};
    rt_release_all(ts, 4);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, AVectorOutputTakesEveryReturnedTensor)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t shape[2] = {3, 2};
    double vx[6] = {1, 2, 3, 4, 5, 6};
    pd_tensor x = f32(2, shape, vx), rows[4];
    for (int i = 0; i < 4; ++i)
        rows[i] = (pd_tensor)PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_named("X", &x, 1), o = {NULL, rows, 4};
    PD_ASSERT_OK(pd_run(reg, "pf_split", &in, 1, NULL, 0, &o, 1));
    PD_ASSERT_EQ(o.count, 3);
    for (int r = 0; r < 3; ++r) {
        PD_EXPECT_EQ(rows[r].ndim, 2);
        PD_EXPECT_EQ(rows[r].shape[0], 1);
        PD_EXPECT_NEAR(rt_at(&rows[r], 1), vx[r * 2 + 1], 0);
    }
    rt_release_all(rows, 3);
    pd_arg both[2] = {pd_arg_named("X", &x, 1), pd_arg_named("Y", &x, 1)};
    o.count = 4;
    PD_EXPECT_ERROR(pd_run(reg, "pf_split_both", both, 2, NULL, 0, &o, 1), PD_ERR_INVALID_ARGUMENT,
                    "output 'Out' has 6 tensors, but its pd_arg has room for 4");
    pd_tensor six[6];
    pd_arg o6 = {NULL, six, 6};
    PD_ASSERT_OK(pd_run(reg, "pf_split_both", both, 2, NULL, 0, &o6, 1));
    PD_EXPECT_EQ(o6.count, 6);
    PD_EXPECT_NEAR(rt_at(&six[5], 0), vx[4], 0);
    rt_release_all(six, 6);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, AVectorOfTensorPointersFillsAVectorOutput)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 2;
    double vx[2] = {1.5, -2};
    pd_tensor x = f32(1, &n, vx), items[3], count = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_named("X", &x, 1), o[2] = {{NULL, items, 3}, pd_arg_of(&count)};
    pd_attr a = pd_attr_of_int("n", 3);
    PD_ASSERT_OK(pd_run(reg, "pf_scaled_copies", &in, 1, &a, 1, o, 2));
    PD_ASSERT_EQ(o[0].count, 3);
    for (int k = 0; k < 3; ++k)
        for (int i = 0; i < 2; ++i)
            PD_EXPECT_NEAR(rt_at(&items[k], i), vx[i] * (k + 1), 0);
    PD_EXPECT_EQ(rt_at(&count, 0), 3);
    rt_release_all(items, 3);
    pd_tensor_release(&count);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, DoubleGradWithANewGradOutputMatchesTanhsDerivatives)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 3;
    double vx[3] = {-0.5, 0.25, 1.5}, vg[3] = {1, -2, 0.5}, vdd[3] = {0.3, 0.7, -1};
    pd_tensor x = f32(1, &n, vx), g = f32(1, &n, vg), dd = f32(1, &n, vdd);
    pd_tensor out = PD_TENSOR_UNDEFINED, dx = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pf_tanh", &x, NULL, 0, &out));
    pd_arg in[2] = {pd_arg_of(&out), pd_arg_of(&g)}, o = pd_arg_of(&dx);
    PD_ASSERT_OK(pd_run(reg, "pf_tanh_grad", in, 2, NULL, 0, &o, 1));
    pd_tensor outs[2] = {PD_TENSOR_UNDEFINED, PD_TENSOR_UNDEFINED};
    pd_arg in2[3] = {pd_arg_of(&out), pd_arg_of(&dd), pd_arg_of(&g)};
    pd_arg o2[2] = {pd_arg_of(&outs[0]), pd_arg_of(&outs[1])};
    PD_ASSERT_OK(pd_run(reg, "pf_tanh_grad_grad", in2, 3, NULL, 0, o2, 2));
    for (int i = 0; i < 3; ++i) {
        double t = tanh(vx[i]);
        PD_EXPECT_NEAR(rt_at(&out, i), t, 1e-6);
        PD_EXPECT_NEAR(rt_at(&dx, i), vg[i] * (1 - t * t), 1e-6);
        PD_EXPECT_NEAR(rt_at(&outs[0], i), -2 * vg[i] * t * vdd[i], 1e-6);
        PD_EXPECT_NEAR(rt_at(&outs[1], i), vdd[i] * (1 - t * t), 1e-6);
    }
    const pd_op *op = pd_op_find(reg, "pf_tanh_grad_grad");
    PD_ASSERT(op != NULL);
    PD_EXPECT_STREQ(pd_op_definition(op)->outputs[0], "Out@GRAD@NEW");
    rt_release_all(outs, 2);
    pd_tensor_release(&dx);
    pd_tensor_release(&out);
    pd_tensor_release(&dd);
    pd_tensor_release(&g);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, InferShapeMinusOneLeavesTheShapeToTheKernel)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 5;
    double vx[5] = {1, -1, 2, -2, 3};
    pd_tensor x = f32(1, &n, vx), out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pf_positives", &x, NULL, 0, &out));
    PD_ASSERT_EQ(out.ndim, 1);
    PD_ASSERT_EQ(out.shape[0], 3);
    PD_EXPECT_NEAR(rt_at(&out, 2), 3, 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, InferShapeNegativeDimOtherThanMinusOneIsRefusedNamingTheOp)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 3;
    double vx[3] = {1, -1, 2};
    pd_tensor x = f32(1, &n, vx), out = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(run1(reg, "pf_bad_dim", &x, NULL, 0, &out), PD_ERR_OP_FAILED, "pf_bad_dim");
    PD_EXPECT_CONTAINS(pd_last_error(), "returned dim 1 = -7 for output 'Out'");
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, ComplexElementsHaveRealAndImag)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 2;
    pd_tensor x = rt_tensor(PD_COMPLEX64, 1, &n, NULL), out = PD_TENSOR_UNDEFINED;
    pd_complex64 *v = (pd_complex64 *)x.data;
    v[0].re = 1, v[0].im = 2, v[1].re = -3, v[1].im = -4;
    PD_ASSERT_OK(run1(reg, "pf_conj", &x, NULL, 0, &out));
    const pd_complex64 *o = (const pd_complex64 *)out.data;
    PD_EXPECT(o[0].re == 1 && o[0].im == -2 && o[1].re == -3 && o[1].im == 4);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, TensorFunctionsBroadcastMultiplySumTransposeCompareAndMixBits)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t sx[2] = {2, 3}, sb = 3, sy[2] = {3, 2};
    double vx[6] = {1, -2, 3, -4, 5, 0}, vb[3] = {10, 20, 30}, vy[6] = {1, 2, 3, 4, 5, 6};
    pd_tensor x = f32(2, sx, vx), b = f32(1, &sb, vb), y = f32(2, sy, vy);
    pd_tensor outs[6];
    pd_arg o[6];
    for (int i = 0; i < 6; ++i) {
        outs[i] = (pd_tensor)PD_TENSOR_UNDEFINED;
        o[i] = pd_arg_of(&outs[i]);
    }
    pd_arg in[3] = {pd_arg_named("X", &x, 1), pd_arg_named("Bias", &b, 1),
                    pd_arg_named("Y", &y, 1)};
    PD_ASSERT_OK(pd_run(reg, "pf_functions", in, 3, NULL, 0, o, 6));
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 3; ++c) {
            double xv = vx[r * 3 + c];
            PD_EXPECT_NEAR(rt_at(&outs[0], r * 3 + c), (xv + vb[c]) * 2 - 1, 0);
            PD_EXPECT_NEAR(rt_at(&outs[3], c * 2 + r), xv, 0); /* T is [3,2] */
            PD_EXPECT_EQ(((const bool *)outs[4].data)[r * 3 + c], xv > 0);
        }
    for (int r = 0; r < 2; ++r)
        for (int c = 0; c < 2; ++c) {
            double want = 0;
            for (int k = 0; k < 3; ++k)
                want += vx[r * 3 + k] * vy[k * 2 + c];
            PD_EXPECT_NEAR(rt_at(&outs[1], r * 2 + c), want, 1e-6);
        }
    for (int c = 0; c < 3; ++c)
        PD_EXPECT_NEAR(rt_at(&outs[2], c), vx[c] + vx[3 + c], 0);
    PD_EXPECT_EQ(outs[3].ndim, 2);
    PD_EXPECT_EQ(outs[3].shape[0], 3);
    PD_EXPECT_EQ(pd_dtype(&outs[4]), PD_BOOL);
    PD_EXPECT_EQ(pd_dtype(&outs[5]), PD_INT32);
    PD_EXPECT_NEAR(rt_at(&outs[5], 0), ((6 & 3) | (6 ^ 3)) + (~3), 0);
    pd_tensor ts[3] = {x, b, y};
    rt_release_all(ts, 3);
    rt_release_all(outs, 6);
    pd_registry_destroy(reg);
}

/* --- errors ---------------------------------------------------------------------------------- */

static pd_status run_check(pd_registry *reg, int64_t mode)
{
    int64_t shape[2] = {2, 2};
    pd_tensor x = f32(2, shape, NULL), out = PD_TENSOR_UNDEFINED;
    pd_attr a = pd_attr_of_int64("mode", mode);
    pd_status s = run1(reg, "pf_check", &x, &a, 1, &out);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    return s;
}

PD_TEST(PaddleFront, CheckAndThrowConcatenateTheirArgumentsAndNameTheSite)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    char want[256];
    snprintf(want, sizeof want, "pf_check: x has 4 elements of float32 on cpu %s",
             site_of("paddle_forms.cc", "PD_CHECK(x.numel() > 100, \"x has"));
    PD_EXPECT_ERROR(run_check(reg, 0), PD_ERR_OP_FAILED, want);
    snprintf(want, sizeof want, "pf_check: Expected x.numel() > 100, but it's not satisfied. %s",
             site_of("paddle_forms.cc", "PD_CHECK(x.numel() > 100);"));
    PD_EXPECT_ERROR(run_check(reg, 1), PD_ERR_OP_FAILED, want);
    snprintf(want, sizeof want, "pf_check: mode 2 is refused %s",
             site_of("paddle_forms.cc", "PD_THROW(\"mode \""));
    PD_EXPECT_ERROR(run_check(reg, 2), PD_ERR_OP_FAILED, want);
    PD_EXPECT_OK(run_check(reg, 7));
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, PaddleEnforceMacrosReportTheBuilderTextTheExpectationAndTheSite)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    char want[256];
    snprintf(want, sizeof want,
             "pf_check: x has too few elements: %%d (Expected x.numel() > 100, but it's not "
             "satisfied.) %s",
             site_of("paddle_forms.cc", "PADDLE_ENFORCE_GT(x.numel(), 100,"));
    PD_EXPECT_ERROR(run_check(reg, 8), PD_ERR_OP_FAILED, want);
    PD_EXPECT_ERROR(run_check(reg, 9), PD_ERR_OP_FAILED,
                    "pf_check: builder in b's place (Expected x.numel() > 100 == "
                    "common::errors::Fatal(\"builder in b's place\"), but it's not satisfied.)");
    PD_EXPECT_ERROR(run_check(reg, 10), PD_ERR_OP_FAILED,
                    "pf_check: no_data is nullptr. (Expected no_data != nullptr, but it's not "
                    "satisfied.)");
    PD_EXPECT_ERROR(run_check(reg, 11), PD_ERR_OP_FAILED,
                    "pf_check: mode \"11\" is not implemented [paddle_forms.cc:");
    PD_EXPECT_ERROR(run_check(reg, 12), PD_ERR_OP_FAILED,
                    "pf_check: Expected (no_data) != nullptr, but it's not satisfied.");
    PD_EXPECT_OK(run_check(reg, 7)); /* the passing PADDLE_ENFORCE_EQ on every call */
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, ExceptionsWrongElementTypesAndUnsupportedDtypesBecomeOpErrors)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    PD_EXPECT_ERROR(run_check(reg, 3), PD_ERR_OP_FAILED,
                    "pf_check: C++ exception: a runtime_error from the kernel");
    PD_EXPECT_ERROR(run_check(reg, 4), PD_ERR_INVALID_ARGUMENT,
                    "pf_check: paddle::Tensor::data<int32>() called on a tensor of data type "
                    "float32");
    PD_EXPECT_ERROR(run_check(reg, 5), PD_ERR_OP_FAILED,
                    "pf_check: function check_dispatch is not implemented for data type `int32`");
    PD_EXPECT_ERROR(run_check(reg, 6), PD_ERR_OP_FAILED,
                    "pf_check: pd_matmul: a is float32 and b is float64; expected one data type");
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, SignaturesThatDoNotMatchTheDeclarationsFailNamingTheOpAndParameter)
{
    pd_registry *reg = forms();
    PD_ASSERT(reg != NULL);
    int64_t n = 2;
    pd_tensor x = f32(1, &n, NULL), out = PD_TENSOR_UNDEFINED;
    pd_attr scale = pd_attr_of_int("scale", 2);
    PD_EXPECT_ERROR(run1(reg, "pf_wrong_attr", &x, &scale, 1, &out), PD_ERR_INVALID_MODULE,
                    "pf_wrong_attr: PD_KERNEL(kernel): parameter 2 takes float, but attr 'scale' "
                    "is declared int");
    const int32_t v[1] = {1};
    pd_attr vn[2] = {pd_attr_of_ints("v", v, 1), pd_attr_of_int("n", 2)};
    PD_EXPECT_ERROR(run1(reg, "pf_skipped_attr", &x, vn, 2, &out), PD_ERR_INVALID_MODULE,
                    "pf_skipped_attr: PD_INFER_SHAPE(infer_shape): parameter 2 takes int, but the "
                    "attr Paddle hands it there is 'v', declared std::vector<int>");
    PD_EXPECT_ERROR(run1(reg, "pf_wrong_inputs", &x, NULL, 0, &out), PD_ERR_INVALID_MODULE,
                    "pf_wrong_inputs: PD_KERNEL(kernel): parameter 2 takes a tensor input, but "
                    "the op declares 1 input");
    PD_EXPECT_ERROR(run1(reg, "pf_wrong_shapes", &x, NULL, 0, &out), PD_ERR_OP_FAILED,
                    "pf_wrong_shapes: the infer_shape function returned 2 items, but the op "
                    "declares 1 output");
    PD_EXPECT_ERROR(run1(reg, "pf_wrong_outputs", &x, NULL, 0, &out), PD_ERR_OP_FAILED,
                    "pf_wrong_outputs: the kernel returned 2 tensors, but the op declares 1 "
                    "output");
    PD_EXPECT(!pd_defined(&out));
    /* The texts the C++ builder wrote before the check moved into libpdext. */
    PD_EXPECT_ERROR(run1(reg, "pf_too_many_inputs", &x, NULL, 0, &out), PD_ERR_INVALID_MODULE,
                    "pf_too_many_inputs: the op declares 17 inputs; at most 16");
    PD_EXPECT_ERROR(run1(reg, "pf_optional_as_plain", &x, NULL, 0, &out), PD_ERR_INVALID_MODULE,
                    "pf_optional_as_plain: PD_KERNEL(kernel): parameter 2 is a plain input, but "
                    "input 'Y@OPTIONAL' is declared an optional input");
    const int64_t v64[1] = {4};
    pd_attr v_attr = pd_attr_of_int64s("v", v64, 1);
    PD_EXPECT_ERROR(run1(reg, "pf_shape_attr_short", &x, &v_attr, 1, &out), PD_ERR_INVALID_MODULE,
                    "pf_shape_attr_short: PD_INFER_SHAPE(infer_shape): parameter 2 takes an attr "
                    "(int), but the op hands it only 0 attrs (Paddle hands a shape function every "
                    "attr but the std::vector<int64_t> ones, in declared order)");
    PD_EXPECT_ERROR(run1(reg, "pf_kernel_without_attr", &x, NULL, 0, &out), PD_ERR_INVALID_MODULE,
                    "pf_kernel_without_attr: PD_KERNEL(kernel) takes 0 attrs, but the op "
                    "declares 1");
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, AMissingKernelOrAnUnknownInplaceInputRefusesTheModule)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_ERROR(pd_module_load(reg, pd_test_path("pp_no_kernel.so"), NULL),
                    PD_ERR_INVALID_MODULE, "op 'pp_no_kernel' (");
    PD_EXPECT_CONTAINS(pd_last_error(), "has no kernel");
    PD_EXPECT_ERROR(pd_module_load(reg, pd_test_path("pp_bad_inplace.so"), NULL),
                    PD_ERR_INVALID_MODULE, "op 'pp_bad_inplace' (");
    PD_EXPECT_CONTAINS(pd_last_error(),
                       "inplace map names input \"Z\", which is not a declared input");
    pd_registry_destroy(reg);
}

/* --- built by the JIT, linked into this program ----------------------------------------------- */

PD_TEST(PaddleFront, TheJitBuildsAPaddleSourceUnchanged)
{
    char cache[512], src[512];
    snprintf(cache, sizeof cache, "%s/paddle_jit_cache", PD_TEST_BINARY_DIR);
    mkdir(cache, 0700);
    setenv("PDEXT_CACHE_DIR", cache, 1);
    snprintf(src, sizeof src, "%s/examples/paddle/custom_relu_op.cc", PD_TEST_SOURCE_DIR);
    const char *sources[1] = {src};
    pd_jit_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.name = "paddle_relu";
    opts.sources = sources;
    opts.n_sources = 1;
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &opts, &m));
    int64_t n = 4;
    double vx[4] = {-1, 2, -3, 4};
    pd_tensor x = f32(1, &n, vx), out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "custom_relu", &x, NULL, 0, &out));
    for (int i = 0; i < 4; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), vx[i] > 0 ? vx[i] : 0, 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(PaddleFront, OpsLinkedIntoTheProgramRegisterAfterStaticInitialization)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_register_linked_ops(reg, &m));
    int64_t n = 3;
    double vx[3] = {1, 2, 3};
    pd_tensor x = f32(1, &n, vx), out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "pp_linked_twice", &x, NULL, 0, &out));
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), 2 * vx[i], 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

/* --- the pdext command ---------------------------------------------------------------------- */

PD_TEST(PaddleFront, PdextRunBuildsAndRunsAPaddleSource)
{
    char work[512], cmd[4096], path[600];
    snprintf(work, sizeof work, "%s/paddle_cli", PD_TEST_BINARY_DIR);
    mkdir(work, 0700);
    int64_t shape[2] = {2, 2};
    double vx[4] = {-1, 0.5, 2, -3};
    pd_tensor x = f32(2, shape, vx), out = PD_TENSOR_UNDEFINED;
    snprintf(path, sizeof path, "%s/x.npy", work);
    PD_ASSERT_OK(pd_npy_save(path, &x));
    snprintf(cmd, sizeof cmd,
             "PDEXT_CACHE_DIR='%s/cache' '%s' run '%s/examples/paddle/custom_relu_op.cc' --op "
             "custom_relu --input X='%s' --out '%s/out' >'%s/log' 2>&1",
             work, PDEXT_CMD, PD_TEST_SOURCE_DIR, path, work, work);
    int status = system(cmd);
    PD_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    snprintf(path, sizeof path, "%s/out/Out.npy", work);
    PD_ASSERT_OK(pd_npy_load(path, &out));
    PD_EXPECT(pd_same_shape(&out, &x));
    for (int i = 0; i < 4; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), vx[i] > 0 ? vx[i] : 0, 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
}

/* --- a .cu half ----------------------------------------------------------------------------- */

/* Whether the JIT can find nvcc (NVCC, CUDA_HOME/bin, PATH, /usr/local/cuda/bin). */
static bool have_nvcc(void)
{
    const char *env = getenv("NVCC"), *home = getenv("CUDA_HOME");
    char path[512];
    if (env && *env)
        return access(env, X_OK) == 0;
    snprintf(path, sizeof path, "%s/bin/nvcc", home ? home : "");
    if (home && *home && access(path, X_OK) == 0)
        return true;
    return system("command -v nvcc >/dev/null 2>&1") == 0 ||
           access("/usr/local/cuda/bin/nvcc", X_OK) == 0;
}

/* The relu's .cc and .cu built together with PADDLE_WITH_CUDA (where nvcc is installed; no
 * GPU needed): the module loads and its CPU path runs. Without nvcc there is nothing to build
 * and the test checks nothing more. */
PD_TEST(PaddleFront, TheReluBuildsWithItsCudaHalfWhereNvccIsInstalled)
{
    if (!have_nvcc())
        return;
    char cache[512], cc[512], cu[512];
    snprintf(cache, sizeof cache, "%s/paddle_jit_cache", PD_TEST_BINARY_DIR);
    mkdir(cache, 0700);
    setenv("PDEXT_CACHE_DIR", cache, 1);
    snprintf(cc, sizeof cc, "%s/examples/paddle/custom_relu_op.cc", PD_TEST_SOURCE_DIR);
    snprintf(cu, sizeof cu, "%s/examples/paddle/custom_relu_op.cu", PD_TEST_SOURCE_DIR);
    const char *sources[2] = {cc, cu}, *flags[1] = {"-DPADDLE_WITH_CUDA"};
    pd_jit_options opts;
    memset(&opts, 0, sizeof opts);
    opts.struct_size = sizeof opts;
    opts.name = "paddle_relu_cuda";
    opts.sources = sources;
    opts.n_sources = 2;
    opts.cxxflags = flags;
    opts.n_cxxflags = 1;
    opts.cuda_flags = flags;
    opts.n_cuda_flags = 1;
    pd_registry *reg = NULL;
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_ASSERT_OK(pd_jit_load(reg, &opts, &m));
    int64_t n = 3;
    double vx[3] = {-1, 0, 5};
    pd_tensor x = f32(1, &n, vx), out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(run1(reg, "custom_relu", &x, NULL, 0, &out));
    for (int i = 0; i < 3; ++i)
        PD_EXPECT_NEAR(rt_at(&out, i), vx[i] > 0 ? vx[i] : 0, 0);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}
