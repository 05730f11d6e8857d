/*
 * paddle/kernel.h - PD_KERNEL, PD_INFER_SHAPE and PD_INFER_DTYPE: Paddle's typed kernel and
 * infer functions made into pdext's one signature, void (*)(pd_kernel_ctx *).
 *
 * Each macro names a function by its address in a template argument, so the wrapper is a
 * separate function per (op, function) pair, instantiated by the builder's SetKernelFn /
 * SetInferShapeFn / SetInferDtypeFn with the op's own record (op_info) as a second template
 * argument. The wrapper reads each parameter from the call in declared order, calls the
 * function, and hands its results to the call:
 *
 *   kernel parameter                                 taken from
 *   const paddle::Tensor& (or by value)              the next declared input
 *   paddle::Tensor& (an inplace input)               the next declared input, writable
 *   const std::vector<paddle::Tensor>& / non-const&  the next (vector) input's tensors
 *   const paddle::optional<paddle::Tensor>&          the next (optional) input, if bound
 *   const paddle::optional<std::vector<Tensor>>&     likewise, of a vector input
 *   paddle::Tensor*                                  the next declared output (set after)
 *   std::vector<paddle::Tensor*>                     the next (vector) output's items, as
 *                                                    many as inference gave it (set after)
 *   bool, int, float, double, int64_t, std::string,  the next declared attr, by value or
 *   std::vector<int / float / int64_t / std::string> const reference
 *
 * A returned std::vector<paddle::Tensor> becomes the outputs in declared order (a vector
 * output takes the tensors left over by the plain outputs; an op with inplace outputs may
 * return only its other outputs). Infer functions take std::vector<int64_t> shapes
 * (std::vector<std::vector<int64_t>> for vector inputs, paddle::optional of either) or
 * paddle::DataType (likewise) per input, then attrs in declared order, as Paddle hands them:
 * a dtype function any leading run of the attrs, a shape function any leading run of the attrs
 * that are not std::vector<int64_t> (Paddle's rule: such a parameter is a shape), and return one
 * shape / dtype per output item; a shape with a negative dim is left for the kernel to decide.
 *
 * The builder records each signature (pd_paddle_op.h); the op's first call has the runtime
 * check them against the op's declarations (pd_api.paddle_op_check, once), and a mismatch
 * fails that call and every later one. Error paths format through detail::fail (tensor.h):
 * one printf helper per module instead of string concatenation in every template.
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_KERNEL_H
#define PDEXT_PADDLE_KERNEL_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/kernel.h"
#endif

#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernel_params.h"

namespace paddle {
namespace detail {

/* Sets the outputs from what the kernel returned (see the top of the file). */
inline void set_outputs(pd_kernel_ctx *ctx, const op_info &info, const std::vector<Tensor> &outs)
{
    size_t n = outs.size();
    bool skip_inplace = !info.any_vector_output && info.n_inplace > 0 &&
                        n == static_cast<size_t>(info.n_outputs - info.n_inplace);
    if (!info.any_vector_output && !skip_inplace && n != static_cast<size_t>(info.n_outputs))
        fail(PD_ERR_OP_FAILED, "the kernel returned %zu tensor%s, but the op declares %d output%s",
             n, n == 1 ? "" : "s", info.n_outputs, info.n_outputs == 1 ? "" : "s");
    size_t next = 0;
    int32_t plain_left = 0;
    for (int32_t o = 0; o < info.n_outputs; ++o)
        plain_left += info.out_vector[o] ? 0 : 1;
    for (int32_t o = 0; o < info.n_outputs; ++o) {
        if (skip_inplace && info.out_inplace[o])
            continue;
        if (!info.out_vector[o]) {
            --plain_left;
            if (next < n && outs[next].defined() && !info.out_inplace[o])
                pd_set_output(ctx, o, outs[next].pd());
            ++next;
            continue;
        }
        size_t take = n - next >= static_cast<size_t>(plain_left) ? n - next - plain_left : 0;
        if (!info.out_inplace[o] && pd_output_count(ctx, o) != static_cast<int32_t>(take))
            pd_set_output_count(ctx, o, static_cast<int32_t>(take));
        if (!info.out_inplace[o])
            for (size_t k = 0; k < take; ++k)
                if (outs[next + k].defined())
                    pd_set_output_at(ctx, o, static_cast<int32_t>(k), outs[next + k].pd());
        next += take;
    }
}

/* The op's first call, or a call of an op whose declarations disagree: the runtime checks the
 * record once (pd_api.paddle_op_check, compiled in libpdext rather than in every module) and
 * such an op fails each call with PD_ERR_INVALID_MODULE and the runtime's message. */
