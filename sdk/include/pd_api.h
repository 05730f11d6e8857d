/*
 * pd_api.h - the function table through which op code calls the runtime, and the inline
 * wrappers op authors use (pd_input, pd_empty, PD_CHECK, ...).
 *
 * Op modules do not link against libpdext. When the runtime loads a module it stores a
 * pointer to its `const pd_api` in the module's hidden `pd__api` slot (pd_module.h); every
 * wrapper below goes through it. So one op library loads into any host, including one that
 * links libpdext statically, and there is never a second copy of the runtime's state.
 *
 * Errors: every table function that can fail (bad index, bad shape, out of memory) does not
 * return: it ends the op call the way PD_THROW does. Kernels therefore never check results.
 * In C that is a jump to the runner; C++ op code gets a C++ exception instead (see "Errors").
 * Memory: tensors and scratch made through a context belong to the call; the runner releases
 * them when the call ends, whether it succeeds or fails.
 *
 * The table's functions are declared once, in pd_api_list.h; struct pd_api is generated
 * from that list, and so are the runtime's C and C++ tables.
 *
 * Versioning: append-only (see pd_base.h). A module may use every member present in the
 * minor version it was built against; PD_API_HAS tests for a newer one. Other parts of the
 * runtime add blocks of functions through the extension chain (pd_api.ext, pd_api_ext).
 *
 * Longer than 500 lines because it is the op author's whole context API in one place: every
 * wrapper with its one-line contract, in C and in C++.
 */
#ifndef PD_API_H
#define PD_API_H

#include "pd_api_list.h"
#include "pd_base.h"
#include "pd_op.h"
#include "pd_paddle_op.h"
#include "pd_tensor.h"

PD_EXTERN_C_BEGIN

/* A chunk of a pd_parallel_for loop: fn(arg, begin, end) handles indices [begin, end). */
typedef void (*pd_parallel_fn)(void *arg, int64_t begin, int64_t end);

/* Kinds of extension blocks (pd_api_ext.type). Values are part of the ABI. */
typedef enum pd_api_ext_type {
    PD_API_EXT_NONE = 0 /* never used by a block; pd_api_ext_find(api, 0) finds nothing */
} pd_api_ext_type;

/* The head of a block of table functions that another part of the runtime adds (a device's
 * streams, ...), chained from pd_api.ext as XLA FFI chains its extensions: a new block is a
 * new type number, never a change to pd_api, and a runtime without it has no such block in
 * its chain. A block's own functions follow its head; the block is append-only, and its
 * struct_size says how much of it the runtime has. */
typedef struct pd_api_ext {
    uint32_t struct_size;          /* sizeof the whole block in the runtime */
    uint32_t type;                 /* pd_api_ext_type */
    const struct pd_api_ext *next; /* the next block; NULL ends the chain */
} pd_api_ext;

/* Members of pd_api generated from the list (pd_api_list.h). */
#define PD__API_MEMBER(ret, member, params, args, failed, c_fn, cxx_fn) ret(*member) params;
#define PD__API_MEMBER_VOID(member, params, args, c_fn, cxx_fn) void(*member) params;
#define PD__API_MEMBER_SAME(ret, member, params, attrs, fn) ret(*member) params attrs;

typedef struct pd_api {
    uint32_t struct_size; /* sizeof(pd_api) in the runtime: members past it are absent */
    uint32_t abi_major;   /* PD_ABI_MAJOR of the runtime */
    uint32_t abi_minor;   /* PD_ABI_MINOR of the runtime */
    uint32_t reserved;    /* 0 */
    /* Extension blocks (pd_api_ext); NULL when the runtime has none. */
    const pd_api_ext *ext;
    /* The same table for C++ op code, whose frames must not be jumped over: its context
     * functions return on failure (NULL, -1 or nothing, as the list says) with the error
     * pending instead of ending the call. The call still fails when the op code returns,
     * even if the code caught the exception the C++ wrappers below made of the error. */
    const struct pd_api *cxx;
    /* The functions, in list order: see pd_api_list.h for what each does. */
    PD_API_LIST(PD__API_MEMBER, PD__API_MEMBER_VOID, PD__API_MEMBER_SAME)
} pd_api;

