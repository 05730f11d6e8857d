/*
 * paddle_forms.cc - Paddle-style ops exercising every kernel signature form of the C++ front
 * (paddle_front_test.c runs them and checks the numbers): all ten attr types, optional and
 * optional-vector inputs, inplace inputs (plain and vector, void kernels), a Tensor* output
 * parameter with the legacy constructor, a std::vector<Tensor*> vector output, multiple
 * outputs with infer_dtype, an infer_shape answering -1, a double grad with a paddle::New
 * output, complex elements, tensor functions (broadcast arithmetic, matmul, sum, transpose,
 * comparisons, bitwise operators), and PD_CHECK / PADDLE_ENFORCE_* failures.
 */
#include <cmath>
#include <stdexcept>
#include <vector>

#include "paddle/extension.h"

/* --- every attr type: out[i] is a number made from attr i ------------------------------------ */
std::vector<paddle::Tensor>
AttrsForward(const paddle::Tensor &x, bool b, int i, float f, double d, int64_t i64,
             const std::string &s, const std::vector<int> &ints, const std::vector<float> &floats,
             std::vector<int64_t> int64s, const std::vector<std::string> &strings)
{
    auto out = paddle::empty({10}, paddle::DataType::FLOAT64, x.place());
    double *o = out.data<double>();
    o[0] = b ? 1 : 0;
    o[1] = i;
    o[2] = f;
    o[3] = d;
    o[4] = static_cast<double>(i64);
    o[5] = static_cast<double>(s.size());
    o[6] = std::accumulate(ints.begin(), ints.end(), 0.0);
    o[7] = std::accumulate(floats.begin(), floats.end(), 0.0);
    o[8] = std::accumulate(int64s.begin(), int64s.end(), 0.0);
    o[9] = 0;
    for (const auto &str : strings)
        o[9] += static_cast<double>(str.size());
    return {out};
}
std::vector<std::vector<int64_t>> AttrsInferShape(const std::vector<int64_t> &, bool, int)
{
    return {{10}};
}
std::vector<paddle::DataType> AttrsInferDtype(const paddle::DataType &)
{
    return {paddle::DataType::FLOAT64};
}
// clang-format off
PD_BUILD_OP(pf_attrs)
    .Inputs({"X"})
    .Outputs({"Out"})
    .Attrs({"b: bool", "i: int", "f: float", "d: double", "i64: int64_t",
                        "s: std::string", "ints: std::vector<int>", "floats: std::vector<float>",
                        "int64s: std::vector<int64_t>", "strings: std::vector<std::string>"})
                .SetKernelFn(PD_KERNEL(AttrsForward))
                .SetInferShapeFn(PD_INFER_SHAPE(AttrsInferShape))
                .SetInferDtypeFn(PD_INFER_DTYPE(AttrsInferDtype));
// clang-format on

/* --- Paddle's rule: a shape function is handed every attr but the std::vector<int64_t> ones:
 * out = x repeated `times` (times declared after a std::vector<int64_t> attr, which the shape
 * function is not handed) ------------------------------------------------------------------ */
std::vector<paddle::Tensor> RepeatForward(const paddle::Tensor &x,
                                          const std::vector<int64_t> &unused, int times)
{
    (void)unused;
    auto out = paddle::empty({x.numel() * times}, x.dtype(), x.place());
    for (int t = 0; t < times; ++t)
        std::copy(x.data<float>(), x.data<float>() + x.numel(), out.data<float>() + t * x.numel());
    return {out};
}
std::vector<std::vector<int64_t>> RepeatInferShape(const std::vector<int64_t> &x, int times)
{
    return {{std::accumulate(x.begin(), x.end(), int64_t(1), std::multiplies<int64_t>()) * times}};
}
// clang-format off
PD_BUILD_OP(pf_repeat)
    .Inputs({"X"})
    .Outputs({"Out"})
    .Attrs({"unused: std::vector<int64_t>", "times: int"})
    .SetKernelFn(PD_KERNEL(RepeatForward))
    .SetInferShapeFn(PD_INFER_SHAPE(RepeatInferShape));
// clang-format on

