/*
 * ms_extension/python.h - the Python boundary of a CustomOpBuilder module: the pybind11 type
 * caster of ms::Tensor and PyboostRunner::Call<N>, the entry of a bound function.
 *
 * The caster takes what a pdext op call takes (numpy arrays, pdext.Tensors, DLPack producers,
 * mindspore.Tensors; None is an undefined tensor) through the table pdext's Python extension
 * lends (bridge.h): a pdext.Tensor is held by reference (pending or not), anything else is a
 * borrowed view of the caller's memory, valid while the call runs (the executor waits for the
 * launch of a call whose inputs it cannot retain). Results come back as the kind of the
 * call's first tensor argument, as pdext's own op calls do.
 *
 * Call<N> runs the function on the caller, with its arguments as const lvalues, after making
 * a strided ms::Tensor (or std::optional<ms::Tensor>) argument contiguous unless it was
 * marked SetNeedContiguous(false). Its Runs go through the executor (runner.h). An exception
 * becomes a Python exception: pdext's errors keep their type (pdext.OpError for a failed op,
 * ValueError for bad arguments), any other C++ exception is pdext.OpError
 * "<op>: C++ exception: <what>", <op> being the name of the last runner the function made,
 * else the function's type.
 */
#ifndef PDEXT_MS_EXTENSION_PYTHON_H
#define PDEXT_MS_EXTENSION_PYTHON_H

#include <cstdlib>
#include <cxxabi.h>
#include <optional>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>

namespace ms {
namespace detail {

/* The bridge table; imports pdext on first use. Needs the GIL. */
inline const pdext_ms_bridge *bridge()
{
    const pdext_ms_bridge *b = bridge_slot().load(std::memory_order_acquire);
    if (b != nullptr)
        return b;
    void *p = PyCapsule_Import(PDEXT_MS_BRIDGE_NAME, 0);
    if (p == nullptr)
        throw py::error_already_set();
    b = static_cast<const pdext_ms_bridge *>(p);
    if (b->struct_size < sizeof(pdext_ms_bridge))
        throw std::runtime_error("ms_extension: the pdext Python package is older than the "
                                 "ms_extension/api.h this module was built with; rebuild it");
    bridge_slot().store(b, std::memory_order_release);
    return b;
}

/* The demangled name of a type, for messages. */
template <class T> inline std::string type_name()
{
    int status = 0;
    char *name = abi::__cxa_demangle(typeid(T).name(), nullptr, nullptr, &status);
    std::string r = status == 0 && name != nullptr ? name : typeid(T).name();
    std::free(name);
    return r;
}

/* An argument as the function sees it: tensors made contiguous where they must be. */
template <class T> inline std::decay_t<T> realize(const T &a) { return a; }
inline Tensor realize(const Tensor &a)
{
    if (a.has_memory() && a.need_contiguous() && !a.is_contiguous())
        return a.contiguous();
    return a;
}
inline std::optional<Tensor> realize(const std::optional<Tensor> &a)
{
    if (a.has_value())
        return realize(*a);
    return a;
}

/* The Python object of the first tensor argument (it picks the results' kind), or NULL. */
inline void *origin_of(const Tensor &a) { return a.is_defined() ? a.impl()->py_origin : nullptr; }
inline void *origin_of(const std::optional<Tensor> &a)
{
    return a.has_value() ? origin_of(*a) : nullptr;
}
template <class T> inline void *origin_of(const T &) { return nullptr; }
template <class... A> inline void *first_origin(const A &...a)
{
    void *first = nullptr;
    ((first = first != nullptr ? first : origin_of(a)), ...);
    return first;
}

/* The Python object of one result tensor. */
inline py::object result_object(const pdext_ms_bridge *b, void *first, const Tensor &t,
                                size_t index)
{
    if (!t.has_memory())
        throw pd_failure(PD_ERR_INVALID_ARGUMENT,
                         "output " + std::to_string(index) + " of the function is " +
                             (t.is_defined() ? "a tensor without memory (it was not given to "
                                               "a runner's Run as an output)"
                                             : "undefined"));
    pd_tensor r;
    pd_tensor_retain(&r, &t.pd());
    void *obj = b->tensor_out(first, &r);
    if (obj == nullptr)
        throw py::error_already_set();
    return py::reinterpret_steal<py::object>(static_cast<PyObject *>(obj));
}

template <int N, class R>
inline py::object results(const pdext_ms_bridge *b, void *first, const R &result)
{
    if constexpr (std::is_same_v<std::decay_t<R>, Tensor>) {
        static_assert(N == 1, "PyboostRunner::Call<N>: a function returning one ms::Tensor "
                              "needs N = 1");
        return result_object(b, first, result, 0);
    } else {
        static_assert(std::is_same_v<std::decay_t<R>, std::vector<Tensor>>,
                      "PyboostRunner::Call<N>: the function must return ms::Tensor or "
                      "std::vector<ms::Tensor> (or anything with N = 0)");
        if (result.size() != static_cast<size_t>(N))
            throw pd_failure(PD_ERR_INVALID_ARGUMENT,
                             "the output size should be equal to " + std::to_string(N) + " (Call<" +
                                 std::to_string(N) + ">), but the function returned " +
                                 std::to_string(result.size()) + " tensors");
        if constexpr (N == 1) {
            return result_object(b, first, result[0], 0);
        } else {
            py::tuple tuple(N);
            for (size_t k = 0; k < result.size(); ++k)
                tuple[k] = result_object(b, first, result[k], k);
            return tuple;
        }
    }
}

} // namespace detail

namespace pynative {

template <int N, class F, class... Args> py::object PyboostRunner::Call(F func, Args &&...args)
{
    static_assert(N >= 0 && N <= PD_MAX_OUTPUTS, "PyboostRunner::Call<N>: N must be 0..16");
    const pdext_ms_bridge *b = detail::bridge();
    void *first = detail::first_origin(args...);
    detail::last_op_name().clear();
    auto name = [&]() {
        const std::string &last = detail::last_op_name();
        return last.empty() ? detail::type_name<F>() : last;
    };
    try {
        /* Captured by value, realised, then handed to the function as const lvalues. */
        auto held = std::make_tuple(detail::realize(args)...);
        if constexpr (N == 0) {
            std::apply([&](const auto &...a) { (void)func(a...); }, held);
            return py::none();
        } else {
            auto result = std::apply([&](const auto &...a) { return func(a...); }, held);
            return detail::results<N>(b, first, result);
        }
    } catch (const py::error_already_set &) {
        throw;
    } catch (const detail::pd_failure &e) {
        /* pdext's message names the op already when an op call failed. */
        std::string text = e.what();
        if (e.status() != PD_ERR_OP_FAILED && text.rfind(name() + ":", 0) != 0)
            text = name() + ": " + text;
        b->raise(e.status(), text.c_str());
        throw py::error_already_set();
    } catch (const std::exception &e) {
        std::string text = name() + ": C++ exception: " + e.what();
        b->raise(PD_ERR_OP_FAILED, text.c_str());
        throw py::error_already_set();
    }
}

} // namespace pynative
} // namespace ms

