/*
 * pd_op.h - an op is data: the pd_op_def struct, the PD_BUILD_*_OP macros that emit one into
 * the "pd_ops" ELF section, attribute values, and Paddle's name helpers.
 *
 * PD_BUILD_OP(name, ...) expands to a const pd_op_def and a pointer to it placed in the
 * section "pd_ops". Because that name is a C identifier, the linker provides
 * __start_pd_ops / __stop_pd_ops, so the table of every op linked into a library (or an
 * executable) is one array: no constructors, no registrars. The runtime validates each
 * definition when it loads the module (see pdext.h: pd_module_load).
 *
 *     PD_BUILD_OP(custom_relu,
 *         .inputs  = {"X"},
 *         .outputs = {"Out"},
 *         .kernel  = relu_forward);
 *
 * Fields are given with designated initializers. In C they may come in any order; C++20
 * requires declaration order: inputs, outputs, attrs, inplace, kernel, infer_shape,
 * infer_dtype, flags, strided_inputs.
 */
#ifndef PD_OP_H
#define PD_OP_H

#include "pd_base.h"
#include "pd_tensor.h"

#include <string.h>

PD_EXTERN_C_BEGIN

/* Capacity of each list in pd_op_def. Unused entries are NULL; the first NULL ends a list. */
#define PD_MAX_INPUTS 16
#define PD_MAX_OUTPUTS 16
#define PD_MAX_ATTRS 16
#define PD_MAX_INPLACE 8

/* Paddle's name helpers; they nest: PD_GRAD(PD_VEC("X")) is "X@VECTOR@GRAD". */
#define PD_GRAD(name) name "@GRAD"         /* the gradient of name */
#define PD_VEC(name) name "@VECTOR"        /* a vector input/output: any number of tensors */
#define PD_OPTIONAL(name) name "@OPTIONAL" /* an input that may be absent (NULL in kernels) */
#define PD_NEW(name) name "@NEW"           /* a distinct output in an inplace map */

typedef enum pd_op_kind {
    PD_OP_FORWARD = 0,    /* registered as <name> */
    PD_OP_GRAD = 1,       /* registered as <name>_grad */
    PD_OP_DOUBLE_GRAD = 2 /* registered as <name>_grad_grad */
} pd_op_kind;

/* The runtime's per-call state; opaque. Kernels and infer functions reach inputs, attrs and
 * outputs through it (see pd_api.h). */
typedef struct pd_kernel_ctx pd_kernel_ctx;

/* The one signature of kernels, infer_shape and infer_dtype functions. */
typedef void (*pd_kernel_fn)(pd_kernel_ctx *ctx);
/* An op's workspace function (pd_op_def.workspace): the bytes of scratch memory its kernel
 * needs, computed from the bound inputs and attrs (read through ctx, as infer functions do;
 * no outputs yet). It may throw (PD_CHECK); a negative result is an error. */
typedef int64_t (*pd_workspace_fn)(pd_kernel_ctx *ctx);

/*
 * One op definition. struct_size lets a newer runtime read a definition built against an
 * older SDK: fields past struct_size are taken as zero. Append-only.
 */
/* In C++ the optional fields get default member initializers, so that g++ does not warn
 * about the fields a PD_BUILD_OP leaves out (C zero-fills them without a word). */
#ifdef __cplusplus
#define PD__ZERO = {}
#else
#define PD__ZERO
#endif

