/*
 * py_check.c - _pdext.check_op: pd_check_op (pdext_check.h) on an Op object, the C checks of
 * `pdext check`, its rows returned as tuples that pdext.check (python/pdext/workbench.py)
 * turns into its report. Attrs are converted as a call of the op converts them
 * (pdext_attr_convert); the given input shapes become pd_check_input.
 *
 * The check runs kernels many times and holds no Python object while it runs, so the GIL is
 * released: its rows and notes are gathered in C and become Python objects afterwards.
 */
#include "py_internal.h"

#include "pdext_check.h"

#include <stdlib.h>

/* The rows and notes pd_check_op handed over, copied (its strings live only for the call). */
typedef struct gathered {
    PyObject *rows; /* built after the check; NULL until then */
    char **text;    /* per row: op, dtype, check, detail (4 strings); per note: one */
    int *status;    /* per row; -1 marks a note */
    int32_t n, cap;
    bool failed_alloc;
} gathered;

static void gather(gathered *g, int status, const char *const *parts, int n_parts)
{
    if (g->failed_alloc)
        return;
    if (g->n == g->cap) {
        int32_t cap = g->cap ? 2 * g->cap : 64;
        char **text = realloc(g->text, (size_t)cap * 4 * sizeof *text);
        if (text)
            g->text = text;
        int *st = text ? realloc(g->status, (size_t)cap * sizeof *st) : NULL;
        if (!text || !st) {
            g->failed_alloc = true;
            return;
        }
        g->status = st;
        g->cap = cap;
    }
    for (int i = 0; i < 4; ++i) {
        g->text[g->n * 4 + i] = i < n_parts ? strdup(parts[i]) : NULL;
        if (i < n_parts && !g->text[g->n * 4 + i])
            g->failed_alloc = true;
    }
    g->status[g->n++] = status;
}

static void on_row(void *user, const pd_check_row *r)
{
    const char *parts[4] = {r->op, r->dtype, r->check, r->detail};
    gather(user, (int)r->status, parts, 4);
}

static void on_note(void *user, const char *note) { gather(user, -1, &note, 1); }

static void gathered_free(gathered *g)
{
    for (int32_t i = 0; i < g->n * 4; ++i)
        free(g->text[i]);
    free(g->text);
    free(g->status);
}

/* ([(op, dtype, check, status, detail), ...], [note, ...]) */
static PyObject *gathered_to_python(const gathered *g)
{
    PyObject *rows = PyList_New(0), *notes = PyList_New(0), *result = NULL;
    for (int32_t i = 0; rows && notes && i < g->n; ++i) {
        char *const *t = &g->text[i * 4];
        PyObject *item = g->status[i] < 0
                             ? PyUnicode_FromString(t[0])
                             : Py_BuildValue("(sssss)", t[0], t[1], t[2],
                                             pd_check_status_name((pd_check_status)g->status[i]),
                                             t[3]);
        if (!item || PyList_Append(g->status[i] < 0 ? notes : rows, item) < 0) {
            Py_XDECREF(item);
            goto done;
        }
        Py_DECREF(item);
    }
    if (rows && notes)
        result = PyTuple_Pack(2, rows, notes);
done:
    Py_XDECREF(rows);
    Py_XDECREF(notes);
    return result;
}

/* One (op, name, shape, dtype) of the given inputs into *in; -1 with a ValueError or
 * TypeError. */
