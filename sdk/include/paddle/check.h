/*
 * paddle/check.h - Paddle's PD_CHECK, PD_THROW and PD_DISPATCH_* for the C++ front.
 *
 * PD_CHECK(cond, ...) and PD_THROW(...) take Paddle's stream-style arguments: every argument
 * is written to one std::ostringstream, so `PD_CHECK(n > 0, "n is ", n)` reads "n is 3". With
 * no message PD_CHECK says "Expected <cond>, but it's not satisfied." as Paddle does. They
 * throw pd::op_error carrying the caller's [file:line]; the module's invoke hook reports it
 * as the op's error: "<op>: <message> [<file>:<line>]".
 *
 * PD_DISPATCH_*(dtype, name, ...) run the callable `...` (Paddle writes `([&] { ... })`) with
 * `data_t` bound to the C++ type of `dtype` (paddle::float16, paddle::complex64, ... for the
 * half and complex types); another dtype throws
 * "function <name> is not implemented for data type `<dtype>`".
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_CHECK_H
#define PDEXT_PADDLE_CHECK_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/check.h"
#endif

#include <sstream>
#include <string>
#include <type_traits>

namespace paddle {
namespace detail {

/* The arguments written one after another; "" for none. */
template <class... Args> inline std::string concat(const Args &...args)
{
    std::ostringstream os;
    (void)os;
    ((os << args), ...);
    return os.str();
}

/* One string (PD_CHECK's usual message): no stream needed. A null pointer writes nothing, as
 * the stream does. */
inline std::string concat(const char *s) { return s ? s : ""; }

/* A string literal's array type decays to const char * (the same text through <<), so the
 * messages of a module share one concat per list of argument types, not one per literal
 * length: that instantiation (an ostringstream) is most of what an error path costs to
 * compile. */
template <class T> inline const T &decayed(const T &a) { return a; }
inline const char *decayed(const char *s) { return s; }

/* The end of PD_THROW: an empty message becomes the runtime's "An error occurred.". */
[[noreturn]] inline void throw_message(std::string m, const char *file, int line)
{
    if (m.empty())
        m = "An error occurred.";
    throw pd::op_error(m, file, line);
}

/* PD_THROW's body. */
struct thrower {
    const char *file;
    int line;
    template <class... Args> [[noreturn]] void fire(const Args &...args) const
    {
        throw_message(concat(decayed(args)...), file, line);
    }
};

/* PD_DISPATCH_*'s failure: "function <name> is not implemented for data type `<dtype>`<tail>".
 * A name that is a C string (Paddle's sources pass a literal) takes the printf path, compiled
 * once per module; any other type is streamed, as PD_THROW would. */
template <class Name>
[[noreturn]] inline void dispatch_failed(const char *file, int line, const Name &name, DataType t,
                                         const char *tail)
{
    if constexpr (std::is_convertible<const Name &, const char *>::value) {
        const char *n = name;
        if (n != nullptr)
            fail_at(file, line, PD_ERR_OP_FAILED,
                    "function %s is not implemented for data type `%s%s", n,
                    pd_dtype_name(static_cast<pd_data_type>(t)), tail);
        fail_at(file, line, PD_ERR_OP_FAILED, "function "); /* a null char * ends a stream */
    } else {
        throw_message(concat("function ", name, " is not implemented for data type `", t, tail),
                      file, line);
    }
}

/* PD_CHECK's failure: the arguments after the condition are the message. */
struct check_failure {
    const char *file;
    int line;
    const char *cond;
    template <class Cond> [[noreturn]] void fire(const Cond &) const
    {
        throw pd::op_error(std::string("Expected ") + cond + ", but it's not satisfied.", file,
                           line);
    }
    template <class Cond, class... Args>
    [[noreturn]] void fire(const Cond &, const Args &...args) const
    {
        thrower{file, line}.fire(args...);
    }
};

} // namespace detail
} // namespace paddle

#define PD__PADDLE_FIRST_(first, ...) first
#define PD__PADDLE_FIRST(...) PD__PADDLE_FIRST_(__VA_ARGS__, 0)
#define PD__PADDLE_STR_FIRST_(first, ...) #first
#define PD__PADDLE_STR_FIRST(...) PD__PADDLE_STR_FIRST_(__VA_ARGS__, 0)

/* PD_THROW(args...): ends the op call with the arguments as its message. */
#define PD_THROW(...) (::paddle::detail::thrower{__FILE__, __LINE__}.fire(__VA_ARGS__))
/* PD_CHECK(cond, args...): PD_THROW(args...) unless cond holds; "Expected <cond>, but it's not
 * satisfied." without args. The condition is evaluated once when it holds. */
#define PD_CHECK(...)                                                                              \
    do {                                                                                           \
        if (!(PD__PADDLE_FIRST(__VA_ARGS__)))                                                      \
            ::paddle::detail::check_failure{__FILE__, __LINE__, PD__PADDLE_STR_FIRST(__VA_ARGS__)} \
                .fire(__VA_ARGS__);                                                                \
    } while (0)

