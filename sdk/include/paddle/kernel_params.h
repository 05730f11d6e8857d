/*
 * paddle/kernel_params.h - how the wrappers of paddle/kernel.h read a Paddle function's
 * parameters: what the builder knows about an op (op_info), the kind of each parameter type
 * (input, vector, optional, inplace, output pointer, shape, dtype, attr), the holder that
 * reads one from the running call, and each parameter's position among the declared inputs,
 * attrs or outputs.
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_KERNEL_PARAMS_H
#define PDEXT_PADDLE_KERNEL_PARAMS_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/kernel_params.h"
#endif

#include <algorithm>
#include <cstddef>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace paddle {
namespace detail {

/* What the wrappers know about an op: its record (pd_paddle_op.h), which the runtime fills at
 * the op's first call (checked_info in kernel.h). */
using op_info = pd_paddle_op;

/* --- Parameter kinds ---------------------------------------------------------------------- */

/* The values of pd_paddle_op.h's PD_PADDLE_P_*, which the runtime reads. */
enum class pkind : uint8_t {
    tensor = PD_PADDLE_P_TENSOR,           /* const Tensor& / Tensor */
    vec = PD_PADDLE_P_VEC,                 /* const std::vector<Tensor>& */
    opt = PD_PADDLE_P_OPT,                 /* const optional<Tensor>& */
    opt_vec = PD_PADDLE_P_OPT_VEC,         /* const optional<std::vector<Tensor>>& */
    inplace = PD_PADDLE_P_INPLACE,         /* Tensor& */
    vec_inplace = PD_PADDLE_P_VEC_INPLACE, /* std::vector<Tensor>& */
    out_ptr = PD_PADDLE_P_OUT_PTR,         /* Tensor* */
    vec_out_ptr = PD_PADDLE_P_VEC_OUT_PTR, /* std::vector<Tensor*> */
    shape = PD_PADDLE_P_SHAPE,             /* std::vector<int64_t> (infer_shape) */
    vec_shape = PD_PADDLE_P_VEC_SHAPE,     /* std::vector<std::vector<int64_t>> */
    opt_shape = PD_PADDLE_P_OPT_SHAPE,
    opt_vec_shape = PD_PADDLE_P_OPT_VEC_SHAPE,
    dtype = PD_PADDLE_P_DTYPE, /* DataType (infer_dtype) */
    vec_dtype = PD_PADDLE_P_VEC_DTYPE,
    opt_dtype = PD_PADDLE_P_OPT_DTYPE,
    opt_vec_dtype = PD_PADDLE_P_OPT_VEC_DTYPE,
    attr = PD_PADDLE_P_ATTR,
    bad = PD_PADDLE_P_BAD
};

constexpr bool is_input_kind(pkind k)
{
    return k != pkind::out_ptr && k != pkind::vec_out_ptr && k != pkind::attr && k != pkind::bad;
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
    else if constexpr (std::is_same<B, std::vector<Tensor *>>::value)
        return pkind::vec_out_ptr;
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

/* The signature as data, for the runtime's check against the declarations. */
using signature = pd_paddle_sig;

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
/* std::vector<Tensor*>: one pointer per item of the (vector) output, as many as inference
 * gave it (pd_output_count); the tensors the kernel defines become the output's items. */
template <class P> struct holder<pkind::vec_out_ptr, P> {
    std::vector<Tensor> v;
    std::vector<Tensor *> ptrs;
    holder(pd_kernel_ctx *ctx, int32_t i)
        : v(static_cast<size_t>(std::max<int32_t>(pd_output_count(ctx, i), 0)))
    {
        ptrs.reserve(v.size());
        for (Tensor &t : v)
            ptrs.push_back(&t);
    }
    std::vector<Tensor *> &get() { return ptrs; }
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
        int cat = kinds[k] == pkind::attr                                        ? 1
                  : kinds[k] == pkind::out_ptr || kinds[k] == pkind::vec_out_ptr ? 2
                                                                                 : 0;
        if (cat == which)
            ++n;
    }
    return n;
}
template <size_t N> constexpr int which_of(const pkind (&kinds)[N], size_t i)
{
    return kinds[i] == pkind::attr                                        ? 1
           : kinds[i] == pkind::out_ptr || kinds[i] == pkind::vec_out_ptr ? 2
                                                                          : 0;
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
        return signature{what, reinterpret_cast<const uint8_t *>(kinds), attrs, sizeof...(Args)};
    }

    template <size_t I> static constexpr int32_t index()
    {
        return index_before(kinds, I, which_of(kinds, I));
    }
    /* Infer functions: an attr parameter is the next attr handed to the function (see
     * op_info.infer_attrs; `shape` picks infer_shape's list). */
    template <size_t I> static int32_t infer_index(const op_info &info, bool shape)
    {
        if constexpr (kinds[I] != pkind::attr) {
            (void)info;
            (void)shape;
            return index<I>();
        } else {
            int32_t rank = index<I>();
            int list = shape ? 1 : 0;
            return rank < info.n_infer_attrs[list] ? info.infer_attrs[list][rank] : -1;
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

} // namespace detail
} // namespace paddle

#endif /* PDEXT_PADDLE_KERNEL_PARAMS_H */
