/*
 * py_infer.c - the trace-time face of an op for Python framework fronts (JAX's result shapes,
 * torch's fake kernels): _pdext.infer asks pd_op_infer, the one runtime entry point for
 * output shapes before any data exists, and _pdext._op_handle gives the op's address for
 * native code (an XLA FFI handler) that calls the runner itself.
 *
 *   infer(op, inputs, attrs) -> (outputs, attrs)
 *
 * inputs: one entry per declared input, in declared order: None for an absent optional input,
 * a (dtype, shape) pair for a tensor, a list of pairs for a vector input. dtype is pdext's
 * name ("float32", "bfloat16"; numpy's names are the same), shape a sequence of ints.
 * attrs: a dict of the attrs given; each is converted to its declared type exactly as a call
 * converts it (the same TypeError / ValueError), an unknown name is a TypeError listing the
 * declared ones.
 * Returns outputs, one entry per declared output: a (dtype, shape) pair, a list of pairs for a
 * vector output, None for an optional output the call would leave unset; and attrs: a dict of
 * every declared attr, its default applied where it was not given, as the Python value of
 * what the kernel would read (a float attr's value rounded to float32). An output whose
 * shape only its kernel knows (data-dependent) raises pdext.OpError with pd_op_infer's
 * message, as does every check a real call would fail.
 *
 *   infer_facts(op) -> dict
 *
 * What a host needs to carry symbolic sizes through the default inference: whether the op has
 * infer_shape / infer_dtype functions, per output the input it mirrors when it has none
 * (pd_op_output_mirrors; -1: none), and the attrs' declared defaults (None where an attr has
 * none).
 */
#include "py_internal.h"

#include <stdlib.h>

/* First room for the items of a vector output; pd_op_infer says when an op makes more, and
 * the call is made again with room for them. */
#define INFER_VECTOR_ROOM 16

static int bad_input(const char *op, const pd_arg_info *in, const char *what)
{
    PyErr_Format(PyExc_TypeError, "%s: infer: input '%s' must be %s: a (dtype, shape) pair%s", op,
                 in->name, what,
                 in->is_vector ? " per item, in a list" : (in->is_optional ? " or None" : ""));
    return -1;
}

/* *t: a tensor description (no data) from a (dtype, shape) pair. */
static int describe(const char *op, const pd_arg_info *in, PyObject *pair, pd_tensor *t)
{
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2)
        return bad_input(op, in, "described");
    PyObject *dt = PyTuple_GET_ITEM(pair, 0), *shape = PyTuple_GET_ITEM(pair, 1);
    const char *name = PyUnicode_Check(dt) ? PyUnicode_AsUTF8(dt) : NULL;
    pd_data_type dtype = name ? pd_dtype_from_name(name) : PD_UNDEFINED;
    if (dtype == PD_UNDEFINED) {
        PyErr_Format(PyExc_TypeError,
                     "%s: infer: input '%s' has dtype %R, which pdext does not know", op, in->name,
                     dt);
        return -1;
    }
    PyObject *seq = PySequence_Fast(shape, "shape must be a sequence of ints");
    if (seq == NULL)
        return -1;
    Py_ssize_t nd = PySequence_Fast_GET_SIZE(seq);
    *t = (pd_tensor)PD_TENSOR_UNDEFINED;
    t->dtype = dtype;
    t->place = pd_place_cpu();
    if (nd > PD_MAX_DIMS) {
        Py_DECREF(seq);
        PyErr_Format(PyExc_ValueError, "%s: infer: input '%s' has %zd dims; pdext takes at most %d",
                     op, in->name, nd, PD_MAX_DIMS);
        return -1;
    }
    t->ndim = (int32_t)nd;
    for (Py_ssize_t d = nd - 1, s = 1; d >= 0; --d) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(seq, d));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(seq);
            return -1;
        }
        t->shape[d] = v;
        t->strides[d] = s;
        s *= (Py_ssize_t)(v > 0 ? v : 1);
    }
    Py_DECREF(seq);
    return 0;
}