/* --- PD_DISPATCH_* ------------------------------------------------------------------------ */

#define PD__PADDLE_CASE(enum_value, type, ...) \
    case enum_value: {                         \
        using data_t [[maybe_unused]] = type;  \
        __VA_ARGS__();                         \
        break;                                 \
    }

#define PD__PADDLE_DISPATCH(dtype, name, accepted, cases)                                        \
    [&] {                                                                                        \
        const ::paddle::DataType pd__dispatch_type = (dtype);                                    \
        switch (pd__dispatch_type) {                                                             \
            cases default                                                                        \
                : ::paddle::detail::dispatch_failed(__FILE__, __LINE__, name, pd__dispatch_type, \
                                                    "`; it takes " accepted);                    \
        }                                                                                        \
    }()

/* clang-format off */
#define PD__PADDLE_FLOATING(...) \
    PD__PADDLE_CASE(::paddle::DataType::FLOAT32, float, __VA_ARGS__) \
    PD__PADDLE_CASE(::paddle::DataType::FLOAT64, double, __VA_ARGS__)
#define PD__PADDLE_HALF(...) \
    PD__PADDLE_CASE(::paddle::DataType::FLOAT16, ::paddle::float16, __VA_ARGS__)
#define PD__PADDLE_INTEGRAL(...) \
    PD__PADDLE_CASE(::paddle::DataType::INT32, int, __VA_ARGS__) \
    PD__PADDLE_CASE(::paddle::DataType::INT64, int64_t, __VA_ARGS__) \
    PD__PADDLE_CASE(::paddle::DataType::INT8, int8_t, __VA_ARGS__) \
    PD__PADDLE_CASE(::paddle::DataType::UINT8, uint8_t, __VA_ARGS__) \
    PD__PADDLE_CASE(::paddle::DataType::INT16, int16_t, __VA_ARGS__)
#define PD__PADDLE_COMPLEX(...) \
    PD__PADDLE_CASE(::paddle::DataType::COMPLEX64, ::paddle::complex64, __VA_ARGS__) \
    PD__PADDLE_CASE(::paddle::DataType::COMPLEX128, ::paddle::complex128, __VA_ARGS__)
/* clang-format on */

/* float32, float64 */
#define PD_DISPATCH_FLOATING_TYPES(dtype, name, ...) \
    PD__PADDLE_DISPATCH(dtype, name, "float32, float64", PD__PADDLE_FLOATING(__VA_ARGS__))
/* float32, float64, float16 (Paddle's list: no bfloat16) */
#define PD_DISPATCH_FLOATING_AND_HALF_TYPES(dtype, name, ...)     \
    PD__PADDLE_DISPATCH(dtype, name, "float32, float64, float16", \
                        PD__PADDLE_FLOATING(__VA_ARGS__) PD__PADDLE_HALF(__VA_ARGS__))
/* int32, int64, int8, uint8, int16 */
#define PD_DISPATCH_INTEGRAL_TYPES(dtype, name, ...)                     \
    PD__PADDLE_DISPATCH(dtype, name, "int32, int64, int8, uint8, int16", \
                        PD__PADDLE_INTEGRAL(__VA_ARGS__))
/* complex64, complex128 */
#define PD_DISPATCH_COMPLEX_TYPES(dtype, name, ...) \
    PD__PADDLE_DISPATCH(dtype, name, "complex64, complex128", PD__PADDLE_COMPLEX(__VA_ARGS__))
/* the floating and the integral lists */
#define PD_DISPATCH_FLOATING_AND_INTEGRAL_TYPES(dtype, name, ...)                          \
    PD__PADDLE_DISPATCH(dtype, name, "float32, float64, int32, int64, int8, uint8, int16", \
                        PD__PADDLE_FLOATING(__VA_ARGS__) PD__PADDLE_INTEGRAL(__VA_ARGS__))
/* the floating and the complex lists */
#define PD_DISPATCH_FLOATING_AND_COMPLEX_TYPES(dtype, name, ...)                \
    PD__PADDLE_DISPATCH(dtype, name, "float32, float64, complex64, complex128", \
                        PD__PADDLE_FLOATING(__VA_ARGS__) PD__PADDLE_COMPLEX(__VA_ARGS__))
/* the floating, integral and complex lists */
#define PD_DISPATCH_FLOATING_AND_INTEGRAL_AND_COMPLEX_TYPES(dtype, name, ...)             \
    PD__PADDLE_DISPATCH(dtype, name,                                                      \
                        "float32, float64, int32, int64, int8, uint8, int16, complex64, " \
                        "complex128",                                                     \
                        PD__PADDLE_FLOATING(__VA_ARGS__) PD__PADDLE_INTEGRAL(__VA_ARGS__) \
                            PD__PADDLE_COMPLEX(__VA_ARGS__))

#endif /* PDEXT_PADDLE_CHECK_H */
