// The tutorial's add3 written against MindSpore's CustomOpBuilder API (ms_extension/api.h), as
// MindSpore's users write it; pdext builds it unchanged (examples/ms_extension/README.md).
#include "ms_extension/api.h"

class CustomAdd3 : public ms::pynative::PyboostRunner {
public:
    using PyboostRunner::PyboostRunner;
    void LaunchKernel() override
    {
        auto &x = inputs()[0];
        auto &y = inputs()[1];
        auto &z = inputs()[2];
        auto &out = outputs()[0];
        const int32_t *x_base_ptr = static_cast<const int32_t *>(x.GetDataPtr());
        const int32_t *y_base_ptr = static_cast<const int32_t *>(y.GetDataPtr());
        const int32_t *z_base_ptr = static_cast<const int32_t *>(z.GetDataPtr());
        int32_t *output_base_ptr = static_cast<int32_t *>(out.GetDataPtr());
        for (size_t i = 0; i < x.numel(); i++) {
            output_base_ptr[i] = x_base_ptr[i] + y_base_ptr[i] + z_base_ptr[i];
        }
    }
    static ms::Tensor Eval(const ms::Tensor &x, const ms::Tensor &y, const ms::Tensor &z)
    {
        auto out = ms::Tensor(x.data_type(), x.shape());
        auto runner = std::make_shared<CustomAdd3>("Add3");
        runner->Run({x, y, z}, {out});
        return out;
    }
};

py::object add3(const ms::Tensor &x, const ms::Tensor &y, const ms::Tensor &z)
{
    return ms::pynative::PyboostRunner::Call<1>(CustomAdd3::Eval, x, y, z);
}

PYBIND11_MODULE(MS_EXTENSION_NAME, m)
{
    m.def("add3", &add3, "x + y + z", pybind11::arg("x"), pybind11::arg("y"), pybind11::arg("z"));
}