/* --- optional inputs: out = x + y (y absent: x), + the sum of the vector's items ------------- */
std::vector<paddle::Tensor> OptionalForward(const paddle::Tensor &x,
                                            const paddle::optional<paddle::Tensor> &y,
                                            const paddle::optional<std::vector<paddle::Tensor>> &zs)
{
    paddle::Tensor out = y ? x + *y : x + 0.0;
    if (zs.is_initialized())
        for (const auto &z : zs.get())
            out += z;
    return {out};
}
std::vector<std::vector<int64_t>>
OptionalInferShape(const std::vector<int64_t> &x, const paddle::optional<std::vector<int64_t>> &y,
                   const paddle::optional<std::vector<std::vector<int64_t>>> &zs)
{
    (void)y;
    (void)zs;
    return {x};
}
// clang-format off
PD_BUILD_OP(pf_optional)
    .Inputs({"X", paddle::Optional("Y"), paddle::Optional(paddle::Vec("Zs"))})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(OptionalForward))
    .SetInferShapeFn(PD_INFER_SHAPE(OptionalInferShape));
// clang-format on

/* --- inplace: x += y, a void kernel writing into its input ---------------------------------- */
void AddInplace(paddle::Tensor &x, const paddle::Tensor &y)
{
    float *px = x.data<float>();
    const float *py = y.data<float>();
    for (int64_t i = 0; i < x.numel(); ++i)
        px[i] += py[i];
}
// clang-format off
PD_BUILD_OP(pf_add_inplace)
    .Inputs({"X", "Y"})
    .Outputs({"Out"})
    .SetInplaceMap({{"X", "Out"}})
    .SetKernelFn(PD_KERNEL(AddInplace));
// clang-format on

/* Each tensor of the vector doubled in place. */
void DoubleInplace(std::vector<paddle::Tensor> &xs)
{
    for (auto &x : xs)
        for (int64_t i = 0; i < x.numel(); ++i)
            x.data<float>()[i] *= 2;
}
// clang-format off
PD_BUILD_OP(pf_vec_inplace)
    .Inputs({paddle::Vec("X")})
    .Outputs({paddle::Vec("Out")})
    .SetInplaceMap({{paddle::Vec("X"), paddle::Vec("Out")}})
    .SetKernelFn(PD_KERNEL(DoubleInplace));
// clang-format on

/* --- a Tensor* output, made with the legacy constructor's steps ----------------------------- */
void SquareInto(const paddle::Tensor &x, paddle::Tensor *out)
{
    out->reshape(x.shape());
    float *o = out->mutable_data<float>(x.place());
    for (int64_t i = 0; i < x.numel(); ++i)
        o[i] = x.data<float>()[i] * x.data<float>()[i];
}
PD_BUILD_OP(pf_out_param).Inputs({"X"}).Outputs({"Out"}).SetKernelFn(PD_KERNEL(SquareInto));

std::vector<paddle::Tensor> LegacyScale(const paddle::Tensor &x)
{
    paddle::Tensor out(paddle::PlaceType::kCPU, x.shape());
    PD_DISPATCH_FLOATING_TYPES(x.type(), "LegacyScale", ([&] {
                                   data_t *o = out.mutable_data<data_t>(x.place());
                                   for (int64_t i = 0; i < x.size(); ++i)
                                       o[i] = x.data<data_t>()[i] * static_cast<data_t>(3);
                               }));
    return {out};
}
PD_BUILD_OP(pf_legacy).Inputs({"X"}).Outputs({"Out"}).SetKernelFn(PD_KERNEL(LegacyScale));

