// MindSpore CustomOpBuilder sources as their users write them (PyboostRunner subclasses,
// ms::Tensor, Call<N>, PYBIND11_MODULE), compiled unchanged by pdext for
// tests/python/test_ms_extension.py: a relu with a workspace, a two-output op, in-place and
// strided ops, the tensor-making functions, gathering and tiling, and ops that fail in each
// stage.
#include "ms_extension/api.h"

// relu through a scratch copy of its input: the workspace must be real, sized, and valid.
class ReluWs : public ms::pynative::PyboostRunner {
public:
    using PyboostRunner::PyboostRunner;
    size_t CalcWorkspace() override { return inputs()[0].numel() * sizeof(float); }
    void LaunchKernel() override
    {
        const auto &x = inputs()[0];
        float *ws = static_cast<float *>(workspace_ptr());
        if (ws == nullptr)
            throw std::runtime_error("no workspace");
        const float *in = static_cast<const float *>(x.GetDataPtr());
        for (size_t i = 0; i < x.numel(); ++i)
            ws[i] = in[i] > 0 ? in[i] : 0.0f;
        float *out = static_cast<float *>(outputs()[0].GetDataPtr());
        std::memcpy(out, ws, x.numel() * sizeof(float));
    }
};
ms::Tensor relu_eval(const ms::Tensor &x)
{
    if (x.data_type() != ms::TypeId::kNumberTypeFloat32)
        throw std::invalid_argument("relu_ws takes float32, got TypeId " +
                                    std::to_string(static_cast<int>(x.data_type())));
    auto out = ms::Tensor(x.data_type(), x.shape());
    auto runner = std::make_shared<ReluWs>("ReluWs");
    runner->Run({x}, {out});
    return out;
}
py::object relu_ws(const ms::Tensor &x)
{
    return ms::pynative::PyboostRunner::Call<1>(relu_eval, x);
}

// Two outputs: sum and difference of float64 tensors.
class SumDiff : public ms::pynative::PyboostRunner {
public:
    using PyboostRunner::PyboostRunner;
    void LaunchKernel() override
    {
        const double *a = static_cast<const double *>(inputs()[0].GetDataPtr());
        const double *b = static_cast<const double *>(inputs()[1].GetDataPtr());
        double *s = static_cast<double *>(outputs()[0].GetDataPtr());
        double *d = static_cast<double *>(outputs()[1].GetDataPtr());
        for (size_t i = 0; i < inputs()[0].numel(); ++i) {
            s[i] = a[i] + b[i];
            d[i] = a[i] - b[i];
        }
    }
    static std::vector<ms::Tensor> Eval(const ms::Tensor &a, const ms::Tensor &b)
    {
        auto s = ms::Tensor(a.data_type(), a.shape());
        auto d = ms::Tensor(a.data_type(), a.shape());
        std::make_shared<SumDiff>("SumDiff")->Run({a, b}, {s, d});
        return {s, d};
    }
};
py::object sum_diff(const ms::Tensor &a, const ms::Tensor &b)
{
    return ms::pynative::PyboostRunner::Call<2>(SumDiff::Eval, a, b);
}
// Call<N> with N other than what the function returns.
py::object sum_diff_bad_n(const ms::Tensor &a, const ms::Tensor &b)
{
    return ms::pynative::PyboostRunner::Call<3>(SumDiff::Eval, a, b);
}

// In place: x *= scale, the input passed again as the output; Call<0> returns None.
class ScaleInplace : public ms::pynative::PyboostRunner {
public:
    ScaleInplace(const std::string &name, double scale) : PyboostRunner(name), scale_(scale) {}
    void LaunchKernel() override
    {
        float *p = static_cast<float *>(outputs()[0].GetDataPtr());
        for (size_t i = 0; i < outputs()[0].numel(); ++i)
            p[i] = static_cast<float>(p[i] * scale_);
    }

private:
    double scale_;
};
void scale_eval(const ms::Tensor &x, double scale)
{
    std::make_shared<ScaleInplace>("ScaleInplace", scale)->Run({x}, {x});
}
py::object scale_(const ms::Tensor &x, double scale)
{
    return ms::pynative::PyboostRunner::Call<0>(scale_eval, x, scale);
}

// Reads its input through the strides (2-d float32) when asked to keep them; reports
// whether the kernel saw a contiguous tensor in element [0] of a second output.
class StridedCopy : public ms::pynative::PyboostRunner {
public:
    using PyboostRunner::PyboostRunner;
    void LaunchKernel() override
    {
        const auto &x = inputs()[0];
        auto st = x.stride();
        const float *in = static_cast<const float *>(x.GetDataPtr());
        float *out = static_cast<float *>(outputs()[0].GetDataPtr());
        int64_t rows = x.shape()[0], cols = x.shape()[1];
        for (int64_t i = 0; i < rows; ++i)
            for (int64_t j = 0; j < cols; ++j)
                out[i * cols + j] = in[i * st[0] + j * st[1]];
        static_cast<int32_t *>(outputs()[1].GetDataPtr())[0] = x.is_contiguous() ? 1 : 0;
    }
    static std::vector<ms::Tensor> Eval(const ms::Tensor &x)
    {
        auto out = ms::Tensor(x.data_type(), x.shape());
        auto flag = ms::Tensor(ms::TypeId::kNumberTypeInt32, {1});
        std::make_shared<StridedCopy>("StridedCopy")->Run({x}, {out, flag});
        return {out, flag};
    }
};
py::object strided_copy(const ms::Tensor &x, bool keep_strides)
{
    if (keep_strides)
        x.SetNeedContiguous(false);
    return ms::pynative::PyboostRunner::Call<2>(StridedCopy::Eval, x);
}

