/*
 * py_attr.c - Python values to the declared types of attrs (and attr values back to Python,
 * for signatures and docstrings).
 *
 * Conversions are strict where a silent one would hide a mistake: a bool attr takes True or
 * False only, an int attr an integer (not a float, not a bool) that fits, a float attr any
 * real number, a string attr a str, a list attr a list or tuple of such elements. Each error
 * names the op, the attr, its declared type and what was given.
 */
#include "py_internal.h"

#include <stdlib.h>
#include <string.h>

static int type_error(const char *op, const pd_attr_info *info, PyObject *value)
{
    PyErr_Format(PyExc_TypeError, "%s(): attr '%s' is declared '%s', got %.100s", op, info->name,
                 info->decl, Py_TYPE(value)->tp_name);
    return -1;
}

static bool is_integer(PyObject *v) { return !PyBool_Check(v) && PyIndex_Check(v); }

static bool is_real(PyObject *v)
{
    return PyFloat_Check(v) || is_integer(v) ||
           (pdext_numpy_seen() > 0 && PyArray_IsScalar(v, Floating));
}

/* An integer value in [lo, hi]; -1 with an exception naming the attr otherwise. */
static int to_int64(const char *op, const pd_attr_info *info, PyObject *v, int64_t lo, int64_t hi,
                    int64_t *out)
{
    if (!is_integer(v))
        return type_error(op, info, v);
    PyObject *idx = PyNumber_Index(v);
    if (idx == NULL)
        return -1;
    int overflow = 0;
    long long x = PyLong_AsLongLongAndOverflow(idx, &overflow);
    Py_DECREF(idx);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (overflow || x < lo || x > hi) {
        PyErr_Format(PyExc_ValueError, "%s(): attr '%s' (%s) is out of range: %R", op, info->name,
                     info->decl, v);
        return -1;
    }
    *out = x;
    return 0;
}

static int to_double(const char *op, const pd_attr_info *info, PyObject *v, double *out)
{
    if (!is_real(v))
        return type_error(op, info, v);
    double x = PyFloat_AsDouble(v);
    if (x == -1.0 && PyErr_Occurred())
        return -1;
    *out = x;
    return 0;
}

/* Room for n elements of `size` bytes: the slot's buffer, else the heap. */
static void *slot_room(pdext_attr_slot *slot, Py_ssize_t n, size_t size)
{
    if ((size_t)n * size <= sizeof slot->buf)
        return slot->buf;
    slot->heap = malloc((size_t)n * size + 1);
    if (slot->heap == NULL)
        PyErr_NoMemory();
    return slot->heap;
}

/* The UTF-8 form of a str attr (cached in the str, which the caller keeps alive), or NULL with
 * an exception: a NUL inside it is refused, since kernels read a C string and would see only
 * what comes before it. `item` is the list index, or -1 for a plain string attr. */
static const char *c_string_of(const char *op, const pd_attr_info *info, PyObject *value,
                               Py_ssize_t item)
{
    Py_ssize_t n;
    const char *s = PyUnicode_AsUTF8AndSize(value, &n);
    if (s == NULL)
        return NULL;
    const char *nul = memchr(s, '\0', (size_t)n);
    if (nul == NULL)
        return s;
    if (item < 0)
        PyErr_Format(PyExc_ValueError,
                     "%s(): attr '%s' holds a string with a NUL character ('\\0') at byte %zd; "
                     "a string attr reaches the kernel as a C string, which would end there",
                     op, info->name, (Py_ssize_t)(nul - s));
    else
        PyErr_Format(PyExc_ValueError,
                     "%s(): attr '%s': item %zd holds a string with a NUL character ('\\0') at "
                     "byte %zd; a string attr reaches the kernel as a C string, which would end "
                     "there",
                     op, info->name, item, (Py_ssize_t)(nul - s));
    return NULL;
}