static int input_of(PyObject *item, pd_check_input *in)
{
    const char *op, *name, *dtype = NULL;
    PyObject *shape;
    memset(in, 0, sizeof *in);
    if (!PyArg_ParseTuple(item, "ssO|z;pdext.check: a shape is (op, name, shape, dtype)", &op,
                          &name, &shape, &dtype))
        return -1;
    if (strlen(op) >= sizeof in->op || strlen(name) >= sizeof in->name) {
        PyErr_Format(PyExc_ValueError, "pdext.check: shapes: the name '%s.%s' is too long", op,
                     name);
        return -1;
    }
    snprintf(in->op, sizeof in->op, "%s", op);
    snprintf(in->name, sizeof in->name, "%s", name);
    PyObject *seq = PySequence_Fast(shape, "pdext.check: a shape is a sequence of ints");
    if (!seq)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    int rc = 0;
    if (n > PD_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "pdext.check: shapes['%s']: %zd dims, at most %d", name, n,
                     PD_MAX_DIMS);
        rc = -1;
    }
    for (Py_ssize_t i = 0; rc == 0 && i < n; ++i) {
        long long d = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, i));
        if (d == -1 && PyErr_Occurred())
            rc = -1;
        else if (d < 0) {
            PyErr_Format(PyExc_ValueError,
                         "pdext.check: shapes['%s']: dim %zd is %lld; expected "
                         ">= 0",
                         name, i, d);
            rc = -1;
        } else
            in->shape[in->ndim++] = d;
    }
    Py_DECREF(seq);
    in->dtype = dtype ? pd_dtype_from_name(dtype) : PD_UNDEFINED;
    if (rc == 0 && dtype && in->dtype == PD_UNDEFINED) {
        PyErr_Format(PyExc_ValueError, "pdext.check: shapes['%s']: unknown dtype '%s'", name,
                     dtype);
        rc = -1;
    }
    return rc;
}

/* check_op(op, attrs, inputs, seed=0) -> ([(op, dtype, check, status, detail), ...], notes):
 * attrs a dict (values for attrs op does not declare are left out: one dict serves a
 * module's ops), inputs a sequence of (op or "", name, shape, dtype or None). */
PyObject *pdext_check_op(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kw[] = {"op", "attrs", "inputs", "seed", NULL};
    PyObject *op_obj, *attr_dict, *inputs_obj;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O|K", kw, &op_obj, &PyDict_Type, &attr_dict,
                                     &inputs_obj, &seed))
        return NULL;
    const pd_registry *reg = NULL;
    const pd_op *op = pdext_op_of(op_obj, "pdext.check", &reg);
    if (op == NULL)
        return NULL;
    PyObject *seq = PySequence_Fast(inputs_obj, "pdext.check: inputs must be a sequence");
    if (!seq)
        return NULL;
    Py_ssize_t n_inputs = PySequence_Fast_GET_SIZE(seq);
    pd_check_input *inputs = PyMem_Calloc((size_t)n_inputs + 1, sizeof *inputs);
    pdext_attr_slot slots[PD_MAX_ATTRS];
    pd_attr attrs[PD_MAX_ATTRS];
    int32_t n_attrs = 0;
    PyObject *result = NULL;
    gathered g;
    memset(&g, 0, sizeof g);
    if (!inputs) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < n_inputs; ++i)
        if (input_of(PySequence_Fast_GET_ITEM(seq, i), &inputs[i]) < 0)
            goto done;
    for (int32_t k = 0; k < pd_op_attr_count(op); ++k) {
        pd_attr_info info;
        PyObject *value;
        if (pd_op_attr_info(op, k, &info) != PD_OK ||
            (value = PyDict_GetItemString(attr_dict, info.name)) == NULL)
            continue;
        if (pdext_attr_convert(pd_op_name(op), &info, value, &slots[n_attrs]) < 0) {
            pdext_attr_slot_clear(&slots[n_attrs]);
            goto done;
        }
        attrs[n_attrs] = slots[n_attrs].attr;
        n_attrs++;
    }
    pd_check_options o = {.struct_size = sizeof o,
                          .inputs = inputs,
                          .n_inputs = (int32_t)n_inputs,
                          .seed = seed,
                          .attr_hint = {"attrs={'", "': VALUE}"},
                          .on_row = on_row,
                          .on_note = on_note,
                          .user = &g};
    PyThreadState *ts = PyEval_SaveThread();
    pd_status st = pd_check_inputs_validate(reg, inputs, (int32_t)n_inputs);
    if (st == PD_OK)
        st = pd_check_op(reg, pd_op_name(op), attrs, n_attrs, &o, NULL);
    PyEval_RestoreThread(ts);
    if (st != PD_OK)
        pdext_raise_status(st, "pdext.check");
    else if (g.failed_alloc)
        PyErr_NoMemory();
    else
        result = gathered_to_python(&g);
done:
    for (int32_t k = 0; k < n_attrs; ++k)
        pdext_attr_slot_clear(&slots[k]);
    gathered_free(&g);
    PyMem_Free(inputs);
    Py_DECREF(seq);
    return result;
}