// Tensor operations and free functions only, no runner.
std::vector<ms::Tensor> made_eval(const ms::Tensor &x)
{
    auto ints = ms::tensor(std::vector<int64_t>{1, 2, 3}, ms::TypeId::kNumberTypeInt32);
    auto halves = ms::tensor(std::vector<double>{0.5, 1.5}, ms::TypeId::kNumberTypeFloat16);
    auto scalar = ms::tensor(static_cast<int64_t>(7));
    auto one = ms::ones({2, 3});
    auto zero = ms::zeros({4}, ms::TypeId::kNumberTypeInt64);
    auto flat = x.flatten();
    auto reshaped = x.reshape({-1, 2});
    auto casted = x.cast(ms::TypeId::kNumberTypeInt32);
    auto chunks = x.flatten().chunk(3);
    return {ints, halves, scalar, one, zero, flat, reshaped, casted, chunks[0], chunks.back()};
}
py::object made(const ms::Tensor &x) { return ms::pynative::PyboostRunner::Call<10>(made_eval, x); }

// Gathering and tiling, no runner, one member per `which`: 0 index_select, 1 repeat,
// 2 repeat_interleave (a count tensor along dim), 3 repeat_interleave (one count, flattened),
// 4 repeat_interleave (one count along dim, with output_size).
ms::Tensor tiled_eval(int64_t which, const ms::Tensor &x, int64_t dim, const ms::Tensor &index,
                      const std::vector<int64_t> &reps, const ms::Tensor &counts)
{
    int64_t nd = static_cast<int64_t>(x.shape().size()), d = dim < 0 ? dim + nd : dim;
    int64_t size = d >= 0 && d < nd ? x.shape()[d] : 0;
    switch (which) {
    case 0: return x.index_select(dim, index);
    case 1: return x.repeat(reps);
    case 2: return x.repeat_interleave(counts, dim);
    case 3: return x.repeat_interleave(2);
    default: return x.repeat_interleave(3, dim, 3 * size);
    }
}
py::object tiled(int64_t which, const ms::Tensor &x, int64_t dim, const ms::Tensor &index,
                 const std::vector<int64_t> &reps, const ms::Tensor &counts)
{
    return ms::pynative::PyboostRunner::Call<1>(tiled_eval, which, x, dim, index, reps, counts);
}

// AssignTensor: a tensor of zeros of x's shape and like's type, then assigned x (as in
// MindSpore, it becomes x's tensor: x's dtype, values and memory).
ms::Tensor assigned_eval(const ms::Tensor &x, const ms::Tensor &like)
{
    auto out = ms::zeros(x.shape(), like.data_type());
    out.AssignTensor(x);
    return out;
}
py::object assigned(const ms::Tensor &x, const ms::Tensor &like)
{
    return ms::pynative::PyboostRunner::Call<1>(assigned_eval, x, like);
}

// Failures: in LaunchKernel, in CalcWorkspace, an absurd workspace, before Run.
class Fails : public ms::pynative::PyboostRunner {
public:
    Fails(const std::string &name, int where) : PyboostRunner(name), where_(where) {}
    size_t CalcWorkspace() override
    {
        if (where_ == 1)
            throw std::runtime_error("workspace refused");
        if (where_ == 2)
            return static_cast<size_t>(1) << 60;
        return 0;
    }
    void LaunchKernel() override
    {
        if (where_ == 0)
            throw std::invalid_argument("kernel refused the input");
    }

private:
    int where_;
};
ms::Tensor fails_eval(const ms::Tensor &x, int64_t where)
{
    if (where == 3)
        throw std::invalid_argument("refused before Run");
    auto out = ms::Tensor(x.data_type(), x.shape());
    std::make_shared<Fails>("Fails", static_cast<int>(where))->Run({x}, {out});
    return out;
}
py::object fails(const ms::Tensor &x, int64_t where)
{
    return ms::pynative::PyboostRunner::Call<1>(fails_eval, x, where);
}

// An optional input: out = x (+ y when given).
class MaybeAdd : public ms::pynative::PyboostRunner {
public:
    using PyboostRunner::PyboostRunner;
    void LaunchKernel() override
    {
        const auto &x = inputs()[0];
        const auto &y = inputs()[1];
        const float *a = static_cast<const float *>(x.GetDataPtr());
        float *o = static_cast<float *>(outputs()[0].GetDataPtr());
        for (size_t i = 0; i < x.numel(); ++i)
            o[i] = a[i] + (y.is_defined() ? static_cast<const float *>(y.GetDataPtr())[i] : 0.0f);
    }
};
ms::Tensor maybe_add_eval(const ms::Tensor &x, const std::optional<ms::Tensor> &y)
{
    auto out = ms::Tensor(x.data_type(), x.shape());
    std::make_shared<MaybeAdd>("MaybeAdd")->Run({x, y.value_or(ms::Tensor())}, {out});
    return out;
}
py::object maybe_add(const ms::Tensor &x, const std::optional<ms::Tensor> &y)
{
    return ms::pynative::PyboostRunner::Call<1>(maybe_add_eval, x, y);
}

PYBIND11_MODULE(MS_EXTENSION_NAME, m)
{
    m.def("relu_ws", &relu_ws, "relu through a workspace", pybind11::arg("x"));
    m.def("sum_diff", &sum_diff);
    m.def("sum_diff_bad_n", &sum_diff_bad_n);
    m.def("scale_", &scale_, pybind11::arg("x"), pybind11::arg("scale"));
    m.def("strided_copy", &strided_copy);
    m.def("made", &made);
    m.def("tiled", &tiled);
    m.def("assigned", &assigned);
    m.def("fails", &fails);
    m.def("maybe_add", &maybe_add, pybind11::arg("x"), pybind11::arg("y") = py::none());
}