[[gnu::noinline, gnu::cold]] inline void check_op(op_info &info)
{
    int32_t n = pd__api->paddle_op_check(&info, nullptr, 0);
    if (n <= 0)
        return;
    std::string m(static_cast<size_t>(n), '\0');
    pd__api->paddle_op_check(&info, &m[0], m.size() + 1);
    throw pd::op_error(m, nullptr, 0, PD_ERR_INVALID_MODULE);
}

/* The op's record, checked, for every wrapper's entry: one load and compare once checked. */
template <class Tag> const op_info &checked_info()
{
    op_info &info = Tag::info();
    if (__atomic_load_n(&info.state, __ATOMIC_ACQUIRE) != PD_PADDLE_OP_OK)
        check_op(info);
    return info;
}

/* Wrappers, one per (function, op). Specialized on the function's type below. */
template <class F, F fn> struct kernel_fn;
template <class F, F fn> struct infer_shape_fn;
template <class F, F fn> struct infer_dtype_fn;

template <class Ret, class... Args, Ret (*fn)(Args...)> struct kernel_fn<Ret (*)(Args...), fn> {
    using ps = params<kernel_kind_of, Args...>;
    static signature sig() { return ps::sig("PD_KERNEL"); }

    template <class Tag> static void call(pd_kernel_ctx *ctx)
    {
        ctx_scope scope(ctx);
        const op_info &info = checked_info<Tag>();
        run(ctx, info, std::index_sequence_for<Args...>{});
    }

    template <size_t... I>
    static void run(pd_kernel_ctx *ctx, const op_info &info, std::index_sequence<I...>)
    {
        static_assert((param_check<I, Args, kernel_kind<Args>()>::ok && ... && true), "");
        std::tuple<typename ps::template holder_t<I>...> h{
            typename ps::template holder_t<I>(ctx, ps::template index<I>())...};
        (void)h;
        if constexpr (std::is_void<Ret>::value) {
            fn(std::get<I>(h).get()...);
        } else {
            static_assert(std::is_same<Ret, std::vector<Tensor>>::value,
                          "PD_KERNEL: a kernel returns std::vector<paddle::Tensor> or void");
            std::vector<Tensor> outs = fn(std::get<I>(h).get()...);
            set_outputs(ctx, info, outs);
        }
        set_output_params(ctx, h, std::index_sequence<I...>{});
    }

    /* Tensor* parameters: the k-th is output k. */
    template <class H, size_t... I>
    static void set_output_params(pd_kernel_ctx *ctx, H &h, std::index_sequence<I...>)
    {
        (void)ctx;
        (void)h;
        (set_output_param<I>(ctx, std::get<I>(h)), ...);
    }
    template <size_t I, class Hold> static void set_output_param(pd_kernel_ctx *ctx, Hold &hold)
    {
        if constexpr (ps::kinds[I] == pkind::out_ptr) {
            if (hold.v.defined())
                pd_set_output(ctx, ps::template index<I>(), hold.v.pd());
        } else if constexpr (ps::kinds[I] == pkind::vec_out_ptr) {
            for (size_t k = 0; k < hold.v.size(); ++k)
                if (hold.v[k].defined())
                    pd_set_output_at(ctx, ps::template index<I>(), static_cast<int32_t>(k),
                                     hold.v[k].pd());
        } else {
            (void)ctx;
            (void)hold;
        }
    }
};

/* Sets output item shapes / dtypes from an infer function's list: plain outputs one each, a
 * vector output the items the plain ones leave. */
template <class T, class Set>
inline void set_inferred(pd_kernel_ctx *ctx, const op_info &info, const std::vector<T> &items,
                         const char *what, Set set)
{
    size_t n = items.size();
    int32_t plain = 0;
    for (int32_t o = 0; o < info.n_outputs; ++o)
        plain += info.out_vector[o] ? 0 : 1;
    bool fits = info.any_vector_output ? n >= static_cast<size_t>(plain)
                                       : n == static_cast<size_t>(info.n_outputs);
    if (!fits)
        fail(PD_ERR_OP_FAILED, "%s returned %zu item%s, but the op declares %d output%s", what, n,
             n == 1 ? "" : "s", info.n_outputs, info.n_outputs == 1 ? "" : "s");
    size_t next = 0;
    for (int32_t o = 0; o < info.n_outputs; ++o) {
        if (!info.out_vector[o]) {
            --plain;
            set(o, 0, items[next++]);
            continue;
        }
        /* the items the plain outputs after this one leave */
        size_t take = n - next - static_cast<size_t>(plain);
        pd_set_output_count(ctx, o, static_cast<int32_t>(take));
        for (size_t k = 0; k < take; ++k)
            set(o, static_cast<int32_t>(k), items[next + k]);
        next += take;
    }
}