static PyObject *pair_of(const pd_tensor *t)
{
    PyObject *shape = PyTuple_New(t->ndim);
    if (shape == NULL)
        return NULL;
    for (int32_t d = 0; d < t->ndim; ++d)
        PyTuple_SET_ITEM(shape, d, PyLong_FromLongLong(t->shape[d]));
    return Py_BuildValue("(sN)", pd_dtype_name(t->dtype), shape);
}

typedef struct infer_call {
    pd_arg in[PD_MAX_INPUTS];
    pd_arg out[PD_MAX_OUTPUTS];
    pd_attr attrs[PD_MAX_ATTRS];
    pdext_attr_slot slots[PD_MAX_ATTRS];
    int32_t n_slots;
} infer_call;

static void infer_call_clear(infer_call *c, int32_t n_in, int32_t n_out)
{
    for (int32_t i = 0; i < n_in; ++i)
        free(c->in[i].tensors);
    for (int32_t o = 0; o < n_out; ++o)
        free(c->out[o].tensors);
    for (int32_t j = 0; j < c->n_slots; ++j)
        pdext_attr_slot_clear(&c->slots[j]);
}

static int bind_inputs(const char *name, const pd_op *op, PyObject *inputs, infer_call *c,
                       int32_t n_in)
{
    if (!PyList_Check(inputs) && !PyTuple_Check(inputs))
        return PyErr_Format(PyExc_TypeError, "%s: infer: inputs must be a list", name), -1;
    if (PySequence_Size(inputs) != n_in)
        return PyErr_Format(PyExc_TypeError, "%s: infer: %zd inputs described, the op declares %d",
                            name, PySequence_Size(inputs), (int)n_in),
               -1;
    for (int32_t i = 0; i < n_in; ++i) {
        pd_arg_info info;
        pd_op_input_info(op, i, &info);
        PyObject *item = PySequence_GetItem(inputs, i);
        if (item == NULL)
            return -1;
        int rc = 0;
        if (item == Py_None) {
            c->in[i] = pd_arg_named(NULL, NULL, 0);
        } else if (info.is_vector != PyList_Check(item)) {
            rc = bad_input(name, &info, info.is_vector ? "a list" : "one tensor");
        } else {
            Py_ssize_t k = info.is_vector ? PyList_GET_SIZE(item) : 1;
            c->in[i].tensors = calloc((size_t)(k ? k : 1), sizeof(pd_tensor));
            c->in[i].count = (int32_t)k;
            if (c->in[i].tensors == NULL)
                rc = (PyErr_NoMemory(), -1);
            for (Py_ssize_t j = 0; rc == 0 && j < k; ++j)
                rc = describe(name, &info, info.is_vector ? PyList_GET_ITEM(item, j) : item,
                              &c->in[i].tensors[j]);
        }
        Py_DECREF(item);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* Converts the given attrs by their declarations (the others take their defaults in the
 * runner). */
static int bind_attrs(const char *name, const pd_op *op, PyObject *attrs, infer_call *c)
{
    if (attrs == Py_None)
        return 0;
    if (!PyDict_Check(attrs))
        return PyErr_Format(PyExc_TypeError, "%s: infer: attrs must be a dict", name), -1;
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    int32_t n_attr = pd_op_attr_count(op);
    while (PyDict_Next(attrs, &pos, &key, &value)) {
        const char *k = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
        int32_t j = 0;
        pd_attr_info info;
        for (; k != NULL && j < n_attr; ++j)
            if (pd_op_attr_info(op, j, &info) == PD_OK && strcmp(info.name, k) == 0)
                break;
        if (k == NULL || j == n_attr) {
            PyObject *names = PyUnicode_FromString("");
            for (int32_t a = 0; names != NULL && a < n_attr; ++a)
                Py_SETREF(names, PyUnicode_FromFormat("%U%s'%s'", names, a ? ", " : "",
                                                      pd_op_attr_name(op, a)));
            if (names != NULL)
                PyErr_Format(PyExc_TypeError, "%s(): unknown attr %R; the op declares %s", name,
                             key, n_attr ? PyUnicode_AsUTF8(names) : "no attrs");
            Py_XDECREF(names);
            return -1;
        }
        pdext_attr_slot *slot = &c->slots[c->n_slots];
        if (pdext_attr_convert(name, &info, value, slot) < 0)
            return -1;
        c->attrs[c->n_slots++] = slot->attr;
    }
    return 0;
}

/* Every declared attr as the kernel would read it. */
static PyObject *attrs_applied(const pd_op *op, const infer_call *c)
{
    PyObject *d = PyDict_New();
    for (int32_t j = 0; d != NULL && j < pd_op_attr_count(op); ++j) {
        pd_attr_info info;
        pd_op_attr_info(op, j, &info);
        const pd_attr *a = &info.default_value;
        for (int32_t g = 0; g < c->n_slots; ++g)
            if (strcmp(c->attrs[g].name, info.name) == 0)
                a = &c->attrs[g];
        if (a->type == PD_ATTR_UNDEFINED) {
            Py_DECREF(d);
            return PyErr_Format(PyExc_TypeError,
                                "%s(): attr '%s' (%s) is required; pass it as a keyword",
                                pd_op_name(op), info.name, pd_attr_type_name(info.type));
        }
        PyObject *v = pdext_attr_to_python(a);
        if (v == NULL || PyDict_SetItemString(d, info.name, v) < 0)
            Py_CLEAR(d);
        Py_XDECREF(v);
    }
    return d;
}

static PyObject *outputs_of(const pd_op *op, const infer_call *c, int32_t n_out)
{
    PyObject *list = PyList_New(n_out);
    for (int32_t o = 0; list != NULL && o < n_out; ++o) {
        pd_arg_info info;
        pd_op_output_info(op, o, &info);
        const pd_arg *a = &c->out[o];
        PyObject *v;
        if (info.is_vector) {
            v = PyList_New(a->count);
            for (int32_t k = 0; v != NULL && k < a->count; ++k) {
                PyObject *p = pair_of(&a->tensors[k]);
                if (p == NULL)
                    Py_CLEAR(v);
                else
                    PyList_SET_ITEM(v, k, p);
            }
        } else {
            v = a->count == 1 && a->tensors[0].dtype != PD_UNDEFINED ? pair_of(&a->tensors[0])
                                                                     : Py_NewRef(Py_None);
        }
        if (v == NULL)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, o, v);
    }
    return list;
}

static PyObject *py_infer(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *opobj, *inputs, *attrs = Py_None;
    if (!PyArg_ParseTuple(args, "OO|O:infer", &opobj, &inputs, &attrs))
        return NULL;
    const pd_op *op = pdext_op_of(opobj, "pdext infer", NULL);
    if (op == NULL)
        return NULL;
    const char *name = pd_op_name(op);
    int32_t n_in = pd_op_input_count(op), n_out = pd_op_output_count(op);
    infer_call c;
    memset(&c, 0, sizeof c);
    PyObject *result = NULL;
    if (bind_inputs(name, op, inputs, &c, n_in) < 0 || bind_attrs(name, op, attrs, &c) < 0)
        goto done;
    int32_t room[PD_MAX_OUTPUTS];
    for (int32_t o = 0; o < n_out; ++o) {
        pd_arg_info info;
        pd_op_output_info(op, o, &info);
        room[o] = info.is_vector ? INFER_VECTOR_ROOM : 1;
    }
    pd_status st = PD_OK;
    for (int attempt = 0; attempt < 2; ++attempt) {
        for (int32_t o = 0; o < n_out; ++o) {
            pd_tensor *t = realloc(c.out[o].tensors, (size_t)room[o] * sizeof(pd_tensor));
            if (t == NULL) {
                PyErr_NoMemory();
                goto done;
            }
            c.out[o] = pd_arg_named(NULL, t, room[o]);
        }
        st = pd_op_infer(op, c.in, n_in, c.attrs, c.n_slots, c.out, n_out);
        bool grew = false;
        for (int32_t o = 0; st != PD_OK && o < n_out; ++o)
            if (c.out[o].count > room[o]) {
                room[o] = c.out[o].count; /* a vector output with more items than the room */
                grew = true;
            }
        if (!grew)
            break;
    }
    if (st != PD_OK) {
        pdext_raise_status(st, NULL);
        goto done;
    }
    PyObject *outs = outputs_of(op, &c, n_out);
    PyObject *applied = outs ? attrs_applied(op, &c) : NULL;
    if (outs != NULL && applied != NULL)
        result = PyTuple_Pack(2, outs, applied);
    Py_XDECREF(outs);
    Py_XDECREF(applied);
done:
    infer_call_clear(&c, n_in, n_out);
    return result;
}

static PyObject *py_infer_facts(PyObject *self, PyObject *op_obj)
{
    (void)self;
    const pd_op *op = pdext_op_of(op_obj, "pdext infer_facts", NULL);
    if (op == NULL)
        return NULL;
    const pd_op_def *def = pd_op_definition(op);
    int32_t n_out = pd_op_output_count(op), n_attr = pd_op_attr_count(op);
    PyObject *sources = PyTuple_New(n_out);
    for (int32_t o = 0; sources != NULL && o < n_out; ++o)
        PyTuple_SET_ITEM(sources, o, PyLong_FromLong(pd_op_output_mirrors(op, o)));
    PyObject *defaults = sources ? PyTuple_New(n_attr) : NULL;
    for (int32_t j = 0; defaults != NULL && j < n_attr; ++j) {
        pd_attr_info info;
        pd_op_attr_info(op, j, &info);
        PyObject *v = info.has_default ? pdext_attr_to_python(&info.default_value)
                                       : Py_NewRef(Py_None);
        if (v == NULL)
            Py_CLEAR(defaults);
        else
            PyTuple_SET_ITEM(defaults, j, v);
    }
    if (sources == NULL || defaults == NULL || PyErr_Occurred()) {
        Py_XDECREF(sources);
        Py_XDECREF(defaults);
        return NULL;
    }
    return Py_BuildValue("{s:O,s:O,s:N,s:N}", "infer_shape", def->infer_shape ? Py_True : Py_False,
                         "infer_dtype", def->infer_dtype ? Py_True : Py_False, "sources", sources,
                         "attr_defaults", defaults);
}

/* The op's address, for native code of this process that runs it (pd_op_run): valid while
 * the op's Library object lives. */
static PyObject *py_op_handle(PyObject *self, PyObject *obj)
{
    (void)self;
    const pd_op *op = pdext_op_of(obj, "pdext _op_handle", NULL);
    return op ? PyLong_FromVoidPtr((void *)op) : NULL;
}

PyMethodDef pdext_infer_methods[] =
    {{"infer", py_infer, METH_VARARGS,
      "infer(op, inputs, attrs=None) -> (outputs, attrs)\n"
      "Output dtypes and shapes of a call of op from input descriptions, without data "
      "(pd_op_infer). inputs: per declared input None, (dtype, shape) or a list of pairs "
      "(vector input); attrs: dict. Returns per declared output (dtype, shape), a list of "
      "pairs or None, and every declared attr's value, defaults applied."},
     {"infer_facts", py_infer_facts, METH_O,
      "infer_facts(op) -> dict\nWhether op has infer_shape / infer_dtype functions, per output "
      "the input the default inference mirrors (-1: none), and the attrs' defaults."},
     {"_op_handle", py_op_handle, METH_O,
      "_op_handle(op) -> int\nThe address of the registered op (const pd_op *), for native "
      "code that calls pd_op_run; valid while the op's library is loaded."},
     {NULL, NULL, 0, NULL}};