typedef struct pd_op_def {
    uint32_t struct_size; /* sizeof(pd_op_def) where the op was compiled */
    int32_t kind;         /* pd_op_kind */
    const char *name;     /* the forward op's name, also for grad ops */
    const char *file;     /* source file of the definition, for messages */
    int32_t line;         /* its line */
    /* Input names, in order: "X", PD_VEC("X"), PD_OPTIONAL("Y"), PD_GRAD("Out"), ... */
    const char *inputs[PD_MAX_INPUTS] PD__ZERO;
    /* Output names, in order; PD_VEC for a vector output. */
    const char *outputs[PD_MAX_OUTPUTS] PD__ZERO;
    /* Attribute declarations "name: type", type in Paddle's spellings (bool, int, float,
     * double, int64_t, std::string, std::vector<int>, std::vector<float>,
     * std::vector<int64_t>, std::vector<std::string>) or the C aliases int32, int64, string,
     * int[], float[], int64[], string[]. "name: type = default" gives a default, written as in
     * C++ ("axis: int64_t = -1", "scale: float = 0.5f", "flag: bool = true",
     * "mode: std::string = \"sum\"", "dims: std::vector<int> = {1, 2}"); a call that leaves
     * the attr out gets it. A default that is not a value of the type refuses the module. */
    const char *attrs[PD_MAX_ATTRS] PD__ZERO;
    /* Inplace map: pairs {input, output}; the output is the input tensor itself. */
    const char *inplace[PD_MAX_INPLACE][2] PD__ZERO;
    pd_kernel_fn kernel PD__ZERO;      /* required: computes the outputs */
    pd_kernel_fn infer_shape PD__ZERO; /* optional: sets output shapes (pd_set_output_shape) */
    pd_kernel_fn infer_dtype PD__ZERO; /* optional: sets output dtypes (pd_set_output_dtype) */
    /* PD_OP_* bits. 0 (the default): every input the kernel sees is dense (pd_tensor.h), the
     * runner making strided ones contiguous first. */
    uint32_t flags PD__ZERO;
    /* Inputs that may reach the kernel strided, one bit per declared input position:
     * PD_INPUT_BIT(0) | PD_INPUT_BIT(2). PD_OP_STRIDED_INPUTS in flags means all of them. The
     * kernel then reads those inputs through their strides (pd_stride, pd_tensor.strides,
     * filled in every tensor it gets), or calls pd_contiguous itself. */
    uint32_t strided_inputs PD__ZERO;
    /* Optional: the workspace the kernel needs (pd_workspace_fn). The runner allocates that
     * many bytes on the op's place (its first input's) for the call and the kernel gets them
     * with pd_workspace(ctx): in the synchronous runner when the kernel first asks, in the
     * executor (pdext_executor.h) in the allocate stage, before the launch. ABI 2.2. */
    pd_workspace_fn workspace PD__ZERO;
} pd_op_def;

/* pd_op_def.flags: every input of the op may be strided (see strided_inputs). */
#define PD_OP_STRIDED_INPUTS 0x1u
/* pd_op_def.flags: every output that mirrors no other input (not inplace, not a gradient of an
 * input) takes input 0's shape and dtype, as the only output of a one-input op does, so that an
 * op with more inputs needs no infer_shape / infer_dtype (which, if given, still decide). */
#define PD_OP_OUTPUTS_LIKE_INPUT0 0x2u
/* pd_op_def.flags: the kernel may block or run long whatever the size of its inputs (it waits
 * for another thread, sleeps, or loops on an attr). Hosts then never run it while holding a
 * lock of their own: the Python front releases the GIL for every call of it, where a call on
 * a few KiB would otherwise keep the GIL through the kernel, and an executor
 * (pdext_executor.h) always runs it on a worker, never on the submitting thread. */
#define PD_OP_MAY_BLOCK 0x4u
/* pd_op_def.flags: the leading dimension may be a batch. The op's author promises that one call
 * on inputs that all carry one extra leading dimension of the same size B (each tensor of a
 * vector input too) gives outputs carrying that leading dimension, item b of each being what a
 * call on item b of every input, with the same attrs, gives; the infer functions (if any) size
 * the outputs so. Elementwise ops have it, and ops that work on their trailing dimensions only
 * (a softmax over the last one, a matmul over the last two). Hosts that batch (pdext.jax under
 * jax.vmap) then make one call for a whole batch instead of one per item. Edge cases: the
 * promise holds only for equal leading sizes (a host broadcasts an unbatched input to B
 * first); an absent optional input stays absent; an op whose attrs count dimensions from the
 * front (axis = 0) or whose outputs are sized by attrs alone breaks it and must not declare
 * it; an op without inputs cannot declare it (the runtime refuses the module). The runtime
 * itself does not rely on it: it is a declaration hosts read (pd_op_definition); a runtime
 * older than the flag refuses the module, naming the bit it does not know. */
