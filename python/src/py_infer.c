/*
 * py_infer.c - _pdext.op_infer and _pdext.op_infer_facts: an op's inference on shapes only
 * (pd_op_infer), for the framework fronts' trace-time shapes (torch fake kernels,
 * python/pdext/torch.py).
 *
 * op_infer(op, inputs, attrs) takes, per declared input (in order), None for an absent
 * optional input, a description (dtype_name, shape) for a tensor, or a list of descriptions for
 * a vector input; `attrs` is a dict {name: value} converted as a call converts it (missing
 * attrs take their defaults). It returns one entry per declared output: (dtype_name, shape),
 * None for an optional output the op would leave unset, or a list of those for a vector output.
 * No data exists and none is allocated: the infer functions and the runner's checks run exactly
 * as in a call, with the same messages (pdext.OpError, ValueError for an output whose shape only
 * the kernel knows).
 *
 * op_infer_facts(op) says what a host needs to carry symbolic sizes through the default
 * inference: whether the op has infer_shape / infer_dtype functions, and per output the input it
 * mirrors when it has none (-1: none), the rule of the runner's registration (opdef.c's
 * default_source) read from the public declaration; and the attrs' declared defaults.
 */
#include "py_internal.h"

#include <stdlib.h>

/* Room for a vector output's items (a split's count is known only once inference ran). */
#define INFER_VECTOR_ROOM 64

/* Fills *t from the description (dtype_name, shape); 0, or -1 with a TypeError / ValueError. */
static int describe_input(const char *op, const char *input, Py_ssize_t index, PyObject *desc,
                          pd_tensor *t)
{
    char where[160];
    if (index >= 0)
        snprintf(where, sizeof where, "%s: input '%s'[%zd]", op, input, index);
    else
        snprintf(where, sizeof where, "%s: input '%s'", op, input);
    if (!PyTuple_Check(desc) || PyTuple_GET_SIZE(desc) != 2) {
        PyErr_Format(PyExc_TypeError, "op_infer: %s: expected (dtype_name, shape), got %.100s",
                     where, Py_TYPE(desc)->tp_name);
        return -1;
    }
    const char *dname = PyUnicode_AsUTF8(PyTuple_GET_ITEM(desc, 0));
    if (dname == NULL)
        return -1;
    pd_data_type dtype = pd_dtype_from_name(dname);
    if (dtype == PD_UNDEFINED) {
        PyErr_Format(PyExc_TypeError, "op_infer: %s: dtype '%s' has no pdext dtype", where, dname);
        return -1;
    }
    PyObject *shape = PySequence_Fast(PyTuple_GET_ITEM(desc, 1), "shape must be a sequence");
    if (shape == NULL)
        return -1;
    Py_ssize_t ndim = PySequence_Fast_GET_SIZE(shape);
    if (ndim > PD_MAX_DIMS) {
        Py_DECREF(shape);
        PyErr_Format(PyExc_ValueError, "op_infer: %s has %zd dimensions; pdext takes at most %d",
                     where, ndim, PD_MAX_DIMS);
        return -1;
    }
    *t = (pd_tensor)PD_TENSOR_UNDEFINED;
    t->dtype = dtype;
    t->ndim = (int32_t)ndim;
    t->place = pd_place_cpu();
    t->layout = PD_LAYOUT_DENSE;
    for (Py_ssize_t d = 0; d < ndim; ++d) {
        long long v = PyLong_AsLongLong(PySequence_Fast_GET_ITEM(shape, d));
        if (v == -1 && PyErr_Occurred()) {
            Py_DECREF(shape);
            return -1;
        }
        if (v < 0) {
            Py_DECREF(shape);
            PyErr_Format(PyExc_ValueError, "op_infer: %s: size %lld of dimension %zd", where, v, d);
            return -1;
        }
        t->shape[d] = v;
    }
    Py_DECREF(shape);
    int64_t s = 1;
    for (int32_t d = t->ndim - 1; d >= 0; --d) {
        t->strides[d] = s;
        s *= t->shape[d];
    }
    return 0;
}

