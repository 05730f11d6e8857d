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
 * The builder also records the PD_KERNEL / PD_INFER_* signatures in the op's pd_paddle_op
 * (pd_paddle_op.h); at the op's first call the runtime checks them against the declared
 * inputs and attrs (that code is libpdext's, compiled once, not in every module), and a
 * mismatch (or too many names) fails every call of the op, naming the op.
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

/* One op's definition, the strings it points at and its record for the runtime. */
struct op_storage {
    pd_op_def def{};
    /* Moved in whole from the builder's arguments: a vector's elements keep their addresses
     * when the vector is moved, so the definition's pointers stay valid. */
    std::vector<std::string> inputs, outputs, attrs;
    std::string inplace[PD_MAX_INPLACE][2];
    op_info info{};
};

/* Takes `names` into the record's strings and the definition's list; more names than the
 * list holds are recorded for the runtime's message (pd_paddle_op.overflow). */
inline void fill_list(op_storage &s, const char *list, std::vector<std::string> &&names,
                      std::vector<std::string> &store, const char **slots, size_t n)
{
    if (names.size() > n) {
        s.info.overflow = list;
        s.info.overflow_count = names.size();
    }
    store = std::move(names);
    for (size_t i = 0; i < n; ++i)
        slots[i] = i < store.size() ? store[i].c_str() : nullptr;
}

/* Paddle's builder, bound to the record of one op by its Tag (see PD_BUILD_OP). */
template <class Tag> class op_builder {
public:
    op_builder(const char *name, pd_op_kind kind, const char *file, int line)
    {
        op_storage &s = Tag::storage();
        s.info.def = &s.def;
        pd_op_def &d = s.def;
        d.struct_size = sizeof(pd_op_def);
        d.kind = kind;
        d.name = name;
        d.file = file;
        d.line = line;
    }
    op_builder &Inputs(std::vector<std::string> &&names)
    {
        op_storage &s = Tag::storage();
        fill_list(s, "inputs", std::move(names), s.inputs, s.def.inputs, PD_MAX_INPUTS);
        return *this;
    }
    op_builder &Outputs(std::vector<std::string> &&names)
    {
        op_storage &s = Tag::storage();
        fill_list(s, "outputs", std::move(names), s.outputs, s.def.outputs, PD_MAX_OUTPUTS);
        return *this;
    }
    op_builder &Attrs(std::vector<std::string> &&decls)
    {
        op_storage &s = Tag::storage();
        fill_list(s, "attrs", std::move(decls), s.attrs, s.def.attrs, PD_MAX_ATTRS);
        return *this;
    }
    op_builder &SetInplaceMap(std::unordered_map<std::string, std::string> &&map)
    {
        op_storage &s = Tag::storage();
        if (map.size() > PD_MAX_INPLACE) {
            s.info.overflow = "inplace";
            s.info.overflow_count = map.size();
        }
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
        return *this;
    }
    template <class F, F fn> op_builder &SetKernelFn(kernel_fn<F, fn> k)
    {
        op_storage &s = Tag::storage();
        s.def.kernel = &kernel_fn<F, fn>::template call<Tag>;
        s.info.sig[0] = k.sig();
        return *this;
    }
    template <class F, F fn> op_builder &SetInferShapeFn(infer_shape_fn<F, fn> f)
    {
        op_storage &s = Tag::storage();
        s.def.infer_shape = &infer_shape_fn<F, fn>::template call<Tag>;
        s.info.sig[1] = f.sig();
        return *this;
    }
    template <class F, F fn> op_builder &SetInferDtypeFn(infer_dtype_fn<F, fn> f)
    {
        op_storage &s = Tag::storage();
        s.def.infer_dtype = &infer_dtype_fn<F, fn>::template call<Tag>;
        s.info.sig[2] = f.sig();
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
        static ::paddle::detail::op_info &info() { return storage().info; }                  \
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