#define PD_OP_LEADING_BATCH 0x8u
/* pd_op_def.strided_inputs: the bit of input `index` (0 .. PD_MAX_INPUTS-1). */
#define PD_INPUT_BIT(index) (1u << (index))

/* Attribute types. Values are part of the ABI. */
typedef enum pd_attr_type {
    PD_ATTR_UNDEFINED = 0,
    PD_ATTR_BOOL = 1,    /* bool */
    PD_ATTR_INT = 2,     /* int (int32_t) */
    PD_ATTR_FLOAT = 3,   /* float */
    PD_ATTR_DOUBLE = 4,  /* double */
    PD_ATTR_INT64 = 5,   /* int64_t */
    PD_ATTR_STRING = 6,  /* std::string: a NUL-terminated string */
    PD_ATTR_INTS = 7,    /* std::vector<int> */
    PD_ATTR_FLOATS = 8,  /* std::vector<float> */
    PD_ATTR_INT64S = 9,  /* std::vector<int64_t> */
    PD_ATTR_STRINGS = 10 /* std::vector<std::string> */
} pd_attr_type;

/* An attribute value, as a host passes it to the runner and a kernel reads it. Vector values
 * point at `count` elements owned by whoever built the pd_attr (the runner does not copy
 * them: they must stay valid for the call). */
typedef struct pd_attr {
    const char *name; /* the declared name */
    pd_attr_type type;
    int32_t count; /* element count for vector types; 0 otherwise */
    union {
        bool b;
        int32_t i;
        float f;
        double d;
        int64_t i64;
        const char *s;
        const int32_t *ints;
        const float *floats;
        const int64_t *int64s;
        const char *const *strings;
    } v;
} pd_attr;

/* Attribute value builders, for hosts. */
static inline pd_attr pd__attr_make(const char *name, pd_attr_type type)
{
    pd_attr a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.type = type;
    return a;
}
/* One builder per type: pd_attr_of_<type>(name, value) for scalars and
 * pd_attr_of_<type>s(name, values, count) for vectors (the values are not copied). Each line
 * names the function it defines in full. */
#define PD__ATTR_SCALAR_BUILDER(fn, ctype, tag, member) \
    static inline pd_attr fn(const char *n, ctype v)    \
    {                                                   \
        pd_attr a = pd__attr_make(n, tag);              \
        a.v.member = v;                                 \
        return a;                                       \
    }
#define PD__ATTR_VECTOR_BUILDER(fn, ctype, tag, member)                    \
    static inline pd_attr fn(const char *n, const ctype *v, int32_t count) \
    {                                                                      \
        pd_attr a = pd__attr_make(n, tag);                                 \
        a.v.member = v;                                                    \
        a.count = count;                                                   \
        return a;                                                          \
    }
PD__ATTR_SCALAR_BUILDER(pd_attr_of_bool, bool, PD_ATTR_BOOL, b)
PD__ATTR_SCALAR_BUILDER(pd_attr_of_int, int32_t, PD_ATTR_INT, i)
PD__ATTR_SCALAR_BUILDER(pd_attr_of_float, float, PD_ATTR_FLOAT, f)
PD__ATTR_SCALAR_BUILDER(pd_attr_of_double, double, PD_ATTR_DOUBLE, d)
PD__ATTR_SCALAR_BUILDER(pd_attr_of_int64, int64_t, PD_ATTR_INT64, i64)
PD__ATTR_SCALAR_BUILDER(pd_attr_of_string, const char *, PD_ATTR_STRING, s)
PD__ATTR_VECTOR_BUILDER(pd_attr_of_ints, int32_t, PD_ATTR_INTS, ints)
PD__ATTR_VECTOR_BUILDER(pd_attr_of_floats, float, PD_ATTR_FLOATS, floats)
PD__ATTR_VECTOR_BUILDER(pd_attr_of_int64s, int64_t, PD_ATTR_INT64S, int64s)
PD__ATTR_VECTOR_BUILDER(pd_attr_of_strings, char *const, PD_ATTR_STRINGS, strings)
#undef PD__ATTR_SCALAR_BUILDER
#undef PD__ATTR_VECTOR_BUILDER