static PyObject *output_tuple(const pd_tensor *t)
{
    if (t->dtype == PD_UNDEFINED)
        return Py_NewRef(Py_None);
    PyObject *shape = PyTuple_New(t->ndim);
    for (int32_t d = 0; shape != NULL && d < t->ndim; ++d) {
        PyObject *v = PyLong_FromLongLong(t->shape[d]);
        if (v == NULL) {
            Py_CLEAR(shape);
            break;
        }
        PyTuple_SET_ITEM(shape, d, v);
    }
    if (shape == NULL)
        return NULL;
    return Py_BuildValue("(sN)", pd_dtype_name(t->dtype), shape);
}

typedef struct infer_call {
    pd_tensor *tin;
    pd_tensor *tout;
    pdext_attr_slot slots[PD_MAX_ATTRS];
    int32_t n_slots;
} infer_call;

static void infer_call_clear(infer_call *c)
{
    free(c->tin);
    free(c->tout);
    for (int32_t j = 0; j < c->n_slots; ++j)
        pdext_attr_slot_clear(&c->slots[j]);
}

/* The inputs' pd_args from `inputs` (one entry per declared input). 0, or -1 with an
 * exception. */
static int bind_inputs(const pd_op *op, const char *name, PyObject *inputs, pd_arg *args,
                       infer_call *c, int32_t *n_tensors)
{
    int32_t n_in = pd_op_input_count(op);
    if (!PyList_Check(inputs) && !PyTuple_Check(inputs)) {
        PyErr_Format(PyExc_TypeError, "op_infer: %s: inputs must be a list, got %.100s", name,
                     Py_TYPE(inputs)->tp_name);
        return -1;
    }
    if (PySequence_Fast_GET_SIZE(inputs) != n_in) {
        PyErr_Format(PyExc_TypeError, "op_infer: %s declares %d inputs; got %zd", name, (int)n_in,
                     PySequence_Fast_GET_SIZE(inputs));
        return -1;
    }
    PyObject **items = PySequence_Fast_ITEMS(inputs);
    int32_t total = 0;
    for (int32_t i = 0; i < n_in; ++i) {
        pd_arg_info info;
        pd_op_input_info(op, i, &info);
        if (items[i] == Py_None)
            continue;
        if (info.is_vector) {
            if (!PyList_Check(items[i]) && !PyTuple_Check(items[i])) {
                PyErr_Format(PyExc_TypeError, "op_infer: %s: input '%s' takes a list", name,
                             info.name);
                return -1;
            }
            total += (int32_t)PySequence_Fast_GET_SIZE(items[i]);
        } else {
            total += 1;
        }
    }
    c->tin = calloc(total > 0 ? (size_t)total : 1, sizeof *c->tin);
    if (c->tin == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int32_t used = 0;
    for (int32_t i = 0; i < n_in; ++i) {
        pd_arg_info info;
        pd_op_input_info(op, i, &info);
        args[i] = pd_arg_named(NULL, c->tin + used, 0);
        if (items[i] == Py_None) {
            if (!info.is_optional) {
                PyErr_Format(PyExc_TypeError, "op_infer: %s: missing required input '%s'", name,
                             info.name);
                return -1;
            }
            continue;
        }
        bool vec = info.is_vector;
        Py_ssize_t n = vec ? PySequence_Fast_GET_SIZE(items[i]) : 1;
        PyObject **descs = vec ? PySequence_Fast_ITEMS(items[i]) : &items[i];
        for (Py_ssize_t k = 0; k < n; ++k)
            if (describe_input(name, info.name, vec ? k : -1, descs[k], &c->tin[used + k]) < 0)
                return -1;
        args[i].count = (int32_t)n;
        used += (int32_t)n;
    }
    *n_tensors = used;
    return 0;
}

static int bind_attrs(const pd_op *op, const char *name, PyObject *attrs, pd_attr *out,
                      infer_call *c, int32_t *n_attrs)
{
    if (attrs != Py_None && !PyDict_Check(attrs)) {
        PyErr_Format(PyExc_TypeError, "op_infer: %s: attrs must be a dict, got %.100s", name,
                     Py_TYPE(attrs)->tp_name);
        return -1;
    }
    int32_t n = 0, declared = pd_op_attr_count(op);
    Py_ssize_t seen = 0;
    for (int32_t j = 0; j < declared; ++j) {
        pd_attr_info info;
        pd_op_attr_info(op, j, &info);
        PyObject *v = attrs == Py_None ? NULL : PyDict_GetItemString(attrs, info.name);
        if (v == NULL)
            continue; /* the runner gives the default, or says the attr is missing */
        ++seen;
        c->slots[c->n_slots].heap = NULL;
        if (pdext_attr_convert(name, &info, v, &c->slots[c->n_slots]) < 0)
            return -1;
        out[n++] = c->slots[c->n_slots++].attr;
    }
    if (attrs != Py_None && seen != PyDict_Size(attrs)) {
        PyErr_Format(PyExc_TypeError, "op_infer: %s: attrs %R name an attr the op does not declare",
                     name, attrs);
        return -1;
    }
    *n_attrs = n;
    return 0;
}

static PyObject *collect(const pd_op *op, const pd_arg *outs)
{
    int32_t n_out = pd_op_output_count(op);
    PyObject *result = PyTuple_New(n_out);
    for (int32_t o = 0; result != NULL && o < n_out; ++o) {
        pd_arg_info info;
        pd_op_output_info(op, o, &info);
        PyObject *v;
        if (info.is_vector) {
            v = PyList_New(outs[o].count);
            for (int32_t k = 0; v != NULL && k < outs[o].count; ++k) {
                PyObject *item = output_tuple(&outs[o].tensors[k]);
                if (item == NULL)
                    Py_CLEAR(v);
                else
                    PyList_SET_ITEM(v, k, item);
            }
        } else {
            v = outs[o].count > 0 ? output_tuple(&outs[o].tensors[0]) : Py_NewRef(Py_None);
        }
        if (v == NULL)
            Py_CLEAR(result);
        else
            PyTuple_SET_ITEM(result, o, v);
    }
    return result;
}

PyObject *pdext_op_infer(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *op_obj, *inputs, *attrs = Py_None;
    if (!PyArg_ParseTuple(args, "OO|O:op_infer", &op_obj, &inputs, &attrs))
        return NULL;
    const pd_op *op = pdext_op_of(op_obj, "op_infer", NULL);
    if (op == NULL)
        return NULL;
    const char *name = pd_op_name(op);
    infer_call c;
    memset(&c, 0, sizeof c);
    pd_arg in_args[PD_MAX_INPUTS], out_args[PD_MAX_OUTPUTS];
    pd_attr attr_vals[PD_MAX_ATTRS];
    int32_t n_tin = 0, n_attrs = 0;
    PyObject *result = NULL;
    if (bind_inputs(op, name, inputs, in_args, &c, &n_tin) < 0 ||
        bind_attrs(op, name, attrs, attr_vals, &c, &n_attrs) < 0)
        goto done;
    int32_t n_out = pd_op_output_count(op);
    int32_t room = n_tin > INFER_VECTOR_ROOM ? n_tin : INFER_VECTOR_ROOM;
    int32_t need = 0;
    for (int32_t o = 0; o < n_out; ++o) {
        pd_arg_info info;
        pd_op_output_info(op, o, &info);
        need += info.is_vector ? room : 1;
    }
    c.tout = calloc(need > 0 ? (size_t)need : 1, sizeof *c.tout);
    if (c.tout == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    for (int32_t o = 0, used = 0; o < n_out; ++o) {
        pd_arg_info info;
        pd_op_output_info(op, o, &info);
        int32_t cap = info.is_vector ? room : 1;
        out_args[o] = pd_arg_named(NULL, c.tout + used, cap);
        used += cap;
    }
    pd_status st;
    Py_BEGIN_ALLOW_THREADS st = pd_op_infer(op, in_args, pd_op_input_count(op), attr_vals, n_attrs,
                                            out_args, n_out);
    Py_END_ALLOW_THREADS if (st != PD_OK)
    {
        pdext_raise_status(st, NULL);
        goto done;
    }
    result = collect(op, out_args); /* the outputs hold no storage: nothing to release */
done:
    infer_call_clear(&c);
    return result;
}

/* The input output `o` mirrors under the default inference (opdef.c's default_source, from
 * the public declaration): the aliased input of an inplace output, input "N" for output
 * "N@GRAD", the only input of a one-input one-output op, input 0 under
 * PD_OP_OUTPUTS_LIKE_INPUT0; -1 for none. */
static int32_t mirrored_input(const pd_op *op, int32_t o)
{
    const pd_op_def *def = pd_op_definition(op);
    int32_t n_in = pd_op_input_count(op), n_out = pd_op_output_count(op);
    pd_arg_info out;
    pd_op_output_info(op, o, &out);
    for (int32_t k = 0; k < PD_MAX_INPLACE && def->inplace[k][0] != NULL; ++k) {
        if (strcmp(def->inplace[k][1], out.decl) != 0 && strcmp(def->inplace[k][1], out.name) != 0)
            continue;
        for (int32_t i = 0; i < n_in; ++i) {
            pd_arg_info in;
            pd_op_input_info(op, i, &in);
            if (strcmp(def->inplace[k][0], in.decl) == 0 ||
                strcmp(def->inplace[k][0], in.name) == 0)
                return i;
        }
    }
    size_t len = strlen(out.name);
    if (len > 5 && strcmp(out.name + len - 5, "@GRAD") == 0)
        for (int32_t i = 0; i < n_in; ++i) {
            pd_arg_info in;
            pd_op_input_info(op, i, &in);
            if (strlen(in.name) == len - 5 && strncmp(in.name, out.name, len - 5) == 0)
                return i;
        }
    if ((n_in == 1 && n_out == 1) || (n_in > 0 && (def->flags & PD_OP_OUTPUTS_LIKE_INPUT0)))
        return 0;
    return -1;
}

PyObject *pdext_op_infer_facts(PyObject *self, PyObject *op_obj)
{
    (void)self;
    const pd_op *op = pdext_op_of(op_obj, "op_infer_facts", NULL);
    if (op == NULL)
        return NULL;
    const pd_op_def *def = pd_op_definition(op);
    int32_t n_out = pd_op_output_count(op);
    PyObject *sources = PyTuple_New(n_out);
    for (int32_t o = 0; sources != NULL && o < n_out; ++o) {
        PyObject *v = PyLong_FromLong(mirrored_input(op, o));
        if (v == NULL)
            Py_CLEAR(sources);
        else
            PyTuple_SET_ITEM(sources, o, v);
    }
    if (sources == NULL)
        return NULL;
    /* The attrs' defaults, in declared order (None where an attr has none: attr_required says
     * which), for a host's signature; a Python signature cannot always carry them (a required
     * attr may follow one with a default). */
    int32_t n_attr = pd_op_attr_count(op);
    PyObject *defaults = PyTuple_New(n_attr);
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
    if (defaults == NULL) {
        Py_DECREF(sources);
        return NULL;
    }
    return Py_BuildValue("{s:O,s:O,s:N,s:N}", "infer_shape", def->infer_shape ? Py_True : Py_False,
                         "infer_dtype", def->infer_dtype ? Py_True : Py_False, "sources", sources,
                         "attr_defaults", defaults);
}

/* _pdext.op_address(op): the address of op's pd_op, for a native host kernel that runs it
 * (pdext.torch's boxed torch kernel, python/pdext/torch_native.cpp). The pd_op lives as long as
 * its Library object; the caller keeps that alive. */
PyObject *pdext_op_address(PyObject *self, PyObject *op_obj)
{
    (void)self;
    const pd_op *op = pdext_op_of(op_obj, "op_address", NULL);
    return op == NULL ? NULL : PyLong_FromVoidPtr((void *)op);
}
