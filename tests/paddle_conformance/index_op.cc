// Paddle's indexing and shape functions, written against Paddle's custom-op API and built by
// both real Paddle and pdext (tests/python/test_paddle_conformance.py compares every output).
// X is a [3, 4] float tensor of distinct values, Index a 1-D int64 tensor of row numbers.
#include <vector>

#include "paddle/extension.h"

std::vector<paddle::Tensor> IndexForward(const paddle::Tensor &x, const paddle::Tensor &index)
{
    namespace ex = paddle::experimental;
    auto sorted = paddle::argsort(x, -1, false);
    auto sorted_desc = paddle::argsort(x, 0, true);
    auto top = ex::topk(x, 2, 1, true, true);
    auto parts = paddle::split(x, {1, -1}, 1);
    return {std::get<0>(sorted),
            std::get<1>(sorted),
            std::get<0>(sorted_desc),
            std::get<1>(sorted_desc),
            std::get<0>(top),
            std::get<1>(top),
            paddle::gather(x, index),
            paddle::gather(x, index, 1),
            paddle::concat({x, x * 2.0}, 1),
            paddle::stack({x, x + 1.0}, 1),
            parts[0],
            parts[1],
            paddle::flatten(paddle::unsqueeze(x, {0}), 0, 2),
            ex::squeeze(paddle::unsqueeze(x, {1})),
            paddle::tile(x, {2, 1}),
            paddle::flip(x, {0, 1})};
}
PD_BUILD_OP(conf_index)
    .Inputs({"X", "Index"})
    .Outputs({"Sorted", "SortIdx", "SortedDesc", "SortDescIdx", "Top", "TopIdx", "Gather0",
              "Gather1", "Concat", "Stack", "Split0", "Split1", "Flatten", "Squeeze", "Tile",
              "Flip"})
    .SetKernelFn(PD_KERNEL(IndexForward));

std::vector<paddle::Tensor> Index2Forward(const paddle::Tensor &x, const paddle::Tensor &index)
{
    namespace ex = paddle::experimental;
    auto positive = paddle::greater_than(x, ex::zeros_like(x));
    return {paddle::where(positive, x, x * -1.0),
            paddle::tril(x, 0),
            ex::triu(x, 1),
            paddle::one_hot(index, 5),
            ex::argmax(x, 1, false, false, paddle::DataType::INT64),
            ex::argmin(x, 0, true, false, paddle::DataType::INT32),
            ex::index_select(x, index, 0)};
}
PD_BUILD_OP(conf_index2)
    .Inputs({"X", "Index"})
    .Outputs({"Where", "Tril", "Triu", "OneHot", "Argmax", "Argmin", "IndexSelect"})
    .SetKernelFn(PD_KERNEL(Index2Forward));
