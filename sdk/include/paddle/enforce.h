/*
 * paddle/enforce.h - Paddle's PADDLE_ENFORCE_* and PADDLE_THROW with its error builders
 * (phi::errors::InvalidArgument(...), common::errors::Fatal(...), ...), which newer Paddle
 * custom-op sources use instead of PD_CHECK:
 *
 *     PADDLE_ENFORCE_EQ(x.is_cpu(), true, phi::errors::Fatal("x must be a CPU Tensor."));
 *
 * A failed check throws pd::op_error with the caller's [file:line], as PD_CHECK does; its
 * message is the builder's text followed by "(Expected <a> == <b>, but it's not
 * satisfied.)". The message arguments are read as written (stringized) and their first string
 * literals make the text, so a builder with format arguments keeps its format string, and a
 * source that only compiles because Paddle never evaluates them still compiles. A builder
 * passed where the second operand belongs (`PADDLE_ENFORCE_EQ(x.is_cpu(), errors::Fatal(..))`,
 * as some Paddle sources write) makes the check "the first operand holds".
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_ENFORCE_H
#define PDEXT_PADDLE_ENFORCE_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/enforce.h"
#endif

#include <string>
#include <type_traits>

namespace paddle {
namespace detail {

/* What an error builder returns: its format text. */
struct error_summary {
    std::string text;
};

/* The string literals at the start of stringized arguments, joined and unescaped:
 * `errors::Fatal("a" "b", n)` gives "ab"; "" when there is none. */
inline std::string first_literals(const char *s)
{
    std::string out;
    const char *p = s;
    while (*p && *p != '"')
        ++p;
    while (*p == '"') {
        for (++p; *p && *p != '"'; ++p) {
            if (*p == '\\' && p[1]) {
                ++p;
                out += *p == 'n' ? '\n' : *p == 't' ? '\t' : *p;
            } else {
                out += *p;
            }
        }
        if (*p == '"')
            ++p;
        while (*p == ' ' || *p == '\n' || *p == '\t')
            ++p;
    }
    return out;
}

/* A failed check: the message of the stringized builder arguments, then the hint. */
[[noreturn]] inline void enforce_failed(const char *args, const std::string &hint, const char *file,
                                        int line)
{
    std::string m = first_literals(args);
    m += m.empty() ? hint : " (" + hint + ")";
    throw pd::op_error(m, file, line);
}

/* PADDLE_THROW's body: the builder's text, or the runtime's "An error occurred.". */
[[noreturn]] inline void paddle_throw(const char *args, const char *file, int line)
{
    std::string m = first_literals(args);
    throw pd::op_error(m.empty() ? "An error occurred." : m, file, line);
}

/* The message of a failed check: the builder passed in the second operand's place, or the
 * stringized builder arguments. */
inline std::string builder_text(const error_summary &b, const char *) { return b.text; }
template <class B> inline std::string builder_text(const B &, const char *args)
{
    return first_literals(args);
}
[[noreturn]] inline void enforce_failed_text(std::string m, const std::string &hint,
                                             const char *file, int line)
{
    m += m.empty() ? hint : " (" + hint + ")";
    throw pd::op_error(m, file, line);
}

/* a OP b, or (a builder in b's place) a itself. */
#define PD__PADDLE_ENFORCE_REL(name, sym)                                        \
    template <class A, class B> inline bool name(const A &a, const B &b)         \
    {                                                                            \
        if constexpr (std::is_same<B, ::paddle::detail::error_summary>::value) { \
            (void)b;                                                             \
            return static_cast<bool>(a);                                         \
        } else {                                                                 \
            return a sym b;                                                      \
        }                                                                        \
    }
PD__PADDLE_ENFORCE_REL(rel_eq, ==)
PD__PADDLE_ENFORCE_REL(rel_ne, !=)
PD__PADDLE_ENFORCE_REL(rel_gt, >)
PD__PADDLE_ENFORCE_REL(rel_ge, >=)
PD__PADDLE_ENFORCE_REL(rel_lt, <)
PD__PADDLE_ENFORCE_REL(rel_le, <=)
#undef PD__PADDLE_ENFORCE_REL

} // namespace detail
} // namespace paddle

/* Paddle's error builders: each takes a format string and arguments and gives its text. */
#define PD__PADDLE_ERROR_BUILDER(name)                                            \
    template <class... Args>                                                      \
    inline ::paddle::detail::error_summary name(const char *fmt, const Args &...) \
    {                                                                             \
        return {fmt ? fmt : ""};                                                  \
    }