/* True when `api` (a runtime's table) has `member`: for modules that use a member newer
 * than the oldest runtime they support. */
#define PD_API_HAS(api, member) \
    ((api)->struct_size >= offsetof(pd_api, member) + sizeof((api)->member))

/* The extension block of `type` in api's chain; NULL when the runtime has none. */
static inline const pd_api_ext *pd_api_ext_find(const pd_api *api, uint32_t type)
{
    const pd_api_ext *e = PD_API_HAS(api, ext) ? api->ext : NULL;
    for (; e != NULL; e = e->next)
        if (e->type == type && type != PD_API_EXT_NONE)
            return e;
    return NULL;
}

/* The runtime's table as seen by this module: one hidden slot per module (defined weak by
 * extension.h, so every translation unit of a library shares it), set by the loader. */
extern const pd_api *pd__api __attribute__((weak, visibility("hidden")));

/* --- Errors -------------------------------------------------------------------------------
 *
 * C: PD_THROW, PD_CHECK and failing table functions end the op call at once with a longjmp
 * to the runner; nothing after them runs.
 *
 * C++ (compiled with exceptions, also CUDA host code): they throw pd::op_error (a
 * std::exception with the message, file and line) instead, so the destructors of the op
 * code's locals run. The module's invoke hook (extension.h) catches it and any other
 * exception where the runtime called the kernel or infer function, and the call fails with
 * PD_ERR_OP_FAILED and "<op>: <message> [file:line]" (the same text as in C),
 * "<op>: C++ exception: <what()>" or "<op>: unknown C++ exception". Table functions fail the
 * same way ("<op>: <message>", their own status), through pd_api.cxx: such an error ends the
 * call even if the op code catches it; a pd::op_error of PD_CHECK / PD_THROW may be caught
 * and handled like any exception. C code called from C++ op code still jumps: keep PD_CHECK
 * out of C helpers that C++ frames with destructors call. */
#if defined(__cplusplus) && (defined(__cpp_exceptions) || defined(__EXCEPTIONS))
#define PD__CXX_EXCEPTIONS 1
#endif

#ifndef PD__CXX_EXCEPTIONS
static inline PD_NORETURN_ATTR PD_PRINTF(3, 4) void pd__throw(const char *file, int line,
                                                              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pd__api->throw_error(file, line, fmt, ap);
}

/* Calls of the table by the wrappers below: C goes straight to it. */
#define PD__CALL(ctx, call) (pd__api->call)
#define PD__CALL_VOID(ctx, call) (pd__api->call)
#endif

PD_EXTERN_C_END

#ifdef PD__CXX_EXCEPTIONS
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <type_traits>

/* This part uses no std template that its own code would instantiate (only members of
 * std::string, which libstdc++ instantiates itself): C++ op code that includes it defines no
 * global symbol beyond its own. */
namespace pd {

/* What PD_THROW / PD_CHECK and failing table functions throw in C++ op code. */
class op_error : public std::exception {
public:
    op_error(const char *message, const char *file, int line, pd_status status = PD_ERR_OP_FAILED)
        : message_(message ? message : "", message ? std::strlen(message) : 0), file_(file),
          line_(line), status_(status)
    {}
    op_error(const std::string &message, const char *file, int line,
             pd_status status = PD_ERR_OP_FAILED)
        : message_(message), file_(file), line_(line), status_(status)
    {}
    const char *what() const noexcept override { return message_.c_str(); }
    const char *file() const noexcept { return file_; } /* NULL for a table function's error */
    int line() const noexcept { return line_; }
    pd_status status() const noexcept { return status_; }

private:
    std::string message_;
    const char *file_;
    int line_;
    pd_status status_;
};

} /* namespace pd */

struct pd__va_end_guard {
    va_list *ap;
    ~pd__va_end_guard() { va_end(*ap); }
};

/* The author's text as the runtime reports it: leading white space dropped (PD_THROW adds
 * one), "An error occurred." when nothing is left. */