static int convert_list(const char *op, const pd_attr_info *info, PyObject *value,
                        pdext_attr_slot *slot)
{
    if (!PyList_Check(value) && !PyTuple_Check(value))
        return type_error(op, info, value);
    Py_ssize_t n = PySequence_Fast_GET_SIZE(value);
    if (n > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "%s(): attr '%s' has too many elements", op, info->name);
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(value);
    pd_attr *a = &slot->attr;
    a->count = (int32_t)n;
    switch (info->type) {
    case PD_ATTR_INTS: {
        int32_t *v = slot_room(slot, n, sizeof *v);
        if (v == NULL)
            return -1;
        for (Py_ssize_t i = 0; i < n; ++i) {
            int64_t x;
            if (to_int64(op, info, items[i], INT32_MIN, INT32_MAX, &x) < 0)
                return -1;
            v[i] = (int32_t)x;
        }
        a->v.ints = v;
        return 0;
    }
    case PD_ATTR_INT64S: {
        int64_t *v = slot_room(slot, n, sizeof *v);
        if (v == NULL)
            return -1;
        for (Py_ssize_t i = 0; i < n; ++i)
            if (to_int64(op, info, items[i], INT64_MIN, INT64_MAX, &v[i]) < 0)
                return -1;
        a->v.int64s = v;
        return 0;
    }
    case PD_ATTR_FLOATS: {
        float *v = slot_room(slot, n, sizeof *v);
        if (v == NULL)
            return -1;
        for (Py_ssize_t i = 0; i < n; ++i) {
            double x;
            if (to_double(op, info, items[i], &x) < 0)
                return -1;
            v[i] = (float)x;
        }
        a->v.floats = v;
        return 0;
    }
    default: {
        const char **v = slot_room(slot, n, sizeof *v);
        if (v == NULL)
            return -1;
        for (Py_ssize_t i = 0; i < n; ++i) {
            if (!PyUnicode_Check(items[i]))
                return type_error(op, info, items[i]);
            /* The UTF-8 form is cached in the str, which the caller's list keeps alive. */
            v[i] = c_string_of(op, info, items[i], i);
            if (v[i] == NULL)
                return -1;
        }
        a->v.strings = v;
        return 0;
    }
    }
}

int pdext_attr_convert(const char *op, const pd_attr_info *info, PyObject *value,
                       pdext_attr_slot *slot)
{
    pd_attr *a = &slot->attr;
    memset(a, 0, sizeof *a);
    slot->heap = NULL;
    a->name = info->name;
    a->type = info->type;
    int64_t i64;
    double d;
    switch (info->type) {
    case PD_ATTR_BOOL:
        if (!PyBool_Check(value) && !(pdext_numpy_seen() > 0 && PyArray_IsScalar(value, Bool)))
            return type_error(op, info, value);
        a->v.b = PyObject_IsTrue(value) != 0;
        return 0;
    case PD_ATTR_INT:
        if (to_int64(op, info, value, INT32_MIN, INT32_MAX, &i64) < 0)
            return -1;
        a->v.i = (int32_t)i64;
        return 0;
    case PD_ATTR_INT64: return to_int64(op, info, value, INT64_MIN, INT64_MAX, &a->v.i64);
    case PD_ATTR_FLOAT:
        if (to_double(op, info, value, &d) < 0)
            return -1;
        a->v.f = (float)d;
        return 0;
    case PD_ATTR_DOUBLE: return to_double(op, info, value, &a->v.d);
    case PD_ATTR_STRING:
        if (!PyUnicode_Check(value))
            return type_error(op, info, value);
        a->v.s = c_string_of(op, info, value, -1);
        return a->v.s == NULL ? -1 : 0;
    case PD_ATTR_INTS:
    case PD_ATTR_FLOATS:
    case PD_ATTR_INT64S:
    case PD_ATTR_STRINGS: return convert_list(op, info, value, slot);
    default:
        PyErr_Format(PyExc_TypeError, "%s(): attr '%s' has an unknown type", op, info->name);
        return -1;
    }
}

void pdext_attr_slot_clear(pdext_attr_slot *slot)
{
    free(slot->heap);
    slot->heap = NULL;
}

PyObject *pdext_attr_to_python(const pd_attr *a)
{
    switch (a->type) {
    case PD_ATTR_BOOL: return PyBool_FromLong(a->v.b);
    case PD_ATTR_INT: return PyLong_FromLong(a->v.i);
    case PD_ATTR_INT64: return PyLong_FromLongLong(a->v.i64);
    case PD_ATTR_FLOAT: return PyFloat_FromDouble(a->v.f);
    case PD_ATTR_DOUBLE: return PyFloat_FromDouble(a->v.d);
    case PD_ATTR_STRING: return PyUnicode_FromString(a->v.s);
    default: break;
    }
    PyObject *list = PyList_New(a->count);
    for (int32_t i = 0; list != NULL && i < a->count; ++i) {
        PyObject *v = a->type == PD_ATTR_INTS      ? PyLong_FromLong(a->v.ints[i])
                      : a->type == PD_ATTR_INT64S  ? PyLong_FromLongLong(a->v.int64s[i])
                      : a->type == PD_ATTR_FLOATS  ? PyFloat_FromDouble(a->v.floats[i])
                      : a->type == PD_ATTR_STRINGS ? PyUnicode_FromString(a->v.strings[i])
                                                   : NULL;
        if (v == NULL) {
            Py_DECREF(list);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "an attr of unknown type");
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}