/* The attr type of a type spelling of a declaration, exactly as written (no spaces): Paddle's
 * ("int64_t", "std::vector<int>", ...) or the C aliases ("int64", "int[]", ...);
 * PD_ATTR_UNDEFINED for any other. The one table of spellings: the runtime's declaration
 * parser and the Paddle front both read it. */
static inline pd_attr_type pd_attr_type_of_spelling(const char *spelling)
{
    static const struct {
        const char *spelling;
        pd_attr_type type;
    } types[] = {
        {"bool", PD_ATTR_BOOL},        {"int", PD_ATTR_INT},
        {"int32", PD_ATTR_INT},        {"float", PD_ATTR_FLOAT},
        {"double", PD_ATTR_DOUBLE},    {"int64_t", PD_ATTR_INT64},
        {"int64", PD_ATTR_INT64},      {"std::string", PD_ATTR_STRING},
        {"string", PD_ATTR_STRING},    {"std::vector<int>", PD_ATTR_INTS},
        {"int[]", PD_ATTR_INTS},       {"std::vector<float>", PD_ATTR_FLOATS},
        {"float[]", PD_ATTR_FLOATS},   {"std::vector<int64_t>", PD_ATTR_INT64S},
        {"int64[]", PD_ATTR_INT64S},   {"std::vector<std::string>", PD_ATTR_STRINGS},
        {"string[]", PD_ATTR_STRINGS},
    };
    for (size_t i = 0; i < sizeof types / sizeof types[0]; ++i)
        if (strcmp(spelling, types[i].spelling) == 0)
            return types[i].type;
    return PD_ATTR_UNDEFINED;
}

/* Paddle's spelling of an attr type ("int64_t", "std::vector<int>", ...); "undefined" else. */
static inline const char *pd_attr_type_name(pd_attr_type t)
{
    static const char *const names[] = {"undefined",
                                        "bool",
                                        "int",
                                        "float",
                                        "double",
                                        "int64_t",
                                        "std::string",
                                        "std::vector<int>",
                                        "std::vector<float>",
                                        "std::vector<int64_t>",
                                        "std::vector<std::string>"};
    return ((unsigned)t <= PD_ATTR_STRINGS) ? names[t] : "undefined";
}

/* --- Emitting definitions -------------------------------------------------------------- */

#define PD__OP_SECTION __attribute__((section("pd_ops"), used, aligned(sizeof(void *))))

/* At most PD_MAX_INPUTS declared inputs, checked at compile time. C cannot read an
 * initializer back as a constant expression, so PD__BUILD also initializes, inside a sizeof
 * (nothing is emitted), a probe laid out like pd_op_def whose `inputs` have one slot more. An
 * input past PD_MAX_INPUTS lands in that slot, which makes it an error:
 *   C++ and CUDA: static_assert "PD_BUILD_OP declares more than 16 inputs (PD_MAX_INPUTS)";
 *   C: the slot is a pointer to struct PD_BUILD_OP_declares_more_than_16_inputs, and
 *      initializing it from a string is made an error (-Wincompatible-pointer-types) that
 *      names that struct.
 * (Without the probe, C only warns "excess elements in array initializer" and drops it.) */
#ifdef __cplusplus
typedef const char *pd__input_overflow;
#else
typedef struct PD_BUILD_OP_declares_more_than_16_inputs *pd__input_overflow;
#endif
#define PD__TOO_MANY_INPUTS "PD_BUILD_OP declares more than 16 inputs (PD_MAX_INPUTS)"

