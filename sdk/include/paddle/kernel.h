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
 *   bool, int, float, double, int64_t, std::string,  the next declared attr, by value or
 *   std::vector<int / float / int64_t / std::string> const reference
 *
 * A returned std::vector<paddle::Tensor> becomes the outputs in declared order (a vector
 * output takes the tensors left over by the plain outputs; an op with inplace outputs may
 * return only its other outputs). Infer functions take std::vector<int64_t> shapes
 * (std::vector<std::vector<int64_t>> for vector inputs, paddle::optional of either) or
 * paddle::DataType (likewise) per input, then attrs (each the next declared attr of its kind,
 * vector or not: Paddle passes shape functions the non-vector ones), and return one shape / dtype
 * per output item; a shape with a negative dim is left for the kernel to decide.
 *
 * The builder checks each signature against the op's declarations when the module's static
 * initializers run; a mismatch is recorded and the op's first call fails with it.
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

namespace paddle {
namespace detail {

/* What the builder knows about an op, read by the wrappers. */
struct op_info {
    int32_t n_inputs = 0, n_outputs = 0, n_attrs = 0;
    bool in_vector[PD_MAX_INPUTS] = {};
    bool in_optional[PD_MAX_INPUTS] = {};
    bool out_vector[PD_MAX_OUTPUTS] = {};
    bool out_inplace[PD_MAX_OUTPUTS] = {};
    int32_t n_inplace = 0;
    bool any_vector_output = false;
    pd_attr_type attr_type[PD_MAX_ATTRS] = {};
    /* Infer functions get the attrs by kind: their k-th non-vector attr parameter is declared
     * attr by_kind[0][k], their k-th vector one by_kind[1][k]. */
    int32_t by_kind[2][PD_MAX_ATTRS] = {};
    int32_t n_by_kind[2] = {};
    std::string out_name[PD_MAX_OUTPUTS];
    std::string attr_name[PD_MAX_ATTRS];
    std::string error; /* a declaration or signature mismatch: the op's calls fail with it */
};

/* --- Parameter kinds ---------------------------------------------------------------------- */

enum class pkind : uint8_t {
    tensor,      /* const Tensor& / Tensor */
    vec,         /* const std::vector<Tensor>& */
    opt,         /* const optional<Tensor>& */
    opt_vec,     /* const optional<std::vector<Tensor>>& */
    inplace,     /* Tensor& */
    vec_inplace, /* std::vector<Tensor>& */
    out_ptr,     /* Tensor* */
    shape,       /* std::vector<int64_t> (infer_shape) */
    vec_shape,   /* std::vector<std::vector<int64_t>> */
    opt_shape,
    opt_vec_shape,
    dtype, /* DataType (infer_dtype) */
    vec_dtype,
    opt_dtype,
    opt_vec_dtype,
    attr,
    bad
};

inline bool is_vector_kind(pkind k)
{
    return k == pkind::vec || k == pkind::opt_vec || k == pkind::vec_inplace ||
           k == pkind::vec_shape || k == pkind::opt_vec_shape || k == pkind::vec_dtype ||
           k == pkind::opt_vec_dtype;
}
inline bool is_optional_kind(pkind k)
{
    return k == pkind::opt || k == pkind::opt_vec || k == pkind::opt_shape ||
           k == pkind::opt_vec_shape || k == pkind::opt_dtype || k == pkind::opt_vec_dtype;
}
constexpr bool is_input_kind(pkind k)
{
    return k != pkind::out_ptr && k != pkind::attr && k != pkind::bad;
}

/* The pd_attr_type of an attr parameter's value type; PD_ATTR_UNDEFINED for none. */
template <class T> struct attr_of {
    static constexpr pd_attr_type value = PD_ATTR_UNDEFINED;
};
#define PD__PADDLE_ATTR_OF(type, tag)              \
    template <> struct attr_of<type> {             \
        static constexpr pd_attr_type value = tag; \
    };
PD__PADDLE_ATTR_OF(bool, PD_ATTR_BOOL)
PD__PADDLE_ATTR_OF(int, PD_ATTR_INT)
PD__PADDLE_ATTR_OF(float, PD_ATTR_FLOAT)
PD__PADDLE_ATTR_OF(double, PD_ATTR_DOUBLE)
PD__PADDLE_ATTR_OF(int64_t, PD_ATTR_INT64)
PD__PADDLE_ATTR_OF(std::string, PD_ATTR_STRING)
PD__PADDLE_ATTR_OF(std::vector<int>, PD_ATTR_INTS)
PD__PADDLE_ATTR_OF(std::vector<float>, PD_ATTR_FLOATS)
PD__PADDLE_ATTR_OF(std::vector<int64_t>, PD_ATTR_INT64S)
PD__PADDLE_ATTR_OF(std::vector<std::string>, PD_ATTR_STRINGS)
#undef PD__PADDLE_ATTR_OF

template <class P> using bare = std::remove_cv_t<std::remove_reference_t<P>>;
template <class P>
constexpr bool by_value_or_const_ref = !std::is_reference<P>::value ||
                                       std::is_const<std::remove_reference_t<P>>::value;

/* Kernel parameters. */
template <class P> constexpr pkind kernel_kind()
{
    using B = bare<P>;
    if constexpr (std::is_same<P, Tensor *>::value)
        return pkind::out_ptr;
    else if constexpr (std::is_same<B, Tensor>::value)
        return by_value_or_const_ref<P> ? pkind::tensor : pkind::inplace;
    else if constexpr (std::is_same<B, std::vector<Tensor>>::value)
        return by_value_or_const_ref<P> ? pkind::vec : pkind::vec_inplace;
    else if constexpr (std::is_same<B, optional<Tensor>>::value) /* const or inplace */
        return pkind::opt;
    else if constexpr (std::is_same<B, optional<std::vector<Tensor>>>::value)
        return pkind::opt_vec;
    else if constexpr (attr_of<B>::value != PD_ATTR_UNDEFINED && by_value_or_const_ref<P>)
        return pkind::attr;
    else
        return pkind::bad;
}

/* infer_shape parameters: std::vector<int64_t> is an input's shape, never an attr. */
template <class P> constexpr pkind shape_kind()
{
    using B = bare<P>;
    using S = std::vector<int64_t>;
    if (!by_value_or_const_ref<P>)
        return pkind::bad;
    if constexpr (std::is_same<B, S>::value)
        return pkind::shape;
    else if constexpr (std::is_same<B, std::vector<S>>::value)
        return pkind::vec_shape;
    else if constexpr (std::is_same<B, optional<S>>::value)
        return pkind::opt_shape;
    else if constexpr (std::is_same<B, optional<std::vector<S>>>::value)
        return pkind::opt_vec_shape;
    else if constexpr (attr_of<B>::value != PD_ATTR_UNDEFINED)
        return pkind::attr;
    else
        return pkind::bad;
}

/* infer_dtype parameters. */
template <class P> constexpr pkind dtype_kind()
{
    using B = bare<P>;
    if (!by_value_or_const_ref<P>)
        return pkind::bad;
    if constexpr (std::is_same<B, DataType>::value)
        return pkind::dtype;
    else if constexpr (std::is_same<B, std::vector<DataType>>::value)
        return pkind::vec_dtype;
    else if constexpr (std::is_same<B, optional<DataType>>::value)
        return pkind::opt_dtype;
    else if constexpr (std::is_same<B, optional<std::vector<DataType>>>::value)
        return pkind::opt_vec_dtype;
    else if constexpr (attr_of<B>::value != PD_ATTR_UNDEFINED)
        return pkind::attr;
    else
        return pkind::bad;
}

/* A parameter the wrapper cannot fill is a compile error; the instantiation names its
 * position (Pos, counted from 0) and type. */
template <size_t Pos, class P, pkind K> struct param_check {
    static_assert(K != pkind::bad,
                  "PD_KERNEL / PD_INFER_SHAPE / PD_INFER_DTYPE: parameter Pos of this function has "
                  "a type Paddle's wrappers do not take (see the instantiation for Pos and P)");
    static constexpr bool ok = true;
};

/* The signature as data, for the builder's check against the declarations. */
struct signature {
    const char *what = ""; /* "PD_KERNEL", ... */
    const pkind *kinds = nullptr;
    const pd_attr_type *attrs = nullptr; /* per parameter; PD_ATTR_UNDEFINED for non-attrs */
    size_t n = 0;
};

/* --- Reading parameters from the call ------------------------------------------------------ */

inline const pd_attr *attr_at(pd_kernel_ctx *ctx, int32_t j, pd_attr_type want)
{
    const pd_attr *a = PD__CALL(ctx, attr(ctx, j));
    if (a->type != want)
        throw pd::op_error(std::string("attr '") + a->name + "' is declared " +
                               pd_attr_type_name(a->type) + ", but the function takes " +
                               pd_attr_type_name(want),
                           nullptr, 0, PD_ERR_INVALID_ARGUMENT);
    return a;
}

template <class T> T read_attr(pd_kernel_ctx *ctx, int32_t j)
{
    const pd_attr *a = attr_at(ctx, j, attr_of<T>::value);
    if constexpr (std::is_same<T, bool>::value)
        return a->v.b;
    else if constexpr (std::is_same<T, int>::value)
        return a->v.i;
    else if constexpr (std::is_same<T, float>::value)
        return a->v.f;
    else if constexpr (std::is_same<T, double>::value)
        return a->v.d;
    else if constexpr (std::is_same<T, int64_t>::value)
        return a->v.i64;
    else if constexpr (std::is_same<T, std::string>::value)
        return std::string(a->v.s ? a->v.s : "");
    else if constexpr (std::is_same<T, std::vector<int>>::value)
        return std::vector<int>(a->v.ints, a->v.ints + a->count);
    else if constexpr (std::is_same<T, std::vector<float>>::value)
        return std::vector<float>(a->v.floats, a->v.floats + a->count);
    else if constexpr (std::is_same<T, std::vector<int64_t>>::value)
        return std::vector<int64_t>(a->v.int64s, a->v.int64s + a->count);
    else
        return std::vector<std::string>(a->v.strings, a->v.strings + a->count);
}

inline std::vector<int64_t> shape_of(const pd_tensor *t)
{
    return std::vector<int64_t>(t->shape, t->shape + t->ndim);
}

/* The value handed to parameter P of kind K, read from input / attr / output `index`. */
template <pkind K, class P> struct holder;

template <class P> struct holder<pkind::tensor, P> {
    Tensor v;
    holder(pd_kernel_ctx *ctx, int32_t i) : v(pd_input(ctx, i)) {}
    Tensor &get() { return v; }
};
template <class P> struct holder<pkind::inplace, P> : holder<pkind::tensor, P> {
    using holder<pkind::tensor, P>::holder;
};
template <class P> struct holder<pkind::out_ptr, P> {
    Tensor v;
    holder(pd_kernel_ctx *, int32_t) {}
    Tensor *get() { return &v; }
};
template <class P> struct holder<pkind::vec, P> {
    std::vector<Tensor> v;
    holder(pd_kernel_ctx *ctx, int32_t i)
    {
        int32_t n = pd_input_count(ctx, i);
        v.reserve(static_cast<size_t>(n));
        for (int32_t k = 0; k < n; ++k)
            v.emplace_back(pd_input_at(ctx, i, k));
    }
    std::vector<Tensor> &get() { return v; }
};
template <class P> struct holder<pkind::vec_inplace, P> : holder<pkind::vec, P> {
    using holder<pkind::vec, P>::holder;
};
template <class P> struct holder<pkind::opt, P> {
    optional<Tensor> v;
    holder(pd_kernel_ctx *ctx, int32_t i)
    {
        if (pd_input_count(ctx, i) > 0)
            v = Tensor(pd_input(ctx, i));
    }
    optional<Tensor> &get() { return v; }
};
template <class P> struct holder<pkind::opt_vec, P> {
    optional<std::vector<Tensor>> v;
    holder(pd_kernel_ctx *ctx, int32_t i)
    {
        if (pd_input_count(ctx, i) > 0)
            v = holder<pkind::vec, P>(ctx, i).v;
    }
    optional<std::vector<Tensor>> &get() { return v; }
};
template <class P> struct holder<pkind::shape, P> {
    std::vector<int64_t> v;
    holder(pd_kernel_ctx *ctx, int32_t i) : v(shape_of(pd_input(ctx, i))) {}
    std::vector<int64_t> &get() { return v; }
};
template <class P> struct holder<pkind::vec_shape, P> {
    std::vector<std::vector<int64_t>> v;
    holder(pd_kernel_ctx *ctx, int32_t i)
    {
        int32_t n = pd_input_count(ctx, i);
        for (int32_t k = 0; k < n; ++k)
            v.push_back(shape_of(pd_input_at(ctx, i, k)));
    }
    std::vector<std::vector<int64_t>> &get() { return v; }
};
template <class P> struct holder<pkind::opt_shape, P> {
    optional<std::vector<int64_t>> v;
    holder(pd_kernel_ctx *ctx, int32_t i)
    {
        if (pd_input_count(ctx, i) > 0)
            v = shape_of(pd_input(ctx, i));
    }
    optional<std::vector<int64_t>> &get() { return v; }
};
template <class P> struct holder<pkind::opt_vec_shape, P> {
    optional<std::vector<std::vector<int64_t>>> v;
    holder(pd_kernel_ctx *ctx, int32_t i)
    {
        if (pd_input_count(ctx, i) > 0)
            v = holder<pkind::vec_shape, P>(ctx, i).v;
    }
    optional<std::vector<std::vector<int64_t>>> &get() { return v; }
};
template <class P> struct holder<pkind::dtype, P> {
    DataType v;
    holder(pd_kernel_ctx *ctx, int32_t i) : v(static_cast<DataType>(pd_input(ctx, i)->dtype)) {}
    DataType &get() { return v; }
};
template <class P> struct holder<pkind::vec_dtype, P> {
    std::vector<DataType> v;
    holder(pd_kernel_ctx *ctx, int32_t i)
    {
        int32_t n = pd_input_count(ctx, i);
        for (int32_t k = 0; k < n; ++k)
            v.push_back(static_cast<DataType>(pd_input_at(ctx, i, k)->dtype));
    }
    std::vector<DataType> &get() { return v; }
};
template <class P> struct holder<pkind::opt_dtype, P> {
    optional<DataType> v;
    holder(pd_kernel_ctx *ctx, int32_t i)
    {
        if (pd_input_count(ctx, i) > 0)
            v = static_cast<DataType>(pd_input(ctx, i)->dtype);
    }
    optional<DataType> &get() { return v; }
};
template <class P> struct holder<pkind::opt_vec_dtype, P> {
    optional<std::vector<DataType>> v;
    holder(pd_kernel_ctx *ctx, int32_t i)
    {
        if (pd_input_count(ctx, i) > 0)
            v = holder<pkind::vec_dtype, P>(ctx, i).v;
    }
    optional<std::vector<DataType>> &get() { return v; }
};
template <class P> struct holder<pkind::attr, P> {
    bare<P> v;
    holder(pd_kernel_ctx *ctx, int32_t j) : v(read_attr<bare<P>>(ctx, j)) {}
    bare<P> &get() { return v; }
};

/* Position of parameter I among the inputs, the attrs or the output pointers. */
template <size_t N> constexpr int32_t index_before(const pkind (&kinds)[N], size_t i, int which)
{
    int32_t n = 0;
    for (size_t k = 0; k < i; ++k) {
        int cat = kinds[k] == pkind::attr ? 1 : kinds[k] == pkind::out_ptr ? 2 : 0;
        if (cat == which)
            ++n;
    }
    return n;
}
template <size_t N> constexpr int which_of(const pkind (&kinds)[N], size_t i)
{
    return kinds[i] == pkind::attr ? 1 : kinds[i] == pkind::out_ptr ? 2 : 0;
}

/* The parameters of fn, read, and the call; `Kinds` maps a parameter type to its kind. */
template <template <class> class KindOf, class... Args> struct params {
    static constexpr pkind kinds[sizeof...(Args) + 1] = {KindOf<Args>::value..., pkind::bad};
    static constexpr pd_attr_type attrs[sizeof...(Args) + 1] = {(KindOf<Args>::value == pkind::attr
                                                                     ? attr_of<bare<Args>>::value
                                                                     : PD_ATTR_UNDEFINED)...,
                                                                PD_ATTR_UNDEFINED};
    static signature sig(const char *what)
    {
        return signature{what, kinds, attrs, sizeof...(Args)};
    }

    template <size_t I> static constexpr int32_t index()
    {
        return index_before(kinds, I, which_of(kinds, I));
    }
    /* Infer functions: an attr parameter is the next declared attr of its kind (vector or
     * not), so a function may take only the non-vector attrs, as Paddle passes them. */
    template <size_t I> static int32_t infer_index(const op_info &info)
    {
        if constexpr (kinds[I] != pkind::attr) {
            return index<I>();
        } else {
            int vec = attrs[I] >= PD_ATTR_INTS ? 1 : 0;
            int32_t rank = 0;
            for (size_t k = 0; k < I; ++k)
                if (kinds[k] == pkind::attr && (attrs[k] >= PD_ATTR_INTS ? 1 : 0) == vec)
                    ++rank;
            return rank < info.n_by_kind[vec] ? info.by_kind[vec][rank] : -1;
        }
    }
    template <size_t I>
    using holder_t = holder<KindOf<std::tuple_element_t<I, std::tuple<Args...>>>::value,
                            std::tuple_element_t<I, std::tuple<Args...>>>;
};

template <class P> struct kernel_kind_of {
    static constexpr pkind value = kernel_kind<P>();
};
template <class P> struct shape_kind_of {
    static constexpr pkind value = shape_kind<P>();
};
template <class P> struct dtype_kind_of {
    static constexpr pkind value = dtype_kind<P>();
};

/* Sets the outputs from what the kernel returned (see the top of the file). */
inline void set_outputs(pd_kernel_ctx *ctx, const op_info &info, const std::vector<Tensor> &outs)
{
    size_t n = outs.size();
    bool skip_inplace = !info.any_vector_output && info.n_inplace > 0 &&
                        n == static_cast<size_t>(info.n_outputs - info.n_inplace);
    if (!info.any_vector_output && !skip_inplace && n != static_cast<size_t>(info.n_outputs))
        throw pd::op_error("the kernel returned " + std::to_string(n) + " tensor" +
                               (n == 1 ? "" : "s") + ", but the op declares " +
                               std::to_string(info.n_outputs) + " output" +
                               (info.n_outputs == 1 ? "" : "s"),
                           nullptr, 0, PD_ERR_OP_FAILED);
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
        const op_info &info = Tag::info();
        if (!info.error.empty())
            throw pd::op_error(info.error, nullptr, 0, PD_ERR_INVALID_MODULE);
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
        throw pd::op_error(std::string(what) + " returned " + std::to_string(n) + " item" +
                               (n == 1 ? "" : "s") + ", but the op declares " +
                               std::to_string(info.n_outputs) + " output" +
                               (info.n_outputs == 1 ? "" : "s"),
                           nullptr, 0, PD_ERR_OP_FAILED);
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

template <class Ret, class... Args, Ret (*fn)(Args...)>
struct infer_shape_fn<Ret (*)(Args...), fn> {
    using ps = params<shape_kind_of, Args...>;
    static signature sig() { return ps::sig("PD_INFER_SHAPE"); }

    template <class Tag> static void call(pd_kernel_ctx *ctx)
    {
        static_assert(std::is_same<Ret, std::vector<std::vector<int64_t>>>::value,
                      "PD_INFER_SHAPE: the function returns std::vector<std::vector<int64_t>>");
        ctx_scope scope(ctx);
        const op_info &info = Tag::info();
        if (!info.error.empty())
            throw pd::op_error(info.error, nullptr, 0, PD_ERR_INVALID_MODULE);
        run(ctx, info, std::index_sequence_for<Args...>{});
    }
    template <size_t... I>
    static void run(pd_kernel_ctx *ctx, const op_info &info, std::index_sequence<I...>)
    {
        static_assert((param_check<I, Args, shape_kind<Args>()>::ok && ... && true), "");
        std::tuple<typename ps::template holder_t<I>...> h{
            typename ps::template holder_t<I>(ctx, ps::template infer_index<I>(info))...};
        (void)h;
        std::vector<std::vector<int64_t>> shapes = fn(std::get<I>(h).get()...);
        set_inferred(ctx, info, shapes, "the infer_shape function",
                     [&](int32_t o, int32_t k, const std::vector<int64_t> &s) {
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
        const op_info &info = Tag::info();
        if (!info.error.empty())
            throw pd::op_error(info.error, nullptr, 0, PD_ERR_INVALID_MODULE);
        run(ctx, info, std::index_sequence_for<Args...>{});
    }
    template <size_t... I>
    static void run(pd_kernel_ctx *ctx, const op_info &info, std::index_sequence<I...>)
    {
        static_assert((param_check<I, Args, dtype_kind<Args>()>::ok && ... && true), "");
        std::tuple<typename ps::template holder_t<I>...> h{
            typename ps::template holder_t<I>(ctx, ps::template infer_index<I>(info))...};
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