namespace pybind11 {
namespace detail {

/* ms::Tensor <-> Python (numpy array, pdext.Tensor, DLPack producer, mindspore.Tensor). */
template <> struct type_caster<ms::Tensor> {
public:
    PYBIND11_TYPE_CASTER(ms::Tensor, const_name("Tensor"));

    type_caster() = default;
    type_caster(const type_caster &) = delete;
    type_caster &operator=(const type_caster &) = delete;
    type_caster(type_caster &&o) noexcept : value(std::move(o.value)), keep_(o.keep_)
    {
        o.keep_ = nullptr;
    }
    ~type_caster()
    {
        /* The Python object goes with the call: no handle may name it afterwards. */
        if (value.is_defined())
            value.impl()->py_origin = nullptr;
        if (keep_ != nullptr)
            ms::detail::bridge_slot().load()->release(keep_);
    }

    bool load(handle src, bool)
    {
        if (src.is_none()) {
            value = ms::Tensor();
            return true;
        }
        const pdext_ms_bridge *b = ms::detail::bridge();
        pd_tensor t = {};
        void *keep = nullptr;
        int rc = b->tensor_in(src.ptr(), &t, &keep);
        if (rc < 0)
            throw error_already_set();
        if (rc == 0)
            return false; /* no tensor: pybind11 tries the next overload, then TypeError */
        if (keep_ != nullptr)
            b->release(keep_);
        keep_ = keep;
        value = ms::Tensor::adopt(&t);
        value.impl()->py_origin = src.ptr();
        return true;
    }

    static handle cast(const ms::Tensor &src, return_value_policy, handle)
    {
        const pdext_ms_bridge *b = ms::detail::bridge();
        return ms::detail::result_object(b, nullptr, src, 0).release();
    }

private:
    void *keep_ = nullptr;
};

} // namespace detail
} // namespace pybind11

#endif /* PDEXT_MS_EXTENSION_PYTHON_H */