/* An infer_shape function's dim j of output o (item k) is below -1. */
[[noreturn]] inline void bad_dim(const op_info &info, int32_t o, int32_t k, size_t j, int64_t d)
{
    const char *tail = "; a dim is >= 0, or -1 when the kernel's output decides the shape";
    if (info.out_vector[o])
        fail(PD_ERR_OP_FAILED,
             "the infer_shape function returned dim %zu = %lld for output '%s' item %d%s", j,
             static_cast<long long>(d), info.def->outputs[o], k, tail);
    fail(PD_ERR_OP_FAILED, "the infer_shape function returned dim %zu = %lld for output '%s'%s", j,
         static_cast<long long>(d), info.def->outputs[o], tail);
}

template <class Ret, class... Args, Ret (*fn)(Args...)>
struct infer_shape_fn<Ret (*)(Args...), fn> {
    using ps = params<shape_kind_of, Args...>;
    static signature sig() { return ps::sig("PD_INFER_SHAPE"); }

    template <class Tag> static void call(pd_kernel_ctx *ctx)
    {
        static_assert(std::is_same<Ret, std::vector<std::vector<int64_t>>>::value,
                      "PD_INFER_SHAPE: the function returns std::vector<std::vector<int64_t>>");
        ctx_scope scope(ctx);
        const op_info &info = checked_info<Tag>();
        run(ctx, info, std::index_sequence_for<Args...>{});
    }
    template <size_t... I>
    static void run(pd_kernel_ctx *ctx, const op_info &info, std::index_sequence<I...>)
    {
        static_assert((param_check<I, Args, shape_kind<Args>()>::ok && ... && true), "");
        std::tuple<typename ps::template holder_t<I>...> h{
            typename ps::template holder_t<I>(ctx, ps::template infer_index<I>(info, true))...};
        (void)h;
        std::vector<std::vector<int64_t>> shapes = fn(std::get<I>(h).get()...);
        set_inferred(ctx, info, shapes, "the infer_shape function",
                     [&](int32_t o, int32_t k, const std::vector<int64_t> &s) {
                         for (size_t j = 0; j < s.size(); ++j) {
                             if (s[j] >= -1)
                                 continue; /* any other negative dim is a bug: refused */
                             bad_dim(info, o, k, j, s[j]);
                         }
                         for (int64_t d : s)
                             if (d < 0)
                                 return; /* -1: the kernel's output decides */
                         pd_set_output_shape_at(ctx, o, k, detail::ndim_of(s), s.data());
                     });
    }
};

template <class Ret, class... Args, Ret (*fn)(Args...)>
struct infer_dtype_fn<Ret (*)(Args...), fn> {
    using ps = params<dtype_kind_of, Args...>;
    static signature sig() { return ps::sig("PD_INFER_DTYPE"); }

    template <class Tag> static void call(pd_kernel_ctx *ctx)
    {
        static_assert(std::is_same<Ret, std::vector<DataType>>::value,
                      "PD_INFER_DTYPE: the function returns std::vector<paddle::DataType>");
        ctx_scope scope(ctx);
        const op_info &info = checked_info<Tag>();
        run(ctx, info, std::index_sequence_for<Args...>{});
    }
    template <size_t... I>
    static void run(pd_kernel_ctx *ctx, const op_info &info, std::index_sequence<I...>)
    {
        static_assert((param_check<I, Args, dtype_kind<Args>()>::ok && ... && true), "");
        std::tuple<typename ps::template holder_t<I>...> h{
            typename ps::template holder_t<I>(ctx, ps::template infer_index<I>(info, false))...};
        (void)h;
        std::vector<DataType> dtypes = fn(std::get<I>(h).get()...);
        set_inferred(ctx, info, dtypes, "the infer_dtype function",
                     [&](int32_t o, int32_t k, DataType t) {
                         pd_set_output_dtype_at(ctx, o, k, to_pd(t));
                     });
    }
};

} // namespace detail
} // namespace paddle

/* The wrapper of kernel `fn` (a function, not an overload set). */
#define PD_KERNEL(...) (::paddle::detail::kernel_fn<decltype(&__VA_ARGS__), &__VA_ARGS__>{})
/* The wrapper of infer_shape function `fn`. */
#define PD_INFER_SHAPE(...) \
    (::paddle::detail::infer_shape_fn<decltype(&__VA_ARGS__), &__VA_ARGS__>{})
/* The wrapper of infer_dtype function `fn`. */
#define PD_INFER_DTYPE(...) \
    (::paddle::detail::infer_dtype_fn<decltype(&__VA_ARGS__), &__VA_ARGS__>{})

#endif /* PDEXT_PADDLE_KERNEL_H */