/* --- multiple outputs: x + 1, x as int32, and the element count as int64 -------------------- */
std::vector<paddle::Tensor> MultiForward(const paddle::Tensor &x)
{
    auto plus = x + 1.0;
    auto as_int = paddle::experimental::cast(x, paddle::DataType::INT32);
    auto count = paddle::full({1}, static_cast<double>(x.numel()), paddle::DataType::INT64);
    return {plus, as_int, count};
}
std::vector<std::vector<int64_t>> MultiInferShape(const std::vector<int64_t> &x)
{
    return {x, x, {1}};
}
std::vector<paddle::DataType> MultiInferDtype(const paddle::DataType &x)
{
    return {x, paddle::DataType::INT32, paddle::DataType::INT64};
}
// clang-format off
PD_BUILD_OP(pf_multi)
    .Inputs({"X"})
    .Outputs({"Plus", "AsInt", "Count"})
    .SetKernelFn(PD_KERNEL(MultiForward))
    .SetInferShapeFn(PD_INFER_SHAPE(MultiInferShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(MultiInferDtype));
// clang-format on

/* --- -1 in infer_shape: the positive elements, a count known only to the kernel ------------- */
std::vector<paddle::Tensor> PositivesForward(const paddle::Tensor &x)
{
    std::vector<float> kept;
    for (int64_t i = 0; i < x.numel(); ++i)
        if (x.data<float>()[i] > 0)
            kept.push_back(x.data<float>()[i]);
    auto out = paddle::empty({static_cast<int64_t>(kept.size())}, x.dtype(), x.place());
    std::copy(kept.begin(), kept.end(), out.data<float>());
    return {out};
}
std::vector<std::vector<int64_t>> PositivesInferShape(const std::vector<int64_t> &)
{
    return {{-1}};
}
// clang-format off
PD_BUILD_OP(pf_positives)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(PositivesForward))
    .SetInferShapeFn(PD_INFER_SHAPE(PositivesInferShape));
// clang-format on

// A negative dim other than -1 is a bug in the infer function: refused, naming the op.
std::vector<std::vector<int64_t>> BadDimInferShape(const std::vector<int64_t> &)
{
    return {{2, -7}};
}
// clang-format off
PD_BUILD_OP(pf_bad_dim)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(PositivesForward))
    .SetInferShapeFn(PD_INFER_SHAPE(BadDimInferShape));
// clang-format on

/* --- complex: the conjugate of a complex64 tensor, through .real / .imag ---------------------- */
template <class T> T ConjOf(T v) { return v; }
template <class T> paddle::complex<T> ConjOf(paddle::complex<T> v)
{
    return paddle::complex<T>(v.real, -v.imag);
}
std::vector<paddle::Tensor> ConjForward(const paddle::Tensor &x)
{
    auto out = paddle::empty_like(x);
    PD_DISPATCH_FLOATING_AND_COMPLEX_TYPES(x.type(), "ConjForward", ([&] {
                                               const data_t *in = x.data<data_t>();
                                               data_t *o = out.data<data_t>();
                                               for (int64_t i = 0; i < x.numel(); ++i)
                                                   o[i] = ConjOf(in[i]);
                                           }));
    return {out};
}
PD_BUILD_OP(pf_conj).Inputs({"X"}).Outputs({"Out"}).SetKernelFn(PD_KERNEL(ConjForward));

/* --- tensor functions ------------------------------------------------------------------------
 * X [2,3] float32, Bias [3], Y [3,2], Bits [4] int32 (made in the kernel):
 *   Affine = (X + Bias) * 2 - 1       Mm = matmul(X, Y)        Sum0 = sum(X, axis 0)
 *   T = transpose(X).contiguous()     Gt = X > 0 (bool)        Bits = [6,5,3,~0] & | ^ ~ mixes */
std::vector<paddle::Tensor> FunctionsForward(const paddle::Tensor &x, const paddle::Tensor &bias,
                                             const paddle::Tensor &y)
{
    auto affine = (x + bias) * 2.0 - 1.0;
    auto mm = paddle::matmul(x, y);
    auto sum0 = paddle::experimental::sum(x, {0});
    auto tv = paddle::experimental::transpose(x, {1, 0});
    PD_CHECK(!tv.is_contiguous(), "a transpose is a strided view");
    auto t = tv.contiguous();
    auto gt = x > 0.0;
    auto a = paddle::full({4}, 6, paddle::DataType::INT32);
    auto b = paddle::full({4}, 3, paddle::DataType::INT32);
    auto bits = ((a & b) | (a ^ b)) + (~b);
    auto u8 = ~paddle::full({1}, 5, paddle::DataType::UINT8);
    auto u64 = ~paddle::full({1}, 5, paddle::DataType::UINT64);
    PD_CHECK(u8.data<uint8_t>()[0] == 250 && u64.data<uint64_t>()[0] == ~uint64_t{5},
             "~ on unsigned types sets the bits that were clear");
    return {affine, mm, sum0, t, gt, bits};
}
// clang-format off
PD_BUILD_OP(pf_functions)
    .Inputs({"X", "Bias", "Y"})
    .Outputs({"Affine", "Mm", "Sum0", "T", "Gt", "Bits"})
    .SetKernelFn(PD_KERNEL(FunctionsForward));
