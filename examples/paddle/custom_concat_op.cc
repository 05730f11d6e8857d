/*
 * custom_concat_op.cc - concat of a vector input along an int64_t attr `axis`, written against
 * paddle/extension.h as Paddle's custom-op tests write it: a paddle::Vec input, an infer
 * function over a vector of shapes and the attr, and the grad op splitting Out@GRAD back into
 * one gradient per input (a vector output).
 */
#include <numeric>
#include <vector>

#include "paddle/extension.h"

/* The axis, made non-negative, for tensors of `rank` dims. */
static int64_t ComputeAxis(int64_t axis, int64_t rank)
{
    PD_CHECK(axis >= -rank && axis < rank, "The axis is expected to be in range of [", -rank, ", ",
             rank, "), but got ", axis);
    return axis < 0 ? axis + rank : axis;
}

/* Rows (the product of dims before axis) and the elements of one row after it. */
static void OuterInner(const std::vector<int64_t> &shape, int64_t axis, int64_t *outer,
                       int64_t *inner)
{
    *outer = std::accumulate(shape.begin(), shape.begin() + axis, int64_t(1),
                             std::multiplies<int64_t>());
    *inner = std::accumulate(shape.begin() + axis + 1, shape.end(), int64_t(1),
                             std::multiplies<int64_t>());
}

std::vector<paddle::Tensor> ConcatForward(const std::vector<paddle::Tensor> &inputs, int64_t axis)
{
    PD_CHECK(!inputs.empty(), "The number of input tensors must be at least 1.");
    int64_t rank = static_cast<int64_t>(inputs[0].shape().size());
    int64_t ax = ComputeAxis(axis, rank);
    std::vector<int64_t> out_shape = inputs[0].shape();
    out_shape[ax] = 0;
    for (const auto &t : inputs)
        out_shape[ax] += t.shape()[ax];
    auto out = paddle::empty(out_shape, inputs[0].dtype(), inputs[0].place());
    int64_t outer, inner;
    OuterInner(out_shape, ax, &outer, &inner);
    PD_DISPATCH_FLOATING_AND_INTEGRAL_TYPES(inputs[0].type(), "ConcatForward", ([&] {
                                                data_t *dst = out.data<data_t>();
                                                int64_t out_row = out_shape[ax] * inner, col = 0;
                                                for (const auto &t : inputs) {
                                                    int64_t row = t.shape()[ax] * inner;
                                                    const data_t *src = t.data<data_t>();
                                                    for (int64_t o = 0; o < outer; ++o)
                                                        std::copy(src + o * row,
                                                                  src + (o + 1) * row,
                                                                  dst + o * out_row + col);
                                                    col += row;
                                                }
                                            }));
    return {out};
}

std::vector<paddle::Tensor> ConcatBackward(const std::vector<paddle::Tensor> &inputs,
                                           const paddle::Tensor &grad_out, int64_t axis)
{
    int64_t ax = ComputeAxis(axis, static_cast<int64_t>(grad_out.shape().size()));
    std::vector<paddle::Tensor> grads;
    int64_t outer, inner;
    OuterInner(grad_out.shape(), ax, &outer, &inner);
    int64_t out_row = grad_out.shape()[ax] * inner, col = 0;
    for (const auto &t : inputs) {
        auto g = paddle::empty_like(t);
        int64_t row = t.shape()[ax] * inner;
        PD_DISPATCH_FLOATING_AND_INTEGRAL_TYPES(grad_out.type(), "ConcatBackward", ([&] {
                                                    const data_t *src = grad_out.data<data_t>();
                                                    data_t *dst = g.data<data_t>();
                                                    for (int64_t o = 0; o < outer; ++o)
                                                        std::copy(src + o * out_row + col,
                                                                  src + o * out_row + col + row,
                                                                  dst + o * row);
                                                }));
        col += row;
        grads.push_back(g);
    }
    return grads;
}

std::vector<std::vector<int64_t>>
ConcatInferShape(const std::vector<std::vector<int64_t>> &input_shapes, const int64_t &axis)
{
    int64_t ax = ComputeAxis(axis, static_cast<int64_t>(input_shapes[0].size()));
    std::vector<int64_t> out = input_shapes[0];
    for (size_t i = 1; i < input_shapes.size(); ++i)
        out[ax] += input_shapes[i][ax];
    return {out};
}

std::vector<std::vector<int64_t>>
ConcatBackwardInferShape(const std::vector<std::vector<int64_t>> &input_shapes,
                         const std::vector<int64_t> &grad_shape, const int64_t &axis)
{
    (void)grad_shape;
    (void)axis;
    return input_shapes;
}

std::vector<paddle::DataType> ConcatInferDtype(const std::vector<paddle::DataType> &dtypes)
{
    return {dtypes[0]};
}

// clang-format off
PD_BUILD_OP(custom_concat)
    .Inputs({paddle::Vec("X")})
    .Outputs({"Out"})
    .Attrs({"axis: int64_t"})
    .SetKernelFn(PD_KERNEL(ConcatForward))
    .SetInferShapeFn(PD_INFER_SHAPE(ConcatInferShape))
    .SetInferDtypeFn(PD_INFER_DTYPE(ConcatInferDtype));
// clang-format on

// clang-format off
PD_BUILD_GRAD_OP(custom_concat)
    .Inputs({paddle::Vec("X"), paddle::Grad("Out")})
    .Outputs({paddle::Grad(paddle::Vec("X"))})
    .Attrs({"axis: int64_t"})
    .SetKernelFn(PD_KERNEL(ConcatBackward))
    .SetInferShapeFn(PD_INFER_SHAPE(ConcatBackwardInferShape));
// clang-format on
