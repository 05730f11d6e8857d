/*
 * aot_extra.cc - the AotExtra a MindSpore AOT library reads its attrs through: the eight
 * getters of custom_aot_extra.h over the attrs of the running call (pd_aoti_current_attrs),
 * with MindSpore's coercions.
 *
 * Built twice (sdk/src/adapters/mindspore/CMakeLists.txt), with _GLIBCXX_USE_CXX11_ABI=0 and
 * =1: the getters take and return std::string, whose layout differs between libstdc++'s two
 * string ABIs, so a library gets the build that matches its own (aot_elf.c tells which).
 * PD_AOT_EXTRA_NEW names this build's constructor function.
 *
 * Coercions: bool, int, int64, float and double attrs read as any of bool, int64_t and float
 * (floating -> integral truncates; -> bool is != 0); lists of int, int64 or float read as
 * std::vector<int64_t> or std::vector<float>; a string attr holding a bracketed list ("[1, 2]",
 * "[[1, 2], [3]]") reads as the vector of that shape. Anything else throws, naming the attr,
 * what was asked and what the attr holds; so does an attr the call does not have.
 */
#include "adapters/mindspore/aot_internal.h"

#include "custom_aot_extra.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef PD_AOT_EXTRA_NEW
#error "build aot_extra.cc with -DPD_AOT_EXTRA_NEW=pd_aoti_extra_new_abiN"
#endif

namespace {

const char *held(const pd_attr &a)
{
    switch (a.type) {
    case PD_ATTR_STRING: return "a string";
    case PD_ATTR_STRINGS: return "a list of strings";
    case PD_ATTR_INTS:
    case PD_ATTR_INT64S:
    case PD_ATTR_FLOATS: return "a list of numbers";
    default: return "a number";
    }
}

[[noreturn]] void refuse(const pd_attr &a, const char *name, const char *asked)
{
    throw std::runtime_error(std::string("attr '") + name + "' holds " + held(a) +
                             ", which cannot be read as " + asked);
}

const pd_attr &find_attr(const std::string &name, const char *asked)
{
    const pd_aoti_attr_view *v = pd_aoti_current_attrs();
    for (int32_t i = 0; v && i < v->n; ++i)
        if (name == v->names[i] && v->attrs[i].type != PD_ATTR_UNDEFINED)
            return v->attrs[i];
    throw std::runtime_error("the kernel reads attr '" + name + "' (as " + asked +
                             "), which the call does not give: declare it when registering the "
                             "op and pass it (pdext run: --attr " +
                             name + "=VALUE)");
}

bool is_number(const pd_attr &a)
{
    return a.type == PD_ATTR_BOOL || a.type == PD_ATTR_INT || a.type == PD_ATTR_INT64 ||
           a.type == PD_ATTR_FLOAT || a.type == PD_ATTR_DOUBLE;
}

double number_of(const pd_attr &a)
{
    switch (a.type) {
    case PD_ATTR_BOOL: return a.v.b ? 1.0 : 0.0;
    case PD_ATTR_INT: return a.v.i;
    case PD_ATTR_INT64: return static_cast<double>(a.v.i64);
    case PD_ATTR_FLOAT: return a.v.f;
    default: return a.v.d;
    }
}

// A floating number as int64_t, truncated; a value outside int64_t's range (1e30, 2^63, inf)
// or nan has no int64_t value (converting it is undefined behaviour): refused.
int64_t int64_from(double v, const char *name, const char *asked)
{
    if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0))
        throw std::runtime_error(std::string("attr '") + name + "' holds " + std::to_string(v) +
                                 ", which cannot be read as " + asked +
                                 " (outside -2^63 .. 2^63-1)");
    return static_cast<int64_t>(v);
}

int64_t int_of(const pd_attr &a, const char *name, const char *asked)
{
    if (a.type == PD_ATTR_INT64)
        return a.v.i64; // exact beyond 2^53
    return int64_from(number_of(a), name, asked);
}

// A number read into a list element: int64_t elements are range-checked as int_of.
template <typename T> T element_of(double v, const char *, const char *)
{
    return static_cast<T>(v);
}
template <> int64_t element_of<int64_t>(double v, const char *name, const char *asked)
{
    return int64_from(v, name, asked);
}

// A bracketed list of numbers or of such lists: "[1, 2.5]", "[[1, 2], [3]]".
struct list_parser {
    const char *p;
    const pd_attr &attr;
    const char *name;
    const char *asked;