/* pd_op_def, member for member, but for the overflow slot of `inputs`. */
typedef struct pd__op_probe {
    uint32_t struct_size;
    int32_t kind;
    const char *name;
    const char *file;
    int32_t line;
    struct {
        const char *declared[PD_MAX_INPUTS];
        pd__input_overflow overflow;
    } inputs PD__ZERO;
    const char *outputs[PD_MAX_OUTPUTS] PD__ZERO;
    const char *attrs[PD_MAX_ATTRS] PD__ZERO;
    const char *inplace[PD_MAX_INPLACE][2] PD__ZERO;
    pd_kernel_fn kernel PD__ZERO;
    pd_kernel_fn infer_shape PD__ZERO;
    pd_kernel_fn infer_dtype PD__ZERO;
    uint32_t flags PD__ZERO;
    uint32_t strided_inputs PD__ZERO;
    pd_workspace_fn workspace PD__ZERO;
} pd__op_probe;

#ifdef __cplusplus
#define PD__STATIC_ASSERT static_assert
static constexpr bool pd__inputs_fit(const pd__op_probe &p) { return p.inputs.overflow == nullptr; }
#define PD__INPUTS_FIT(...) pd__inputs_fit(pd__op_probe{__VA_ARGS__})
#define PD__PROBE_DIAGNOSTICS
#else
#define PD__STATIC_ASSERT _Static_assert
#define PD__INPUTS_FIT(...) (sizeof((pd__op_probe){__VA_ARGS__}) != 0)
#define PD__PROBE_DIAGNOSTICS _Pragma("GCC diagnostic error \"-Wincompatible-pointer-types\"")
#endif
PD__STATIC_ASSERT(PD_MAX_INPUTS == 16, "rename PD_BUILD_OP_declares_more_than_16_inputs");
PD__STATIC_ASSERT(sizeof(pd__op_probe) == sizeof(pd_op_def) + sizeof(pd__input_overflow) &&
                      offsetof(pd__op_probe, infer_dtype) ==
                          offsetof(pd_op_def, infer_dtype) + sizeof(pd__input_overflow),
                  "pd__op_probe must have the members of pd_op_def, in their order");

/* The probe's initializer elides the braces of `inputs` and leaves the overflow slot out. */
#define PD__CHECK_INPUT_COUNT(kind_, op_name, ...)                                                 \
    _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wmissing-braces\"") _Pragma( \
        "GCC diagnostic ignored \"-Wmissing-field-initializers\"")                                 \
        PD__PROBE_DIAGNOSTICS PD__STATIC_ASSERT(PD__INPUTS_FIT(.struct_size = 0, .kind = kind_,    \
                                                               .name = #op_name, .file = __FILE__, \
                                                               .line = __LINE__, __VA_ARGS__),     \
                                                PD__TOO_MANY_INPUTS);                              \
    _Pragma("GCC diagnostic pop")

#define PD__BUILD(kind_, suffix, op_name, ...)                                                    \
    PD__CHECK_INPUT_COUNT(kind_, op_name, __VA_ARGS__)                                            \
    static const pd_op_def PD__CAT(pd__def_,                                                      \
                                   PD__CAT(op_name, suffix)) = {.struct_size = sizeof(pd_op_def), \
                                                                .kind = kind_,                    \
                                                                .name = #op_name,                 \
                                                                .file = __FILE__,                 \
                                                                .line = __LINE__,                 \
                                                                __VA_ARGS__};                     \
    PD__OP_SECTION static const pd_op_def *const PD__CAT(pd__ptr_, PD__CAT(op_name, suffix)) =    \
        &PD__CAT(pd__def_, PD__CAT(op_name, suffix))

/* Defines forward op `name` (an identifier). Fields: see pd_op_def. */
#define PD_BUILD_OP(name, ...) PD__BUILD(PD_OP_FORWARD, _forward, name, __VA_ARGS__)
/* Defines the grad op of forward op `name`; it is registered as <name>_grad. */
#define PD_BUILD_GRAD_OP(name, ...) PD__BUILD(PD_OP_GRAD, _grad, name, __VA_ARGS__)
/* Defines the double grad op of forward op `name`; registered as <name>_grad_grad. */
#define PD_BUILD_DOUBLE_GRAD_OP(name, ...) \
    PD__BUILD(PD_OP_DOUBLE_GRAD, _grad_grad, name, __VA_ARGS__)

PD_EXTERN_C_END

#endif /* PD_OP_H */