// clang-format on

/* --- a vector output: the rows of X as views, their count from infer_shape ------------------ */
std::vector<paddle::Tensor> SplitRows(const paddle::Tensor &x)
{
    std::vector<paddle::Tensor> rows;
    for (int64_t r = 0; r < x.shape()[0]; ++r)
        rows.push_back(x.slice(r, r + 1));
    return rows;
}
std::vector<std::vector<int64_t>> SplitRowsInferShape(const std::vector<int64_t> &x)
{
    return std::vector<std::vector<int64_t>>(static_cast<size_t>(x[0]), {1, x[1]});
}
// clang-format off
PD_BUILD_OP(pf_split)
    .Inputs({"X"})
    .Outputs({paddle::Vec("Out")})
    .SetKernelFn(PD_KERNEL(SplitRows))
    .SetInferShapeFn(PD_INFER_SHAPE(SplitRowsInferShape));
// clang-format on

/* Two inputs (no default inference mirrors one into the vector output) and no infer
 * function: the kernel's tensors decide the vector's length. */
std::vector<paddle::Tensor> SplitBoth(const paddle::Tensor &x, const paddle::Tensor &y)
{
    std::vector<paddle::Tensor> rows = SplitRows(x), more = SplitRows(y);
    rows.insert(rows.end(), more.begin(), more.end());
    return rows;
}
// clang-format off
PD_BUILD_OP(pf_split_both)
    .Inputs({"X", "Y"})
    .Outputs({paddle::Vec("Out")})
    .SetKernelFn(PD_KERNEL(SplitBoth));
// clang-format on

/* A vector output through std::vector<paddle::Tensor*>: item k = X * (k + 1), as many items as
 * infer_shape gave (attr n), and one plain output through Tensor*. */
void ScaledCopies(const paddle::Tensor &x, int n, std::vector<paddle::Tensor *> outs,
                  paddle::Tensor *count)
{
    PD_CHECK(static_cast<int>(outs.size()) == n, "outs has ", outs.size(), " items");
    for (size_t k = 0; k < outs.size(); ++k)
        *outs[k] = x * static_cast<double>(k + 1);
    *count = paddle::full({1}, static_cast<double>(outs.size()), paddle::DataType::INT64);
}
std::vector<std::vector<int64_t>> ScaledCopiesInferShape(const std::vector<int64_t> &x, int n)
{
    std::vector<std::vector<int64_t>> shapes(static_cast<size_t>(n), x);
    shapes.push_back({1});
    return shapes;
}
// clang-format off
PD_BUILD_OP(pf_scaled_copies)
    .Inputs({"X"})
    .Outputs({paddle::Vec("Out"), "Count"})
    .Attrs({"n: int"})
    .SetKernelFn(PD_KERNEL(ScaledCopies))
    .SetInferShapeFn(PD_INFER_SHAPE(ScaledCopiesInferShape));
// clang-format on

/* --- tanh with a double grad whose first output is paddle::New(paddle::Grad("Out")) ---------- */
std::vector<paddle::Tensor> TanhForward(const paddle::Tensor &x)
{
    auto out = paddle::empty_like(x);
    PD_DISPATCH_FLOATING_TYPES(x.type(), "tanh_forward", ([&] {
                                   for (int64_t i = 0; i < x.numel(); ++i)
                                       out.data<data_t>()[i] = std::tanh(x.data<data_t>()[i]);
                               }));
    return {out};
}
/* dx = dout * (1 - out^2) */
std::vector<paddle::Tensor> TanhBackward(const paddle::Tensor &out, const paddle::Tensor &dout)
{
    return {dout * (1.0 - out * out)};
}
/* dout_new = -2 * dout * out * ddx, ddout = ddx * (1 - out^2) */
std::vector<paddle::Tensor> TanhDoubleBackward(const paddle::Tensor &out, const paddle::Tensor &ddx,
                                               const paddle::Tensor &dout)
{
    return {-2.0 * dout * out * ddx, ddx * (1.0 - out * out)};
}
std::vector<std::vector<int64_t>> TanhDoubleBackwardInferShape(const std::vector<int64_t> &,
                                                               const std::vector<int64_t> &,
                                                               const std::vector<int64_t> &dout)
{
    return {dout, dout};
}
// clang-format off
PD_BUILD_OP(pf_tanh)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(TanhForward));

