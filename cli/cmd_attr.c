/*
 * cmd_attr.c - `--attr NAME=VALUE` text into a pd_attr of the op's declared type:
 *   bool            true, false, 1, 0
 *   int, int64_t    decimal (or 0x hex), range-checked: axis=-1
 *   float, double   anything strtod reads whole: scale=0.5, eps=1e-6
 *   std::string     the text as is: name=abc
 *   vectors         comma-separated elements: shape=2,3  names=a,b  (empty text: no elements)
 * A value that does not fit its type is refused with the attr's name, type and the text.
 */
#include "pdext_cmd.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The n characters at s as a C string in buf (false if empty or too long for it). */
static bool terminated(const char *s, size_t n, char *buf, size_t cap)
{
    if (n == 0 || n >= cap)
        return false;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return true;
}

static bool parse_int64(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *out)
{
    char buf[64];
    if (!terminated(s, n, buf, sizeof buf))
        return false;
    char *end;
    errno = 0;
    long long v = strtoll(buf, &end, 0);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

static bool parse_double(const char *s, size_t n, double *out)
{
    char buf[128];
    if (!terminated(s, n, buf, sizeof buf))
        return false;
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    if (*end != '\0' || (errno == ERANGE && isinf(v)))
        return false;
    *out = v;
    return true;
}

static bool parse_bool(const char *s, bool *out)
{
    if (strcmp(s, "true") == 0 || strcmp(s, "1") == 0 || strcmp(s, "True") == 0) {
        *out = true;
        return true;
    }
    if (strcmp(s, "false") == 0 || strcmp(s, "0") == 0 || strcmp(s, "False") == 0) {
        *out = false;
        return true;
    }
    return false;
}

/* Number of comma-separated elements of s ("" has none). */
static int32_t count_elements(const char *s)
{
    if (*s == '\0')
        return 0;
    int32_t n = 1;
    for (; *s; ++s)
        n += *s == ',';
    return n;
}

/* One element of a numeric vector into slot k of *elems. */
static bool parse_element(pd_attr_type type, const char *s, size_t n, void *elems, int32_t k)
{
    int64_t i;
    double d;
    switch (type) {
    case PD_ATTR_INTS:
        if (!parse_int64(s, n, INT32_MIN, INT32_MAX, &i))
            return false;
        ((int32_t *)elems)[k] = (int32_t)i;
        return true;
    case PD_ATTR_INT64S:
        if (!parse_int64(s, n, INT64_MIN, INT64_MAX, &i))
            return false;
        ((int64_t *)elems)[k] = i;
        return true;
    case PD_ATTR_FLOATS:
        if (!parse_double(s, n, &d))
            return false;
        ((float *)elems)[k] = (float)d;
        return true;
    default: return false;
    }
}

static bool parse_vector(pd_attr *a, const char *value, void **elems, char **text)
{
    int32_t n = count_elements(value);
    size_t size = a->type == PD_ATTR_INT64S    ? sizeof(int64_t)
                  : a->type == PD_ATTR_STRINGS ? sizeof(char *)
                                               : sizeof(int32_t);
    *elems = pd_cmd_xmalloc(size * (size_t)(n ? n : 1));
    a->count = n;
    a->v.ints = *elems; /* the union's pointers share storage */
    if (a->type == PD_ATTR_STRINGS) {
        *text = pd_cmd_xstrdup(value);
        char **strs = *elems, *p = *text;
        for (int32_t k = 0; k < n; ++k) {
            strs[k] = p;
            p += strcspn(p, ",");
            if (*p)
                *p++ = '\0';
        }
        a->v.strings = (const char *const *)strs;
        return true;
    }
    const char *p = value;
    for (int32_t k = 0; k < n; ++k) {
        size_t len = strcspn(p, ",");
        if (!parse_element(a->type, p, len, *elems, k))
            return false;
        p += len + (p[len] == ',');
    }
    return true;
}

bool pd_cmd_parse_attr(pd_attr *a, const char *name, pd_attr_type type, const char *value,
                       void **elems, char **text)
{
    int64_t i;
    double d;
    memset(a, 0, sizeof *a);
    a->name = name;
    a->type = type;
    *elems = NULL;
    *text = NULL;
    switch (type) {
    case PD_ATTR_BOOL: return parse_bool(value, &a->v.b);
    case PD_ATTR_INT:
        if (!parse_int64(value, strlen(value), INT32_MIN, INT32_MAX, &i))
            return false;
        a->v.i = (int32_t)i;
        return true;
    case PD_ATTR_INT64: return parse_int64(value, strlen(value), INT64_MIN, INT64_MAX, &a->v.i64);
    case PD_ATTR_FLOAT:
        if (!parse_double(value, strlen(value), &d))
            return false;
        a->v.f = (float)d;
        return true;
    case PD_ATTR_DOUBLE: return parse_double(value, strlen(value), &a->v.d);
    case PD_ATTR_STRING: a->v.s = value; return true;
    case PD_ATTR_INTS:
    case PD_ATTR_FLOATS:
    case PD_ATTR_INT64S:
    case PD_ATTR_STRINGS: return parse_vector(a, value, elems, text);
    default: return false;
    }
}

const char *pd_cmd_attr_syntax(pd_attr_type type)
{
    switch (type) {
    case PD_ATTR_BOOL: return "true, false, 1 or 0";
    case PD_ATTR_INT: return "a 32-bit integer";
    case PD_ATTR_INT64: return "a 64-bit integer";
    case PD_ATTR_FLOAT:
    case PD_ATTR_DOUBLE: return "a number";
    case PD_ATTR_STRING: return "any text";
    case PD_ATTR_INTS: return "comma-separated 32-bit integers (2,3)";
    case PD_ATTR_FLOATS: return "comma-separated numbers (0.5,1)";
    case PD_ATTR_INT64S: return "comma-separated 64-bit integers (2,3)";
    case PD_ATTR_STRINGS: return "comma-separated strings (a,b)";
    default: return "a value of a known type";
    }
}
