/*
 * paddle/op_builder.h - Paddle's op registration: PD_BUILD_OP(name).Inputs({...})
 * .Outputs({...}).Attrs({...}).SetKernelFn(PD_KERNEL(fn)).SetInferShapeFn(...)
 * .SetInferDtypeFn(...).SetInplaceMap({...}), PD_BUILD_GRAD_OP, PD_BUILD_DOUBLE_GRAD_OP, and
 * the name helpers paddle::Grad, Vec, Optional, New.
 *
 * Each PD_BUILD_*_OP emits, in an unnamed namespace of the translation unit:
 *   - a record (op_storage) holding a pd_op_def and the strings it points at;
 *   - a pointer to that pd_op_def in the "pd_ops" section: the same table C ops use, so the
 *     same loader registers it. The pointer is constant-initialized (an address);
 *   - a static builder, whose initializer (the chained calls) fills the pd_op_def.
 * Filling is a static initializer because Paddle's builder takes std::vector<std::string>
 * and std::unordered_map arguments, which are no constant expressions. Initializers run
 * before the table is read: dlopen runs a module's initializers before it returns (so
 * before pd_module_load calls pdext_module_info), and a program's own before main (linked
 * ops and bundles registered from main). Registering linked Paddle ops from another static
 * initializer is not supported (initialization order across units is unspecified).
 *
 * The builder also checks PD_KERNEL / PD_INFER_* signatures against the declared inputs and
 * attrs; a mismatch (or too many names) is kept in the op's record, and every call of the op
 * fails with it, naming the op.
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_OP_BUILDER_H
#define PDEXT_PADDLE_OP_BUILDER_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/op_builder.h"
#endif

#include <cstring>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace paddle {

/* Paddle's name helpers: "X@GRAD", "X@VECTOR", "X@OPTIONAL", "X@NEW". */
inline std::string Grad(const std::string &name) { return name + "@GRAD"; }
inline std::string Vec(const std::string &name) { return name + "@VECTOR"; }
inline std::string Optional(const std::string &name) { return name + "@OPTIONAL"; }
inline std::string New(const std::string &name) { return name + "@NEW"; }