PD_BUILD_GRAD_OP(pf_tanh)
    .Inputs({"Out", paddle::Grad("Out")})
    .Outputs({paddle::Grad("X")})
    .SetKernelFn(PD_KERNEL(TanhBackward));

PD_BUILD_DOUBLE_GRAD_OP(pf_tanh)
    .Inputs({"Out", paddle::Grad(paddle::Grad("X")), paddle::Grad("Out")})
    .Outputs({paddle::New(paddle::Grad("Out")), paddle::Grad(paddle::Grad("Out"))})
    .SetKernelFn(PD_KERNEL(TanhDoubleBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(TanhDoubleBackwardInferShape));
// clang-format on

/* --- errors ------------------------------------------------------------------------------- */
std::vector<paddle::Tensor> CheckForward(const paddle::Tensor &x, int64_t mode)
{
    if (mode == 0)
        PD_CHECK(x.numel() > 100, "x has ", x.numel(), " elements of ", x.dtype(), " on ",
                 x.place());
    if (mode == 1)
        PD_CHECK(x.numel() > 100);
    if (mode == 2)
        PD_THROW("mode ", mode, " is refused");
    if (mode == 3)
        throw std::runtime_error("a runtime_error from the kernel");
    if (mode == 4)
        (void)x.data<int>(); /* x is float32 */
    if (mode == 5)
        PD_DISPATCH_FLOATING_TYPES(paddle::DataType::INT32, "check_dispatch", ([&] {}));
    if (mode == 6)
        (void)paddle::matmul(x, x.cast(paddle::DataType::FLOAT64));
    /* Newer Paddle sources' PADDLE_ENFORCE_* with phi:: / common::errors builders. */
    const float *no_data = nullptr;
    PADDLE_ENFORCE_EQ(x.is_cpu(), true, phi::errors::Fatal("x must be a CPU Tensor."));
    if (mode == 8)
        PADDLE_ENFORCE_GT(x.numel(), 100,
                          phi::errors::InvalidArgument("x has too few "
                                                       "elements: %d",
                                                       4));
    if (mode == 9)
        PADDLE_ENFORCE_EQ(x.numel() > 100, common::errors::Fatal("builder in b's place"));
    if (mode == 10) /* as one Paddle source writes it: no parentheses around the text */
        PADDLE_ENFORCE_NE(no_data, nullptr, phi::errors::InvalidArgument "no_data is nullptr.");
    if (mode == 11)
        PADDLE_THROW(common::errors::Unimplemented("mode \"11\" is not implemented"));
    if (mode == 12)
        PADDLE_ENFORCE_NOT_NULL(no_data);
    return {x + 0.0};
}
// clang-format off
PD_BUILD_OP(pf_check)
    .Inputs({"X"})
    .Outputs({"Out"})
    .Attrs({"mode: int64_t"})
    .SetKernelFn(PD_KERNEL(CheckForward));
// clang-format on

/* A kernel that takes float for an attr declared int. */
std::vector<paddle::Tensor> WrongAttrType(const paddle::Tensor &x, float scale)
{
    return {x * static_cast<double>(scale)};
}
// clang-format off
PD_BUILD_OP(pf_wrong_attr)
    .Inputs({"X"})
    .Outputs({"Out"})
    .Attrs({"scale: int"})
    .SetKernelFn(PD_KERNEL(WrongAttrType));
// clang-format on

/* A shape function skipping a vector attr (Paddle hands it `v` first, which is no int). */
std::vector<std::vector<int64_t>> SkipsAnAttr(const std::vector<int64_t> &x, int n)
{
    return {{x[0] * n}};
}
std::vector<paddle::Tensor> TakesVAndN(const paddle::Tensor &x, const std::vector<int> &, int)
{
    return {x + 0.0};
}
// clang-format off
PD_BUILD_OP(pf_skipped_attr)
    .Inputs({"X"})
    .Outputs({"Out"})
    .Attrs({"v: std::vector<int>", "n: int"})
    .SetKernelFn(PD_KERNEL(TakesVAndN))
    .SetInferShapeFn(PD_INFER_SHAPE(SkipsAnAttr));
// clang-format on

/* A kernel taking two tensors for one declared input. */
std::vector<paddle::Tensor> TwoInputs(const paddle::Tensor &x, const paddle::Tensor &y)
{
    return {x + y};
}
PD_BUILD_OP(pf_wrong_inputs).Inputs({"X"}).Outputs({"Out"}).SetKernelFn(PD_KERNEL(TwoInputs));

/* An infer_shape function answering two shapes for one output. */
std::vector<paddle::Tensor> Identity(const paddle::Tensor &x) { return {x + 0.0}; }
std::vector<std::vector<int64_t>> TwoShapes(const std::vector<int64_t> &x) { return {x, x}; }
// clang-format off
PD_BUILD_OP(pf_wrong_shapes)
    .Inputs({"X"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(Identity))
    .SetInferShapeFn(PD_INFER_SHAPE(TwoShapes));
// clang-format on

/* A kernel returning two tensors for one output. */
std::vector<paddle::Tensor> TwoOutputs(const paddle::Tensor &x) { return {x, x}; }
PD_BUILD_OP(pf_wrong_outputs).Inputs({"X"}).Outputs({"Out"}).SetKernelFn(PD_KERNEL(TwoOutputs));

/* Declarations the runtime's check (pd_api.paddle_op_check) refuses, one message each. */
/* Seventeen inputs: one more than pd_op_def holds (optional ones, so that a call binds). */
// clang-format off
PD_BUILD_OP(pf_too_many_inputs)
    .Inputs({"X", "I1@OPTIONAL", "I2@OPTIONAL", "I3@OPTIONAL", "I4@OPTIONAL", "I5@OPTIONAL",
             "I6@OPTIONAL", "I7@OPTIONAL", "I8@OPTIONAL", "I9@OPTIONAL", "I10@OPTIONAL",
             "I11@OPTIONAL", "I12@OPTIONAL", "I13@OPTIONAL", "I14@OPTIONAL", "I15@OPTIONAL",
             "I16@OPTIONAL"})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(Identity));
// clang-format on

/* A plain tensor parameter for an optional input. */
std::vector<std::vector<int64_t>>
ShapeOfXAndOptionalY(const std::vector<int64_t> &x, const paddle::optional<std::vector<int64_t>> &)
{
    return {x};
}
std::vector<paddle::DataType> DtypeOfXAndOptionalY(paddle::DataType x,
                                                   const paddle::optional<paddle::DataType> &)
{
    return {x};
}
// clang-format off
PD_BUILD_OP(pf_optional_as_plain)
    .Inputs({"X", paddle::Optional("Y")})
    .Outputs({"Out"})
    .SetKernelFn(PD_KERNEL(TwoInputs))
    .SetInferShapeFn(PD_INFER_SHAPE(ShapeOfXAndOptionalY))
    .SetInferDtypeFn(PD_INFER_DTYPE(DtypeOfXAndOptionalY));
// clang-format on

/* A shape function taking an attr where Paddle hands it none (its only attr is an int64
 * vector). */
std::vector<paddle::Tensor> TakesV(const paddle::Tensor &x, const std::vector<int64_t> &)
{
    return {x + 0.0};
}
std::vector<std::vector<int64_t>> ShapeTakingAnInt(const std::vector<int64_t> &x, int)
{
    return {x};
}
// clang-format off
PD_BUILD_OP(pf_shape_attr_short)
    .Inputs({"X"})
    .Outputs({"Out"})
    .Attrs({"v : std::vector< int64_t >"})
    .SetKernelFn(PD_KERNEL(TakesV))
    .SetInferShapeFn(PD_INFER_SHAPE(ShapeTakingAnInt));
// clang-format on

/* A kernel leaving out the declared attr. */
// clang-format off
PD_BUILD_OP(pf_kernel_without_attr)
    .Inputs({"X"})
    .Outputs({"Out"})
    .Attrs({"n: int = 3"})
    .SetKernelFn(PD_KERNEL(Identity));
// clang-format on