static inline std::string pd__cxx_format(const char *fmt, va_list ap)
{
    char small[256];
    va_list copy;
    va_copy(copy, ap);
    int len = std::vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    std::string text;
    if (len > 0 && (size_t)len < sizeof small) {
        text.assign(small, (size_t)len);
    } else if (len > 0) {
        text.resize((size_t)len);
        std::vsnprintf(&text[0], (size_t)len + 1, fmt, ap);
    }
    size_t start = text.find_first_not_of(" \t\n\v\f\r");
    if (start == std::string::npos)
        text.assign("An error occurred.");
    else
        text.erase(0, start);
    return text;
}

static inline PD_NORETURN_ATTR PD_PRINTF(3, 4) void pd__throw(const char *file, int line,
                                                              const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pd__va_end_guard end = {&ap};
    throw pd::op_error(pd__cxx_format(fmt, ap), file, line);
}

/* After a pd_api.cxx function returned its failure value: throws the pending error, if any
 * (NULL is also what pd_input returns for an absent optional input). */
static inline void pd__cxx_check(pd_kernel_ctx *ctx)
{
    pd_status status = PD_ERR_OP_FAILED;
    const char *file = nullptr;
    int line = 0;
    const char *message = pd__api->pending_error(ctx, &status, &file, &line);
    if (message != nullptr)
        throw pd::op_error(message, file, line, status);
}
template <class T> static inline T *pd__cxx_result(pd_kernel_ctx *ctx, T *result)
{
    if (result == nullptr)
        pd__cxx_check(ctx);
    return result;
}
static inline int32_t pd__cxx_result(pd_kernel_ctx *ctx, int32_t result)
{
    if (result < 0)
        pd__cxx_check(ctx);
    return result;
}

/* Calls of the table by the wrappers below: C++ goes through pd_api.cxx. */
#define PD__CALL(ctx, call) pd__cxx_result((ctx), pd__api->cxx->call)
#define PD__CALL_VOID(ctx, call) (pd__api->cxx->call, pd__cxx_check(ctx))
#endif /* PD__CXX_EXCEPTIONS */

PD_EXTERN_C_BEGIN

/* PD_THROW(fmt, ...): ends the op call with a printf-style message ("An error occurred." when
 * called with none); in C++ by throwing pd::op_error. The leading " " keeps an empty format from
 * being a zero-length format. */
#define PD_THROW(...) pd__throw(__FILE__, __LINE__, " " __VA_ARGS__)

/* PD_CHECK(cond [, fmt, ...]): throws the message unless cond holds; with no message:
 * "Expected <cond>, but it is not satisfied." */
#define PD__CHECK_PICK(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, \
                       NAME, ...)                                                             \
    NAME