#define PD__PADDLE_ERROR_BUILDERS                \
    PD__PADDLE_ERROR_BUILDER(InvalidArgument)    \
    PD__PADDLE_ERROR_BUILDER(NotFound)           \
    PD__PADDLE_ERROR_BUILDER(OutOfRange)         \
    PD__PADDLE_ERROR_BUILDER(AlreadyExists)      \
    PD__PADDLE_ERROR_BUILDER(ResourceExhausted)  \
    PD__PADDLE_ERROR_BUILDER(PreconditionNotMet) \
    PD__PADDLE_ERROR_BUILDER(PermissionDenied)   \
    PD__PADDLE_ERROR_BUILDER(ExecutionTimeout)   \
    PD__PADDLE_ERROR_BUILDER(Unimplemented)      \
    PD__PADDLE_ERROR_BUILDER(Unavailable)        \
    PD__PADDLE_ERROR_BUILDER(Fatal)              \
    PD__PADDLE_ERROR_BUILDER(External)
namespace common {
namespace errors {
PD__PADDLE_ERROR_BUILDERS
} // namespace errors
} // namespace common
namespace phi {
namespace errors {
PD__PADDLE_ERROR_BUILDERS
} // namespace errors
} // namespace phi
#undef PD__PADDLE_ERROR_BUILDERS
#undef PD__PADDLE_ERROR_BUILDER

/* PADDLE_ENFORCE_EQ(a, b, builder) and its five siblings; the builder is optional. */
#define PD__PADDLE_ENFORCE(rel, sym, a, b, ...)                                                 \
    do {                                                                                        \
        const auto &pd__enforce_a = (a);                                                        \
        const auto &pd__enforce_b = (b);                                                        \
        if (!::paddle::detail::rel(pd__enforce_a, pd__enforce_b))                               \
            ::paddle::detail::enforce_failed_text(::paddle::detail::builder_text(pd__enforce_b, \
                                                                                 #__VA_ARGS__), \
                                                  "Expected " #a " " sym " " #b                 \
                                                  ", but it's not satisfied.",                  \
                                                  __FILE__, __LINE__);                          \
    } while (0)
#define PADDLE_ENFORCE_EQ(...) PD__PADDLE_ENFORCE(rel_eq, "==", __VA_ARGS__, )
#define PADDLE_ENFORCE_NE(...) PD__PADDLE_ENFORCE(rel_ne, "!=", __VA_ARGS__, )
#define PADDLE_ENFORCE_GT(...) PD__PADDLE_ENFORCE(rel_gt, ">", __VA_ARGS__, )
#define PADDLE_ENFORCE_GE(...) PD__PADDLE_ENFORCE(rel_ge, ">=", __VA_ARGS__, )
#define PADDLE_ENFORCE_LT(...) PD__PADDLE_ENFORCE(rel_lt, "<", __VA_ARGS__, )
#define PADDLE_ENFORCE_LE(...) PD__PADDLE_ENFORCE(rel_le, "<=", __VA_ARGS__, )
/* PADDLE_ENFORCE_NOT_NULL(p, builder) */
#define PD__PADDLE_ENFORCE_NN(p, ...) PD__PADDLE_ENFORCE_COND((p) != nullptr, __VA_ARGS__)
#define PADDLE_ENFORCE_NOT_NULL(...) PD__PADDLE_ENFORCE_NN(__VA_ARGS__, )
/* PADDLE_ENFORCE(cond, builder) */
#define PD__PADDLE_ENFORCE_COND(cond, ...)                                                  \
    do {                                                                                    \
        if (!(cond))                                                                        \
            ::paddle::detail::enforce_failed(#__VA_ARGS__,                                  \
                                             "Expected " #cond ", but it's not satisfied.", \
                                             __FILE__, __LINE__);                           \
    } while (0)
#define PADDLE_ENFORCE(...) PD__PADDLE_ENFORCE_COND(__VA_ARGS__, )
/* PADDLE_THROW(builder): ends the op call with the builder's text. */
#define PADDLE_THROW(...) ::paddle::detail::paddle_throw(#__VA_ARGS__, __FILE__, __LINE__)

#endif /* PDEXT_PADDLE_ENFORCE_H */
