// Paddle's attr rules, written against Paddle's custom-op API and built by both real Paddle
// and pdext (tests/python/test_paddle_conformance.py): every attr type reaches the kernel in
// declared order, a shape function is handed every attr but the std::vector<int64_t> ones,
// a dtype function every attr. Out = x * (a number made from all the attrs); Shape = a tensor
// whose shape comes from the shape function's attrs.
#include <numeric>
#include <string>
#include <vector>

#include "paddle/extension.h"

static double attr_sum(bool b, int i, float f, int64_t i64, const std::string &s,
                       const std::vector<int> &iv, const std::vector<float> &fv,
                       const std::vector<int64_t> &i64v, const std::vector<std::string> &sv)
{
    double t = (b ? 1 : 0) + i + f + static_cast<double>(i64) + static_cast<double>(s.size());
    t += std::accumulate(iv.begin(), iv.end(), 0.0) + std::accumulate(fv.begin(), fv.end(), 0.0);
    t += std::accumulate(i64v.begin(), i64v.end(), 0.0);
    for (const auto &x : sv)
        t += static_cast<double>(x.size());
    return t;
}

std::vector<paddle::Tensor> AttrsForward(const paddle::Tensor &x, bool b, int i, float f,
                                         int64_t i64, const std::string &s,
                                         const std::vector<int> &iv, const std::vector<float> &fv,
                                         const std::vector<int64_t> &i64v,
                                         const std::vector<std::string> &sv)
{
    auto out = paddle::empty_like(x);
    double k = attr_sum(b, i, f, i64, s, iv, fv, i64v, sv);
    PD_DISPATCH_FLOATING_TYPES(x.type(), "attrs_forward", ([&] {
                                   for (int64_t j = 0; j < x.numel(); ++j)
                                       out.data<data_t>()[j] = static_cast<data_t>(
                                           x.data<data_t>()[j] * k);
                               }));
    // A tensor of shape [i, iv.size(), sv.size()], as the shape function says.
    auto shaped =
        paddle::full({i, static_cast<int64_t>(iv.size()), static_cast<int64_t>(sv.size())},
                     static_cast<double>(fv.size()), paddle::DataType::FLOAT32, paddle::CPUPlace());
    return {out, shaped};
}

// No std::vector<int64_t> attr: Paddle does not hand it to shape functions.
std::vector<std::vector<int64_t>> AttrsInferShape(const std::vector<int64_t> &x, bool, int i, float,
                                                  int64_t, const std::string &,
                                                  const std::vector<int> &iv,
                                                  const std::vector<float> &,
                                                  const std::vector<std::string> &sv)
{
    return {x, {i, static_cast<int64_t>(iv.size()), static_cast<int64_t>(sv.size())}};
}

// Dtype functions get every attr, std::vector<int64_t> included (a leading run of them here).
std::vector<paddle::DataType> AttrsInferDtype(const paddle::DataType &x, bool, int, float, int64_t,
                                              const std::string &, const std::vector<int> &,
                                              const std::vector<float> &,
                                              const std::vector<int64_t> &)
{
    return {x, paddle::DataType::FLOAT32};
}

PD_BUILD_OP(conf_attrs)
                .Inputs({"X"})
                .Outputs({"Out", "Shape"})
                .Attrs({"b: bool", "i: int", "f: float", "i64: int64_t", "s: std::string",
                        "iv: std::vector<int>", "fv: std::vector<float>",
                        "i64v: std::vector<int64_t>", "sv: std::vector<std::string>"})
                .SetKernelFn(PD_KERNEL(AttrsForward))
                .SetInferShapeFn(PD_INFER_SHAPE(AttrsInferShape))
                .SetInferDtypeFn(PD_INFER_DTYPE(AttrsInferDtype));