#define PD__CHECK_MSG(cond, ...)                        \
    do {                                                \
        if (!(cond))                                    \
            pd__throw(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
#define PD__CHECK_NOMSG(cond)                                                              \
    do {                                                                                   \
        if (!(cond))                                                                       \
            pd__throw(__FILE__, __LINE__, "Expected %s, but it is not satisfied.", #cond); \
    } while (0)
#define PD_CHECK(...)                                                                         \
    PD__CHECK_PICK(__VA_ARGS__, PD__CHECK_MSG, PD__CHECK_MSG, PD__CHECK_MSG, PD__CHECK_MSG,   \
                   PD__CHECK_MSG, PD__CHECK_MSG, PD__CHECK_MSG, PD__CHECK_MSG, PD__CHECK_MSG, \
                   PD__CHECK_MSG, PD__CHECK_MSG, PD__CHECK_MSG, PD__CHECK_MSG, PD__CHECK_MSG, \
                   PD__CHECK_MSG, PD__CHECK_NOMSG, unused)                                    \
    (__VA_ARGS__)

/* --- Context: inputs, attrs, outputs ---------------------------------------------------- */

static inline const char *pd_op_name_of(pd_kernel_ctx *ctx) { return PD__CALL(ctx, op_name(ctx)); }

/* Input `index` (its first tensor for a vector input); NULL for an absent optional input. */
static inline const pd_tensor *pd_input(pd_kernel_ctx *ctx, int32_t index)
{
    return PD__CALL(ctx, input(ctx, index, 0));
}
/* Item `item` of vector input `index`. */
static inline const pd_tensor *pd_input_at(pd_kernel_ctx *ctx, int32_t index, int32_t item)
{
    return PD__CALL(ctx, input(ctx, index, item));
}
/* Tensors bound to input `index`: vector length, 1, or 0 for an absent optional. */
static inline int32_t pd_input_count(pd_kernel_ctx *ctx, int32_t index)
{
    return PD__CALL(ctx, input_count(ctx, index));
}
/* Declared position of an input / output by name ("X", "Out@GRAD"; suffixes @VECTOR /
 * @OPTIONAL may be left off); a name the op does not declare ends the call naming it. */
static inline int32_t pd_input_index(pd_kernel_ctx *ctx, const char *name)
{
    return PD__CALL(ctx, input_index(ctx, name));
}
static inline int32_t pd_output_index(pd_kernel_ctx *ctx, const char *name)
{
    return PD__CALL(ctx, output_index(ctx, name));
}
/* Input by declared name: pd_input(ctx, pd_input_index(ctx, name)). */
static inline const pd_tensor *pd_input_named(pd_kernel_ctx *ctx, const char *name)
{
    return PD__CALL(ctx, input(ctx, PD__CALL(ctx, input_index(ctx, name)), 0));
}

static inline const pd_attr *pd__attr_typed(pd_kernel_ctx *ctx, int32_t index, pd_attr_type type,
                                            const char *file, int line)
{
    const pd_attr *a = PD__CALL(ctx, attr(ctx, index));
    if (a->type != type)
        pd__throw(file, line, "attr '%s' is declared %s, but was read as %s", a->name,
                  pd_attr_type_name(a->type), pd_attr_type_name(type));
    return a;
}
/* Typed reads of attribute `index` (declared order). Reading as the wrong type throws. */
static inline bool pd__attr_bool_at(pd_kernel_ctx *ctx, int32_t index, const char *file, int line)
{
    return pd__attr_typed(ctx, index, PD_ATTR_BOOL, file, line)->v.b;
}
static inline int32_t pd__attr_int_at(pd_kernel_ctx *ctx, int32_t index, const char *file, int line)
{
    return pd__attr_typed(ctx, index, PD_ATTR_INT, file, line)->v.i;
}
static inline float pd__attr_float_at(pd_kernel_ctx *ctx, int32_t index, const char *file, int line)
{
    return pd__attr_typed(ctx, index, PD_ATTR_FLOAT, file, line)->v.f;
}
static inline double pd__attr_double_at(pd_kernel_ctx *ctx, int32_t index, const char *file,
                                        int line)
{
    return pd__attr_typed(ctx, index, PD_ATTR_DOUBLE, file, line)->v.d;
}
static inline int64_t pd__attr_int64_at(pd_kernel_ctx *ctx, int32_t index, const char *file,
                                        int line)
{
    return pd__attr_typed(ctx, index, PD_ATTR_INT64, file, line)->v.i64;
}
static inline const char *pd__attr_string_at(pd_kernel_ctx *ctx, int32_t index, const char *file,
                                             int line)
{
    return pd__attr_typed(ctx, index, PD_ATTR_STRING, file, line)->v.s;
}
/* Vector attrs: the elements, with their count in *count. */
static inline const int32_t *pd__attr_ints_at(pd_kernel_ctx *ctx, int32_t index, int32_t *count,
                                              const char *file, int line)
{
    const pd_attr *a = pd__attr_typed(ctx, index, PD_ATTR_INTS, file, line);
    *count = a->count;
    return a->v.ints;
}
static inline const float *pd__attr_floats_at(pd_kernel_ctx *ctx, int32_t index, int32_t *count,
                                              const char *file, int line)
{
    const pd_attr *a = pd__attr_typed(ctx, index, PD_ATTR_FLOATS, file, line);
    *count = a->count;
    return a->v.floats;
}
static inline const int64_t *pd__attr_int64s_at(pd_kernel_ctx *ctx, int32_t index, int32_t *count,
                                                const char *file, int line)
{
    const pd_attr *a = pd__attr_typed(ctx, index, PD_ATTR_INT64S, file, line);
    *count = a->count;
    return a->v.int64s;
}
static inline const char *const *pd__attr_strings_at(pd_kernel_ctx *ctx, int32_t index,
                                                     int32_t *count, const char *file, int line)
{
    const pd_attr *a = pd__attr_typed(ctx, index, PD_ATTR_STRINGS, file, line);
    *count = a->count;
    return a->v.strings;
}
/* The getters are macros so that a wrong-type read reports the caller's [file:line], not this
 * header's. */
#define pd_attr_bool(ctx, index) pd__attr_bool_at(ctx, index, __FILE__, __LINE__)
#define pd_attr_int(ctx, index) pd__attr_int_at(ctx, index, __FILE__, __LINE__)
#define pd_attr_float(ctx, index) pd__attr_float_at(ctx, index, __FILE__, __LINE__)
#define pd_attr_double(ctx, index) pd__attr_double_at(ctx, index, __FILE__, __LINE__)
#define pd_attr_int64(ctx, index) pd__attr_int64_at(ctx, index, __FILE__, __LINE__)
#define pd_attr_string(ctx, index) pd__attr_string_at(ctx, index, __FILE__, __LINE__)
#define pd_attr_ints(ctx, index, count) pd__attr_ints_at(ctx, index, count, __FILE__, __LINE__)
#define pd_attr_floats(ctx, index, count) pd__attr_floats_at(ctx, index, count, __FILE__, __LINE__)
#define pd_attr_int64s(ctx, index, count) pd__attr_int64s_at(ctx, index, count, __FILE__, __LINE__)
#define pd_attr_strings(ctx, index, count) \
    pd__attr_strings_at(ctx, index, count, __FILE__, __LINE__)
/* Declared position of an attribute by name; throws if undeclared. */
static inline int32_t pd_attr_index(pd_kernel_ctx *ctx, const char *name)
{
    return PD__CALL(ctx, attr_index(ctx, name));
}
/* Typed reads of an attribute by declared name: the pd_attr_* reads of
 * pd_attr_index(ctx, name). An undeclared name or the wrong type ends the call naming it. */
#define pd_attr_bool_named(ctx, name) \
    pd__attr_bool_at(ctx, pd_attr_index(ctx, name), __FILE__, __LINE__)
#define pd_attr_int_named(ctx, name) \
    pd__attr_int_at(ctx, pd_attr_index(ctx, name), __FILE__, __LINE__)
#define pd_attr_float_named(ctx, name) \
    pd__attr_float_at(ctx, pd_attr_index(ctx, name), __FILE__, __LINE__)
#define pd_attr_double_named(ctx, name) \
    pd__attr_double_at(ctx, pd_attr_index(ctx, name), __FILE__, __LINE__)
#define pd_attr_int64_named(ctx, name) \
    pd__attr_int64_at(ctx, pd_attr_index(ctx, name), __FILE__, __LINE__)
#define pd_attr_string_named(ctx, name) \
    pd__attr_string_at(ctx, pd_attr_index(ctx, name), __FILE__, __LINE__)
#define pd_attr_ints_named(ctx, name, count) \
    pd__attr_ints_at(ctx, pd_attr_index(ctx, name), count, __FILE__, __LINE__)
#define pd_attr_floats_named(ctx, name, count) \
    pd__attr_floats_at(ctx, pd_attr_index(ctx, name), count, __FILE__, __LINE__)
#define pd_attr_int64s_named(ctx, name, count) \
    pd__attr_int64s_at(ctx, pd_attr_index(ctx, name), count, __FILE__, __LINE__)
#define pd_attr_strings_named(ctx, name, count) \
    pd__attr_strings_at(ctx, pd_attr_index(ctx, name), count, __FILE__, __LINE__)

/* Output `index`: see pd_api.output. */
static inline pd_tensor *pd_output(pd_kernel_ctx *ctx, int32_t index)
{
    return PD__CALL(ctx, output(ctx, index, 0));
}
static inline pd_tensor *pd_output_at(pd_kernel_ctx *ctx, int32_t index, int32_t item)
{
    return PD__CALL(ctx, output(ctx, index, item));
}
/* Output by declared name: pd_output(ctx, pd_output_index(ctx, name)). */
static inline pd_tensor *pd_output_named(pd_kernel_ctx *ctx, const char *name)
{
    return PD__CALL(ctx, output(ctx, PD__CALL(ctx, output_index(ctx, name)), 0));
}
static inline int32_t pd_output_count(pd_kernel_ctx *ctx, int32_t index)
{
    return PD__CALL(ctx, output_count(ctx, index));
}
static inline void pd_set_output(pd_kernel_ctx *ctx, int32_t index, const pd_tensor *t)
{
    PD__CALL_VOID(ctx, set_output(ctx, index, 0, t));
}
static inline void pd_set_output_at(pd_kernel_ctx *ctx, int32_t index, int32_t item,
                                    const pd_tensor *t)
{
    PD__CALL_VOID(ctx, set_output(ctx, index, item, t));
}

/* For infer functions. */
static inline void pd_set_output_count(pd_kernel_ctx *ctx, int32_t index, int32_t count)
{
    PD__CALL_VOID(ctx, set_output_count(ctx, index, count));
}
static inline void pd_set_output_shape(pd_kernel_ctx *ctx, int32_t index, int32_t ndim,
                                       const int64_t *shape)
{
    PD__CALL_VOID(ctx, set_output_shape(ctx, index, 0, ndim, shape));
}
static inline void pd_set_output_shape_at(pd_kernel_ctx *ctx, int32_t index, int32_t item,
                                          int32_t ndim, const int64_t *shape)
{
    PD__CALL_VOID(ctx, set_output_shape(ctx, index, item, ndim, shape));
}
static inline void pd_set_output_dtype(pd_kernel_ctx *ctx, int32_t index, pd_data_type dtype)
{
    PD__CALL_VOID(ctx, set_output_dtype(ctx, index, 0, dtype));
}
static inline void pd_set_output_dtype_at(pd_kernel_ctx *ctx, int32_t index, int32_t item,
                                          pd_data_type dtype)
{
    PD__CALL_VOID(ctx, set_output_dtype(ctx, index, item, dtype));
}

/* --- Tensors owned by the call ----------------------------------------------------------- */

static inline pd_tensor *pd_empty(pd_kernel_ctx *ctx, pd_data_type dtype, pd_place place,
                                  int32_t ndim, const int64_t *shape)
{
    return PD__CALL(ctx, empty(ctx, dtype, place, ndim, shape));
}
static inline pd_tensor *pd_full(pd_kernel_ctx *ctx, pd_data_type dtype, pd_place place,
                                 int32_t ndim, const int64_t *shape, double value)
{
    return PD__CALL(ctx, full(ctx, dtype, place, ndim, shape, value));
}
static inline pd_tensor *pd_zeros(pd_kernel_ctx *ctx, pd_data_type dtype, pd_place place,
                                  int32_t ndim, const int64_t *shape)
{
    return PD__CALL(ctx, full(ctx, dtype, place, ndim, shape, 0.0));
}
static inline pd_tensor *pd_ones(pd_kernel_ctx *ctx, pd_data_type dtype, pd_place place,
                                 int32_t ndim, const int64_t *shape)
{
    return PD__CALL(ctx, full(ctx, dtype, place, ndim, shape, 1.0));
}
static inline pd_tensor *pd_empty_like(pd_kernel_ctx *ctx, const pd_tensor *t)
{
    return PD__CALL(ctx, empty(ctx, t->dtype, t->place, t->ndim, t->shape));
}
static inline pd_tensor *pd_full_like(pd_kernel_ctx *ctx, const pd_tensor *t, double value)
{
    return PD__CALL(ctx, full(ctx, t->dtype, t->place, t->ndim, t->shape, value));
}
static inline pd_tensor *pd_copy_to(pd_kernel_ctx *ctx, const pd_tensor *src, pd_place place)
{
    return PD__CALL(ctx, copy_to(ctx, src, place));
}
static inline pd_tensor *pd_cast(pd_kernel_ctx *ctx, const pd_tensor *src, pd_data_type dtype)
{
    return PD__CALL(ctx, cast(ctx, src, dtype));
}
static inline pd_tensor *pd_slice(pd_kernel_ctx *ctx, const pd_tensor *src, int64_t begin,
                                  int64_t end)
{
    return PD__CALL(ctx, slice(ctx, src, begin, end));
}
static inline pd_tensor *pd_reshape(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,
                                    const int64_t *shape)
{
    return PD__CALL(ctx, reshape(ctx, src, ndim, shape));
}
static inline pd_tensor *pd_contiguous(pd_kernel_ctx *ctx, const pd_tensor *src)
{
    return PD__CALL(ctx, contiguous(ctx, src));
}
static inline void *pd_scratch(pd_kernel_ctx *ctx, size_t bytes)
{
    return PD__CALL(ctx, scratch(ctx, bytes));
}

/* --- Strided views (pd_tensor.h) ----------------------------------------------------------- */

/* Elements begin, begin + step, ... before end along `axis` (negative counts from the end);
 * a negative step walks backwards (begin > end), as numpy's a[begin:end:step]. */
static inline pd_tensor *pd_slice_step(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t axis,
                                       int64_t begin, int64_t end, int64_t step)
{
    return PD__CALL(ctx, slice_step(ctx, src, axis, begin, end, step));
}
/* Axes reordered: the result's axis d is src's axis dims[d] (ndim == src's ndim). */
static inline pd_tensor *pd_permute(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,
                                    const int32_t *dims)
{
    return PD__CALL(ctx, permute(ctx, src, ndim, dims));
}
/* Axes a and b swapped. */
static inline pd_tensor *pd_transpose(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t a,
                                      int32_t b)
{
    int32_t dims[PD_MAX_DIMS], ndim = src ? src->ndim : 0; /* permute refuses a NULL src */
    int32_t x = a < 0 ? a + ndim : a, y = b < 0 ? b + ndim : b;
    for (int32_t d = 0; d < PD_MAX_DIMS; ++d)
        dims[d] = d == x ? y : d == y ? x : d;
    if (y < 0 || y >= ndim) /* an axis out of range: permute refuses it by its value */
        dims[0] = b;
    if (x < 0 || x >= ndim)
        dims[0] = a;
    return PD__CALL(ctx, permute(ctx, src, ndim, dims));
}
/* Broadcast to `shape` without copying (expanded axes get stride 0), numpy's rules. */
static inline pd_tensor *pd_expand(pd_kernel_ctx *ctx, const pd_tensor *src, int32_t ndim,
                                   const int64_t *shape)
{
    return PD__CALL(ctx, expand(ctx, src, ndim, shape));
}

/* --- Streams (pd_device.h) ------------------------------------------------------------------ */

/* The device handle of the stream this call runs on: a cudaStream_t for GPU inputs (launch
 * with <<<grid, block, 0, (cudaStream_t)pd_stream(ctx)>>>), the device's own handle for a
 * custom device, NULL on the CPU. The call's device is that of its first input. Needs a
 * runtime of ABI 2.1 or newer. */
static inline void *pd_stream(pd_kernel_ctx *ctx) { return PD__CALL(ctx, stream(ctx)); }

/* --- Workspace ------------------------------------------------------------------------------ */

/* The call's workspace: as many bytes as the op's workspace function (pd_op_def.workspace)
 * returned, on the op's place (device memory for a device call), 64-byte aligned, valid until
 * the call ends; NULL for 0 bytes. Only in the kernel. Needs a runtime of ABI 2.2 or newer. */
static inline void *pd_workspace(pd_kernel_ctx *ctx) { return PD__CALL(ctx, workspace(ctx)); }

/* --- Custom device places (pd_place.h) ----------------------------------------------------- */

static inline pd_place pd__place_custom_op(const char *type_name, int32_t device_id)
{
    return pd__api->place_custom(type_name, device_id);
}
static inline const char *pd__place_type_name_op(const pd_place *p)
{
    const char *name = pd__place_builtin_name(p->type);
    return name ? name : pd__api->device_type_name(p->type);
}
/* Op code reaches the device type registry through the table. A host (pdext.h) calls
 * libpdext's functions of the same names instead: pdext.h replaces these two spellings. */
#ifndef PDEXT_H
#define pd_place_custom pd__place_custom_op
#define pd_place_type_name pd__place_type_name_op
#endif

/* --- Parallel loops ----------------------------------------------------------------------
 *
 * pd_parallel_for(ctx, n, grain, fn, arg) calls fn(arg, begin, end) on chunks that together
 * cover [0, n) exactly once, each at least `grain` indices long (but the last), and returns
 * when every chunk is done. The chunks run on the runtime's thread pool: PDEXT_NUM_THREADS
 * threads, the calling one included (default: the CPUs this process may run on), started on
 * first use. It runs fn(arg, 0, n) on the calling thread alone when the pool has one thread,
 * when n <= grain, when called from inside a chunk (nested loops run inline), or while
 * another loop holds the pool. n == 0 calls nothing.
 *
 * Inside fn: PD_CHECK / PD_THROW (and, in C++, any exception) stop the loop; chunks already
 * running finish, no new one starts, and then the op call ends with that error and its
 * [file:line], on the calling thread, as if the kernel had thrown it. fn may run other ops,
 * but must not call the context functions (pd_input, pd_output, pd_empty, pd_scratch, ...):
 * fetch tensors and pointers before the loop and hand them over through `arg`.
 * Bad input (n < 0, grain < 0, fn NULL, a PDEXT_NUM_THREADS that is not a number from 1 to
 * 1024) ends the op call with a message naming it. */
#ifndef PD__CXX_EXCEPTIONS
static inline void pd_parallel_for(pd_kernel_ctx *ctx, int64_t n, int64_t grain, pd_parallel_fn fn,
                                   void *arg)
{
    PD__CALL_VOID(ctx, parallel_for(ctx, n, grain, fn, arg));
}
#endif

PD_EXTERN_C_END

#ifdef PD__CXX_EXCEPTIONS
/* C++: an exception must not leave fn through the runtime's C frames, so each chunk runs
 * under a catch that reports the error to the loop (which stops it) and returns. */
struct pd__parallel_cxx {
    pd_kernel_ctx *ctx;
    pd_parallel_fn fn;
    void *arg;
};
/* Reports the exception being handled as the call's error (the module's invoke hook and the
 * parallel chunks share it). */
static inline void pd__cxx_report_current(pd_kernel_ctx *ctx) noexcept
{
    try {
        throw;
    } catch (const pd::op_error &e) {
        pd__api->report_error(ctx, e.status(), e.file(), e.line(), "%s", e.what());
    } catch (const std::exception &e) {
        pd__api->report_error(ctx, PD_ERR_OP_FAILED, nullptr, 0, "C++ exception: %s",
                              e.what() ? e.what() : "");
    } catch (...) {
        pd__api->report_error(ctx, PD_ERR_OP_FAILED, nullptr, 0, "unknown C++ exception");
    }
}
static inline void pd__parallel_cxx_chunk(void *arg, int64_t begin, int64_t end) noexcept
{
    const pd__parallel_cxx *c = static_cast<const pd__parallel_cxx *>(arg);
    try {
        c->fn(c->arg, begin, end);
    } catch (...) {
        pd__cxx_report_current(c->ctx);
    }
}
static inline void pd_parallel_for(pd_kernel_ctx *ctx, int64_t n, int64_t grain, pd_parallel_fn fn,
                                   void *arg)
{
    pd__parallel_cxx c = {ctx, fn, arg};
    PD__CALL_VOID(ctx, parallel_for(ctx, n, grain, fn ? pd__parallel_cxx_chunk : nullptr, &c));
}

/* pd_parallel_for(ctx, n, grain, body) with any callable body(int64_t begin, int64_t end),
 * e.g. a lambda that captures what the chunks need. */
template <class Body> struct pd__parallel_body {
    pd_kernel_ctx *ctx;
    Body *body;
};
template <class Body>
static inline void pd__parallel_body_chunk(void *arg, int64_t begin, int64_t end) noexcept
{
    const pd__parallel_body<Body> *b = static_cast<const pd__parallel_body<Body> *>(arg);
    try {
        (*b->body)(begin, end);
    } catch (...) {
        pd__cxx_report_current(b->ctx);
    }
}
template <class Body>
static inline void pd_parallel_for(pd_kernel_ctx *ctx, int64_t n, int64_t grain, Body &&body)
{
    using body_t = typename std::remove_reference<Body>::type;
    pd__parallel_body<body_t> b = {ctx, &body};
    PD__CALL_VOID(ctx, parallel_for(ctx, n, grain, pd__parallel_body_chunk<body_t>, &b));
}
#endif /* PD__CXX_EXCEPTIONS */

#include "pd_math.h" /* the tensor functions of the table (pd_add, pd_matmul, ...) */

#endif /* PD_API_H */