namespace detail {

/* One op's definition and the strings it points at. */
struct op_storage {
    pd_op_def def{};
    std::string inputs[PD_MAX_INPUTS];
    std::string outputs[PD_MAX_OUTPUTS];
    std::string attrs[PD_MAX_ATTRS];
    std::string inplace[PD_MAX_INPLACE][2];
    signature kernel_sig, shape_sig, dtype_sig;
    std::string list_error; /* too many names */
    op_info info;
};

inline bool has_suffix(const std::string &s, const char *suffix)
{
    return s.find(suffix) != std::string::npos;
}

/* The type of an attr declaration "name: type [= default]"; PD_ATTR_UNDEFINED if unknown. */
inline pd_attr_type declared_attr_type(const std::string &decl, std::string *name)
{
    size_t colon = decl.find(':');
    if (colon == std::string::npos)
        return PD_ATTR_UNDEFINED;
    auto trim = [](std::string s) {
        size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
        return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
    };
    *name = trim(decl.substr(0, colon));
    std::string type = trim(decl.substr(colon + 1, decl.find('=', colon) - colon - 1));
    std::string squeezed; /* "std::vector< int >" is "std::vector<int>" */
    for (char c : type)
        if (c != ' ' && c != '\t')
            squeezed += c;
    return pd_attr_type_of_spelling(squeezed.c_str());
}

inline const char *kind_text(pkind k)
{
    switch (k) {
    case pkind::vec:
    case pkind::vec_inplace:
    case pkind::vec_shape:
    case pkind::vec_dtype: return "a vector input";
    case pkind::opt:
    case pkind::opt_shape:
    case pkind::opt_dtype: return "an optional input";
    case pkind::opt_vec:
    case pkind::opt_vec_shape:
    case pkind::opt_vec_dtype: return "an optional vector input";
    default: return "a plain input";
    }
}

/* The first difference between a wrapper's parameters and the declarations; "" if none. */
inline std::string check_signature(const op_info &info, const std::string *inputs,
                                   const signature &sig, const char *fn_text)
{
    if (sig.kinds == nullptr)
        return "";
    int32_t in = 0, at = 0;
    bool kernel = std::strcmp(sig.what, "PD_KERNEL") == 0;
    int list = std::strcmp(sig.what, "PD_INFER_SHAPE") == 0 ? 1 : 0; /* op_info.infer_attrs */
    for (size_t p = 0; p < sig.n; ++p) {
        pkind k = sig.kinds[p];
        std::string where = std::string(sig.what) + "(" + fn_text + "): parameter " +
                            std::to_string(p + 1);
        if (k == pkind::out_ptr || k == pkind::vec_out_ptr)
            continue;
        if (k == pkind::attr && !kernel) { /* the attrs Paddle hands it: op_info.infer_attrs */
            int32_t rank = at++;
            if (rank >= info.n_infer_attrs[list])
                return where + " takes an attr (" + pd_attr_type_name(sig.attrs[p]) +
                       "), but the op hands it only " + std::to_string(info.n_infer_attrs[list]) +
                       " attr" + (info.n_infer_attrs[list] == 1 ? "" : "s") +
                       (list ? " (Paddle hands a shape function every attr but the "
                               "std::vector<int64_t> ones, in declared order)"
                             : " (Paddle hands a dtype function every attr, in declared order)");
            int32_t a = info.infer_attrs[list][rank];
            if (info.attr_type[a] != sig.attrs[p])
                return where + " takes " + pd_attr_type_name(sig.attrs[p]) + ", but the attr " +
                       "Paddle hands it there is '" + info.attr_name[a] + "', declared " +
                       pd_attr_type_name(info.attr_type[a]) +
                       (list ? " (a shape function gets every attr but the "
                               "std::vector<int64_t> ones, in declared order)"
                             : " (a dtype function gets every attr, in declared order)");
            continue;
        }
        if (k == pkind::attr) {
            if (at >= info.n_attrs)
                return where + " takes an attr (" + pd_attr_type_name(sig.attrs[p]) +
                       "), but the op declares " + std::to_string(info.n_attrs) + " attr" +
                       (info.n_attrs == 1 ? "" : "s");
            if (info.attr_type[at] != sig.attrs[p])
                return where + " takes " + pd_attr_type_name(sig.attrs[p]) + ", but attr '" +
                       info.attr_name[at] + "' is declared " +
                       pd_attr_type_name(info.attr_type[at]);
            ++at;
            continue;
        }
        if (in >= info.n_inputs)
            return where + " takes a tensor input, but the op declares " +
                   std::to_string(info.n_inputs) + " input" + (info.n_inputs == 1 ? "" : "s");
        bool vec = is_vector_kind(k), opt = is_optional_kind(k);
        if (vec != info.in_vector[in] || opt != info.in_optional[in])
            return where + " is " + kind_text(k) + ", but input '" + inputs[in] + "' is declared " +
                   (info.in_vector[in] && info.in_optional[in] ? "an optional vector input"
                    : info.in_vector[in]                       ? "a vector input"
                    : info.in_optional[in]                     ? "an optional input"
                                                               : "a plain input");
        ++in;
    }
    /* Kernels take every input and attr; infer functions may stop early (Paddle passes the
     * attrs they name). */
    if (kernel) {
        if (in != info.n_inputs)
            return std::string("PD_KERNEL(") + fn_text + ") takes " + std::to_string(in) +
                   " tensor input" + (in == 1 ? "" : "s") + ", but the op declares " +
                   std::to_string(info.n_inputs);
        if (at != info.n_attrs)
            return std::string("PD_KERNEL(") + fn_text + ") takes " + std::to_string(at) + " attr" +
                   (at == 1 ? "" : "s") + ", but the op declares " + std::to_string(info.n_attrs);
    } else if (in != info.n_inputs) {
        return std::string(sig.what) + "(" + fn_text + ") takes " + std::to_string(in) + " input" +
               (in == 1 ? "" : "s") + ", but the op declares " + std::to_string(info.n_inputs);
    }
    return "";
}

/* Copies `names` into the record's strings and the definition's list. */
template <size_t N>
inline void fill_list(op_storage &s, const char *list, std::vector<std::string> &&names,
                      std::string (&store)[N], const char *(&slots)[N])
{
    if (names.size() > N)
        s.list_error = std::string("the op declares ") + std::to_string(names.size()) + " " + list +
                       "; at most " + std::to_string(N);
    for (size_t i = 0; i < N; ++i) {
        store[i] = i < names.size() ? std::move(names[i]) : std::string();
        slots[i] = i < names.size() ? store[i].c_str() : nullptr;
    }
}

/* Recomputes op_info from the definition and re-checks the signatures. */
inline void refresh(op_storage &s)
{
    op_info &i = s.info;
    i = op_info();
    for (; i.n_inputs < PD_MAX_INPUTS && s.def.inputs[i.n_inputs]; ++i.n_inputs) {
        i.in_vector[i.n_inputs] = has_suffix(s.inputs[i.n_inputs], "@VECTOR");
        i.in_optional[i.n_inputs] = has_suffix(s.inputs[i.n_inputs], "@OPTIONAL");
    }
    for (; i.n_outputs < PD_MAX_OUTPUTS && s.def.outputs[i.n_outputs]; ++i.n_outputs) {
        const std::string &o = s.outputs[i.n_outputs];
        i.out_vector[i.n_outputs] = has_suffix(o, "@VECTOR");
        i.any_vector_output = i.any_vector_output || i.out_vector[i.n_outputs];
        i.out_name[i.n_outputs] = o;
        for (int32_t p = 0; p < PD_MAX_INPLACE && s.def.inplace[p][0]; ++p)
            if (s.inplace[p][1] == o) {
                i.out_inplace[i.n_outputs] = true;
                ++i.n_inplace;
            }
    }
    for (; i.n_attrs < PD_MAX_ATTRS && s.def.attrs[i.n_attrs]; ++i.n_attrs) {
        pd_attr_type t = declared_attr_type(s.attrs[i.n_attrs], &i.attr_name[i.n_attrs]);
        i.attr_type[i.n_attrs] = t;
        i.infer_attrs[0][i.n_infer_attrs[0]++] = i.n_attrs;
        if (t != PD_ATTR_INT64S)
            i.infer_attrs[1][i.n_infer_attrs[1]++] = i.n_attrs;
    }
    i.error = s.list_error;
    if (i.error.empty())
        i.error = check_signature(i, s.inputs, s.kernel_sig, "kernel");
    if (i.error.empty())
        i.error = check_signature(i, s.inputs, s.shape_sig, "infer_shape");
    if (i.error.empty())
        i.error = check_signature(i, s.inputs, s.dtype_sig, "infer_dtype");
}

/* Paddle's builder, bound to the record of one op by its Tag (see PD_BUILD_OP). */
template <class Tag> class op_builder {
public:
    op_builder(const char *name, pd_op_kind kind, const char *file, int line)
    {
        pd_op_def &d = Tag::storage().def;
        d.struct_size = sizeof(pd_op_def);
        d.kind = kind;
        d.name = name;
        d.file = file;
        d.line = line;
    }
    op_builder &Inputs(std::vector<std::string> &&names)
    {
        op_storage &s = Tag::storage();
        fill_list(s, "inputs", std::move(names), s.inputs, s.def.inputs);
        refresh(s);
        return *this;
    }
    op_builder &Outputs(std::vector<std::string> &&names)
    {
        op_storage &s = Tag::storage();
        fill_list(s, "outputs", std::move(names), s.outputs, s.def.outputs);
        refresh(s);
        return *this;
    }
    op_builder &Attrs(std::vector<std::string> &&decls)
    {
        op_storage &s = Tag::storage();
        fill_list(s, "attrs", std::move(decls), s.attrs, s.def.attrs);
        refresh(s);
        return *this;
    }
    op_builder &SetInplaceMap(std::unordered_map<std::string, std::string> &&map)
    {
        op_storage &s = Tag::storage();
        if (map.size() > PD_MAX_INPLACE)
            s.list_error = "the op's inplace map has " + std::to_string(map.size()) +
                           " pairs; at most " + std::to_string(PD_MAX_INPLACE);
        size_t p = 0;
        for (auto &pair : map) {
            if (p == PD_MAX_INPLACE)
                break;
            s.inplace[p][0] = pair.first;
            s.inplace[p][1] = pair.second;
            s.def.inplace[p][0] = s.inplace[p][0].c_str();
            s.def.inplace[p][1] = s.inplace[p][1].c_str();
            ++p;
        }
        refresh(s);
        return *this;
    }
    template <class F, F fn> op_builder &SetKernelFn(kernel_fn<F, fn> k)
    {
        op_storage &s = Tag::storage();
        s.def.kernel = &kernel_fn<F, fn>::template call<Tag>;
        s.kernel_sig = k.sig();
        refresh(s);
        return *this;
    }
    template <class F, F fn> op_builder &SetInferShapeFn(infer_shape_fn<F, fn> f)
    {
        op_storage &s = Tag::storage();
        s.def.infer_shape = &infer_shape_fn<F, fn>::template call<Tag>;
        s.shape_sig = f.sig();
        refresh(s);
        return *this;
    }
    template <class F, F fn> op_builder &SetInferDtypeFn(infer_dtype_fn<F, fn> f)
    {
        op_storage &s = Tag::storage();
        s.def.infer_dtype = &infer_dtype_fn<F, fn>::template call<Tag>;
        s.dtype_sig = f.sig();
        refresh(s);
        return *this;
    }
};

} // namespace detail
} // namespace paddle