    void skip()
    {
        while (*p == ' ' || *p == '\t' || *p == '\n')
            ++p;
    }
    [[noreturn]] void fail() { refuse(attr, name, asked); }
    void expect(char c)
    {
        skip();
        if (*p != c)
            fail();
        ++p;
    }
    double number()
    {
        skip();
        char *end = nullptr;
        errno = 0;
        double v = std::strtod(p, &end);
        if (end == p || errno == ERANGE)
            fail();
        p = end;
        return v;
    }
    template <typename T> std::vector<T> flat()
    {
        std::vector<T> out;
        expect('[');
        skip();
        if (*p == ']') {
            ++p;
            return out;
        }
        for (;;) {
            out.push_back(element_of<T>(number(), name, asked));
            skip();
            if (*p == ']') {
                ++p;
                return out;
            }
            expect(',');
        }
    }
    template <typename T> std::vector<std::vector<T>> nested()
    {
        std::vector<std::vector<T>> out;
        expect('[');
        skip();
        if (*p == ']') {
            ++p;
            return out;
        }
        for (;;) {
            out.push_back(flat<T>());
            skip();
            if (*p == ']') {
                ++p;
                return out;
            }
            expect(',');
        }
    }
    void end()
    {
        skip();
        if (*p != '\0')
            fail();
    }
};

template <typename T>
std::vector<T> vector_of(const pd_attr &a, const char *name, const char *asked)
{
    std::vector<T> out;
    switch (a.type) {
    case PD_ATTR_INTS: out.assign(a.v.ints, a.v.ints + a.count); return out;
    case PD_ATTR_INT64S:
        for (int32_t i = 0; i < a.count; ++i)
            out.push_back(static_cast<T>(a.v.int64s[i]));
        return out;
    case PD_ATTR_FLOATS:
        for (int32_t i = 0; i < a.count; ++i)
            out.push_back(element_of<T>(a.v.floats[i], name, asked));
        return out;
    case PD_ATTR_STRING: {
        list_parser lp{a.v.s, a, name, asked};
        out = lp.flat<T>();
        lp.end();
        return out;
    }
    default: refuse(a, name, asked);
    }
}

template <typename T>
std::vector<std::vector<T>> matrix_of(const pd_attr &a, const char *name, const char *asked)
{
    if (a.type != PD_ATTR_STRING)
        refuse(a, name, asked);
    list_parser lp{a.v.s, a, name, asked};
    std::vector<std::vector<T>> out = lp.nested<T>();
    lp.end();
    return out;
}

class pd_aot_extra final : public AotExtra {
public:
    bool HasAttr(std::string name) override
    {
        const pd_aoti_attr_view *v = pd_aoti_current_attrs();
        for (int32_t i = 0; v && i < v->n; ++i)
            if (name == v->names[i] && v->attrs[i].type != PD_ATTR_UNDEFINED)
                return true;
        return false;
    }

private:
    bool GetAttrBool(std::string name) override
    {
        const pd_attr &a = find_attr(name, "bool");
        if (a.type == PD_ATTR_STRING &&
            (std::strcmp(a.v.s, "true") == 0 || std::strcmp(a.v.s, "True") == 0))
            return true;
        if (a.type == PD_ATTR_STRING &&
            (std::strcmp(a.v.s, "false") == 0 || std::strcmp(a.v.s, "False") == 0))
            return false;
        if (!is_number(a))
            refuse(a, name.c_str(), "bool");
        return number_of(a) != 0.0;
    }
    int64_t GetAttrInt(std::string name) override
    {
        const pd_attr &a = find_attr(name, "int64_t");
        if (!is_number(a))
            refuse(a, name.c_str(), "int64_t");
        return int_of(a, name.c_str(), "int64_t");
    }
    float GetAttrFloat(std::string name) override
    {
        const pd_attr &a = find_attr(name, "float");
        if (!is_number(a))
            refuse(a, name.c_str(), "float");
        return static_cast<float>(number_of(a));
    }
    std::string GetAttrStr(std::string name) override
    {
        const pd_attr &a = find_attr(name, "std::string");
        if (a.type != PD_ATTR_STRING)
            refuse(a, name.c_str(), "std::string");
        return a.v.s;
    }
    std::vector<int64_t> GetAttrIntVec(std::string name) override
    {
        return vector_of<int64_t>(find_attr(name, "std::vector<int64_t>"), name.c_str(),
                                  "std::vector<int64_t>");
    }
    std::vector<float> GetAttrFloatVec(std::string name) override
    {
        return vector_of<float>(find_attr(name, "std::vector<float>"), name.c_str(),
                                "std::vector<float>");
    }
    std::vector<std::vector<int64_t>> GetAttrInt2DVec(std::string name) override
    {
        return matrix_of<int64_t>(find_attr(name, "std::vector<std::vector<int64_t>>"),
                                  name.c_str(), "std::vector<std::vector<int64_t>>");
    }
    std::vector<std::vector<float>> GetAttrFloat2DVec(std::string name) override
    {
        return matrix_of<float>(find_attr(name, "std::vector<std::vector<float>>"), name.c_str(),
                                "std::vector<std::vector<float>>");
    }
};

} // namespace

extern "C" void *PD_AOT_EXTRA_NEW(void)
{
    return static_cast<AotExtra *>(new (std::nothrow) pd_aot_extra());
}