#define PD__PADDLE_BUILD(kind_, suffix, op_name)                                             \
    namespace {                                                                              \
    ::paddle::detail::op_storage PD__CAT(pd__pst_, PD__CAT(op_name, suffix));                \
    struct PD__CAT(pd__ptag_, PD__CAT(op_name, suffix)) {                                    \
        static ::paddle::detail::op_storage &storage()                                       \
        {                                                                                    \
            return PD__CAT(pd__pst_, PD__CAT(op_name, suffix));                              \
        }                                                                                    \
        static const ::paddle::detail::op_info &info() { return storage().info; }            \
    };                                                                                       \
    PD__OP_SECTION const pd_op_def *const PD__CAT(pd__ptr_, PD__CAT(op_name, suffix)) =      \
        &PD__CAT(pd__pst_, PD__CAT(op_name, suffix)).def;                                    \
    }                                                                                        \
    [[maybe_unused]] static ::paddle::detail::op_builder<PD__CAT(pd__ptag_,                  \
                                                                 PD__CAT(op_name, suffix))>  \
    PD__CAT(pd__pbuilder_, PD__CAT(op_name, suffix)) =                                       \
        ::paddle::detail::op_builder<PD__CAT(pd__ptag_, PD__CAT(op_name, suffix))>(#op_name, \
                                                                                   kind_,    \
                                                                                   __FILE__, \
                                                                                   __LINE__)

/* Defines forward op `op_name` (an identifier), registered as op_name. */
#define PD_BUILD_OP(op_name) PD__PADDLE_BUILD(PD_OP_FORWARD, _forward, op_name)
/* Defines the grad op of `op_name`, registered as op_name_grad. */
#define PD_BUILD_GRAD_OP(op_name) PD__PADDLE_BUILD(PD_OP_GRAD, _grad, op_name)
/* Defines the double grad op of `op_name`, registered as op_name_grad_grad. */
#define PD_BUILD_DOUBLE_GRAD_OP(op_name) PD__PADDLE_BUILD(PD_OP_DOUBLE_GRAD, _grad_grad, op_name)

#endif /* PDEXT_PADDLE_OP_BUILDER_H */
