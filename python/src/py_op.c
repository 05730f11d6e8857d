/*
 * py_op.c - Op objects: one callable per registered op, with the declaration's facts read
 * once at creation (names, vector / optional inputs, attr types and defaults, the inplace
 * map, a namedtuple type for several outputs, a docstring and a signature), and the call
 * path: Python arguments -> pd_arg / pd_attr -> pd_op_run (GIL released) -> Python results.
 *
 * The call path is a vectorcall with everything on the stack for the common case, so a call
 * costs a few hundred nanoseconds over the kernel. Results come back as the kind of the first
 * input: numpy arrays for numpy, pdext.Tensor for Tensors, and for any other DLPack object the
 * from_dlpack of its framework's top-level module (torch.from_dlpack for torch tensors). An
 * inplace output is the input object itself.
 *
 * Op objects define __get__ (returning themselves) so that inspect and pydoc treat them as
 * routines: help(ops.custom_relu) shows the signature and the declaration.
 *
 * Past 500 lines because the Op struct stays private to this file: creation reads the
 * declaration into it once, and the call path (binding, running, results) reads it on every
 * call; pdext_call_bind and pdext_op_of are what other files get.
 */
#include "py_executor.h"
#include "py_internal.h"

#include "pdext_executor.h"

#include <stdlib.h>

struct pdext_OpObject {
    PyObject_HEAD vectorcallfunc vectorcall;
    PyObject *dict; /* __name__, __doc__, __text_signature__, ... */
    pdext_LibraryObject *lib;
    const pd_op *op;
    const char *name;
    int32_t n_in, n_out, n_attr;
    pd_arg_info in[PD_MAX_INPUTS];
    pd_arg_info out[PD_MAX_OUTPUTS];
    pd_attr_info attr[PD_MAX_ATTRS];
    PyObject *in_names[PD_MAX_INPUTS];     /* Python names of inputs (interned) */
    PyObject *attr_names[PD_MAX_ATTRS];    /* and of attrs */
    int32_t inplace_input[PD_MAX_OUTPUTS]; /* input an output is written into, or -1 */
    bool in_written[PD_MAX_INPUTS];        /* the op writes this input in place */
    bool sized_by_inputs;  /* its work follows its inputs' size (see call_releases_gil) */
    PyObject *result_type; /* namedtuple for several outputs, else NULL */
};

/* --- Creation ------------------------------------------------------------------------------ */

/* A Python identifier for a declared name: "Out@GRAD" -> "Out_GRAD". */
static PyObject *py_name(const char *name)
{
    char buf[128];
    size_t n = 0;
    for (; name[n] != '\0' && n < sizeof buf - 1; ++n) {
        char c = name[n];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                  (n > 0 && c >= '0' && c <= '9');
        buf[n] = ok ? c : '_';
    }
    buf[n] = '\0';
    return PyUnicode_InternFromString(buf);
}

static int32_t input_index(const pdext_OpObject *self, const char *name)
{
    for (int32_t i = 0; i < self->n_in; ++i)
        if (strcmp(self->in[i].name, name) == 0 || strcmp(self->in[i].decl, name) == 0)
            return i;
    return -1;
}

static int32_t output_index(const pdext_OpObject *self, const char *name)
{
    for (int32_t o = 0; o < self->n_out; ++o)
        if (strcmp(self->out[o].name, name) == 0 || strcmp(self->out[o].decl, name) == 0)
            return o;
    return -1;
}

/* "Out" / "list of arrays" / "optional" words for the docstring. */
static const char *arg_kind(const pd_arg_info *a)
{
    return a->is_vector ? (a->is_optional ? "list of arrays, optional" : "list of arrays")
                        : (a->is_optional ? "array, optional" : "array");
}

/* Docstring and __text_signature__ from the declaration. */
static int describe(pdext_OpObject *self)
{
    PyObject *doc = PyUnicode_FromFormat("%s(", self->name);
    PyObject *sig = PyUnicode_FromString("(");
    bool sig_ok = true, seen_default = false;
    for (int32_t i = 0; doc != NULL && sig != NULL && i < self->n_in + self->n_attr; ++i) {
        PyObject *name = i < self->n_in ? self->in_names[i] : self->attr_names[i - self->n_in];
        PyObject *dflt = NULL;
        bool has_default = false;
        if (i < self->n_in) {
            has_default = self->in[i].is_optional;
            dflt = has_default ? Py_NewRef(Py_None) : NULL;
        } else if (self->attr[i - self->n_in].has_default) {
            has_default = true;
            dflt = pdext_attr_to_python(&self->attr[i - self->n_in].default_value);
            if (dflt == NULL) {
                PyErr_Clear();
                sig_ok = false;
            }
        }
        if (!has_default && seen_default)
            sig_ok = false;
        seen_default = seen_default || has_default;
        const char *sep = i ? ", " : "";
        if (dflt != NULL) {
            Py_SETREF(doc, PyUnicode_FromFormat("%U%s%U=%R", doc, sep, name, dflt));
            Py_SETREF(sig, PyUnicode_FromFormat("%U%s%U=%R", sig, sep, name, dflt));
        } else {
            Py_SETREF(doc, PyUnicode_FromFormat("%U%s%U", doc, sep, name));
            Py_SETREF(sig, PyUnicode_FromFormat("%U%s%U", sig, sep, name));
        }
        Py_XDECREF(dflt);
    }
    if (doc == NULL || sig == NULL)
        goto fail;
    Py_SETREF(sig, PyUnicode_FromFormat("%U)", sig));
    /* With a signature, help() prints the call line itself; without one, the doc starts
     * with it (the convention of builtins). */
    if (sig_ok)
        Py_SETREF(doc, PyUnicode_FromString(""));
    else
        Py_SETREF(doc, PyUnicode_FromFormat("%U)\n\n", doc));
    if (doc != NULL)
        Py_SETREF(doc, PyUnicode_FromFormat("%UThe pdext op '%s' (%s:%d).\n\nInputs:", doc,
                                            self->name, pd_op_definition(self->op)->file,
                                            (int)pd_op_definition(self->op)->line));
    for (int32_t i = 0; doc != NULL && i < self->n_in; ++i)
        Py_SETREF(doc,
                  PyUnicode_FromFormat("%U\n    %U: %s (declared \"%s\")%s", doc, self->in_names[i],
                                       arg_kind(&self->in[i]), self->in[i].decl,
                                       self->in_written[i] ? ", written in place" : ""));
    if (doc != NULL && self->n_attr > 0)
        Py_SETREF(doc, PyUnicode_FromFormat("%U\n\nAttrs:", doc));
    for (int32_t j = 0; doc != NULL && j < self->n_attr; ++j)
        Py_SETREF(doc, PyUnicode_FromFormat("%U\n    %U: %s%s", doc, self->attr_names[j],
                                            pd_attr_type_name(self->attr[j].type),
                                            self->attr[j].has_default ? ", optional" : ""));
    if (doc != NULL)
        Py_SETREF(doc, PyUnicode_FromFormat("%U\n\nReturns%s:", doc,
                                            self->n_out > 1 ? " a named tuple of" : ""));
    for (int32_t o = 0; doc != NULL && o < self->n_out; ++o) {
        const char *kind = self->out[o].is_vector ? "list of arrays" : "array";
        if (self->inplace_input[o] >= 0)
            Py_SETREF(doc, PyUnicode_FromFormat("%U\n    %s: %s (the input %s itself)", doc,
                                                self->out[o].name, kind,
                                                self->in[self->inplace_input[o]].name));
        else
            Py_SETREF(doc, PyUnicode_FromFormat("%U\n    %s: %s", doc, self->out[o].name, kind));
    }
    if (doc == NULL)
        goto fail;
    int rc = PyDict_SetItemString(self->dict, "__doc__", doc);
    if (rc == 0 && sig_ok)
        rc = PyDict_SetItemString(self->dict, "__text_signature__", sig);
    Py_DECREF(doc);
    Py_DECREF(sig);
    return rc;
fail:
    Py_XDECREF(doc);
    Py_XDECREF(sig);
    return -1;
}

/* collections.namedtuple("<op>_result", [output names]) for several outputs. */
static int make_result_type(pdext_OpObject *self)
{
    if (self->n_out < 2)
        return 0;
    PyObject *fields = PyList_New(self->n_out);
    for (int32_t o = 0; fields != NULL && o < self->n_out; ++o) {
        PyObject *n = py_name(self->out[o].name);
        if (n == NULL) {
            Py_CLEAR(fields);
            break;
        }
        PyList_SET_ITEM(fields, o, n);
    }
    PyObject *collections = fields ? PyImport_ImportModule("collections") : NULL;
    PyObject *namedtuple = collections ? PyObject_GetAttrString(collections, "namedtuple") : NULL;
    if (namedtuple != NULL) {
        PyObject *args = Py_BuildValue("(sO)", self->name, fields);
        PyObject *kwargs = Py_BuildValue("{s:O}", "rename", Py_True);
        if (args != NULL && kwargs != NULL)
            self->result_type = PyObject_Call(namedtuple, args, kwargs);
        Py_XDECREF(args);
        Py_XDECREF(kwargs);
        Py_DECREF(namedtuple);
    }
    Py_XDECREF(collections);
    Py_XDECREF(fields);
    return self->result_type != NULL ? 0 : -1;
}

/* The declaration as data, for Python code over ops (pdext.torch, pdext.check): `inputs`,
 * `outputs` (declared names without @VECTOR / @OPTIONAL), `attrs` (names), `attr_types` (declared
 * type names), `attr_required` (no default), `vector_inputs`, `optional_inputs` and
 * `written_inputs` (inplace; bools), tuples in declared order; `kind` ("forward", "grad",
 * "double_grad") and `grad_op` (the grad op's name, or None). */
static int expose_declaration(pdext_OpObject *self)
{
    PyObject *in = PyTuple_New(self->n_in), *vec = PyTuple_New(self->n_in);
    PyObject *opt = PyTuple_New(self->n_in), *written = PyTuple_New(self->n_in);
    PyObject *out = PyTuple_New(self->n_out), *attrs = PyTuple_New(self->n_attr);
    int rc = -1;
    if (in == NULL || vec == NULL || opt == NULL || written == NULL || out == NULL || attrs == NULL)
        goto done;
    for (int32_t i = 0; i < self->n_in; ++i) {
        PyObject *n = PyUnicode_FromString(self->in[i].name);
        if (n == NULL)
            goto done;
        PyTuple_SET_ITEM(in, i, n);
        PyTuple_SET_ITEM(vec, i, PyBool_FromLong(self->in[i].is_vector));
        PyTuple_SET_ITEM(opt, i, PyBool_FromLong(self->in[i].is_optional));
        PyTuple_SET_ITEM(written, i, PyBool_FromLong(self->in_written[i]));
    }
    PyObject *vout = PyTuple_New(self->n_out);
    if (vout == NULL || PyDict_SetItemString(self->dict, "vector_outputs", vout) < 0) {
        Py_XDECREF(vout);
        goto done;
    }
    Py_DECREF(vout); /* the dict keeps it */
    for (int32_t o = 0; o < self->n_out; ++o) {
        PyObject *n = PyUnicode_FromString(self->out[o].name);
        if (n == NULL)
            goto done;
        PyTuple_SET_ITEM(out, o, n);
        PyTuple_SET_ITEM(vout, o, PyBool_FromLong(self->out[o].is_vector));
    }
    PyObject *types = PyTuple_New(self->n_attr), *required = PyTuple_New(self->n_attr);
    if (types == NULL || required == NULL ||
        PyDict_SetItemString(self->dict, "attr_types", types) < 0 ||
        PyDict_SetItemString(self->dict, "attr_required", required) < 0) {
        Py_XDECREF(types);
        Py_XDECREF(required);
        goto done;
    }
    Py_DECREF(types); /* the dict keeps them */
    Py_DECREF(required);
    for (int32_t j = 0; j < self->n_attr; ++j) {
        PyObject *t = PyUnicode_FromString(pd_attr_type_name(self->attr[j].type));
        if (t == NULL)
            goto done;
        PyTuple_SET_ITEM(types, j, t);
        PyTuple_SET_ITEM(required, j, PyBool_FromLong(!self->attr[j].has_default));
        PyTuple_SET_ITEM(attrs, j, Py_NewRef(self->attr_names[j]));
    }
    static const char *const kinds[] = {"forward", "grad", "double_grad"};
    pd_op_kind kind = pd_op_get_kind(self->op);
    const pd_op *grad = pd_op_grad(self->op);
    PyObject *kind_name = PyUnicode_FromString(kind <= PD_OP_DOUBLE_GRAD ? kinds[kind] : "?");
    PyObject *grad_name = grad ? PyUnicode_FromString(pd_op_name(grad)) : Py_NewRef(Py_None);
    int set = kind_name && grad_name && PyDict_SetItemString(self->dict, "kind", kind_name) == 0 &&
                      PyDict_SetItemString(self->dict, "grad_op", grad_name) == 0
                  ? 0
                  : -1;
    Py_XDECREF(kind_name);
    Py_XDECREF(grad_name);
    if (set == 0 && PyDict_SetItemString(self->dict, "inputs", in) == 0 &&
        PyDict_SetItemString(self->dict, "vector_inputs", vec) == 0 &&
        PyDict_SetItemString(self->dict, "optional_inputs", opt) == 0 &&
        PyDict_SetItemString(self->dict, "written_inputs", written) == 0 &&
        PyDict_SetItemString(self->dict, "outputs", out) == 0 &&
        PyDict_SetItemString(self->dict, "attrs", attrs) == 0)
        rc = 0;
done:
    Py_XDECREF(in);
    Py_XDECREF(vec);
    Py_XDECREF(opt);
    Py_XDECREF(written);
    Py_XDECREF(out);
    Py_XDECREF(attrs);
    return rc;
}

static PyObject *op_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames);

PyObject *pdext_op_new(pdext_LibraryObject *lib, const pd_op *op)
{
    pdext_OpObject *self = PyObject_GC_New(pdext_OpObject, &pdext_OpType);
    if (self == NULL)
        return NULL;
    memset((char *)self + offsetof(pdext_OpObject, vectorcall), 0,
           sizeof *self - offsetof(pdext_OpObject, vectorcall));
    self->vectorcall = op_vectorcall;
    self->lib = lib;
    Py_INCREF(lib);
    self->op = op;
    self->name = pd_op_name(op);
    self->n_in = pd_op_input_count(op);
    self->n_out = pd_op_output_count(op);
    self->n_attr = pd_op_attr_count(op);
    PyObject_GC_Track(self);
    self->dict = PyDict_New();
    if (self->dict == NULL)
        goto fail;
    for (int32_t i = 0; i < self->n_in; ++i) {
        pd_op_input_info(op, i, &self->in[i]);
        if ((self->in_names[i] = py_name(self->in[i].name)) == NULL)
            goto fail;
    }
    for (int32_t o = 0; o < self->n_out; ++o) {
        pd_op_output_info(op, o, &self->out[o]);
        self->inplace_input[o] = -1;
    }
    for (int32_t j = 0; j < self->n_attr; ++j) {
        pd_op_attr_info(op, j, &self->attr[j]);
        if ((self->attr_names[j] = py_name(self->attr[j].name)) == NULL)
            goto fail;
    }
    const pd_op_def *def = pd_op_definition(op);
    self->sized_by_inputs = self->n_in > 0 && def->infer_shape == NULL && def->workspace == NULL &&
                            !(def->flags & PD_OP_MAY_BLOCK);
    for (int32_t k = 0; k < PD_MAX_INPLACE && def->inplace[k][0] != NULL; ++k) {
        int32_t i = input_index(self, def->inplace[k][0]);
        int32_t o = output_index(self, def->inplace[k][1]);
        if (i >= 0 && o >= 0) {
            self->inplace_input[o] = i;
            self->in_written[i] = true;
        }
    }
    PyObject *name = PyUnicode_FromString(self->name);
    if (name == NULL || PyDict_SetItemString(self->dict, "__name__", name) < 0 ||
        PyDict_SetItemString(self->dict, "__qualname__", name) < 0) {
        Py_XDECREF(name);
        goto fail;
    }
    Py_DECREF(name);
    if (make_result_type(self) < 0 || describe(self) < 0 || expose_declaration(self) < 0)
        goto fail;
    return (PyObject *)self;
fail:
    Py_DECREF(self);
    return NULL;
}

static int op_traverse(pdext_OpObject *self, visitproc visit, void *arg)
{
    Py_VISIT(self->dict);
    Py_VISIT(self->lib);
    Py_VISIT(self->result_type);
    return 0;
}

static int op_clear(pdext_OpObject *self)
{
    Py_CLEAR(self->dict);
    Py_CLEAR(self->result_type);
    for (int32_t i = 0; i < PD_MAX_INPUTS; ++i)
        Py_CLEAR(self->in_names[i]);
    for (int32_t j = 0; j < PD_MAX_ATTRS; ++j)
        Py_CLEAR(self->attr_names[j]);
    Py_CLEAR(self->lib);
    return 0;
}

static void op_dealloc(pdext_OpObject *self)
{
    PyObject_GC_UnTrack(self);
    op_clear(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Op objects are their own __get__, as staticmethods are: they never bind a self. */
static PyObject *op_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)obj;
    (void)type;
    return Py_NewRef(self);
}

static PyObject *op_repr(pdext_OpObject *self)
{
    return PyUnicode_FromFormat("<pdext op %s>", self->name);
}

/* --- Calling -------------------------------------------------------------------------------- */

enum result_kind { RESULT_NUMPY, RESULT_TENSOR, RESULT_FOREIGN };

void pdext_call_clear(pdext_call *cs)
{
    for (int32_t k = 0; k < cs->n_borrowed; ++k)
        pdext_borrow_release(&cs->borrows[k]);
    for (int32_t j = 0; j < cs->n_slots; ++j)
        pdext_attr_slot_clear(&cs->slots[j]);
    for (int32_t k = 0; k < cs->n_tout; ++k)
        if (cs->tout[k].storage != NULL)
            pd_tensor_release(&cs->tout[k]);
    if (cs->tin != cs->stack_in) {
        free(cs->tin);
        free(cs->borrows);
    }
    if (cs->tout != cs->stack_out)
        free(cs->tout);
}

static int fail_type(const pdext_OpObject *self, const char *fmt, PyObject *name)
{
    PyObject *msg = PyUnicode_FromFormat(fmt, name);
    if (msg != NULL) {
        PyErr_Format(PyExc_TypeError, "%s(): %U", self->name, msg);
        Py_DECREF(msg);
    }
    return -1;
}

/* Puts positional and keyword arguments into cs->in_obj / cs->attr_obj (borrowed). */
static int sort_arguments(const pdext_OpObject *self, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, pdext_call *cs)
{
    if (nargs > self->n_in + self->n_attr) {
        PyErr_Format(PyExc_TypeError,
                     "%s() takes at most %d arguments (%d inputs, %d attrs) but %zd were given",
                     self->name, self->n_in + self->n_attr, self->n_in, self->n_attr, nargs);
        return -1;
    }
    for (Py_ssize_t a = 0; a < nargs; ++a) {
        if (a < self->n_in)
            cs->in_obj[a] = args[a];
        else
            cs->attr_obj[a - self->n_in] = args[a];
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; ++k) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        PyObject **slot = NULL;
        /* Keyword names are interned, as ours are: pointers match first. */
        for (int pass = 0; pass < 2 && slot == NULL; ++pass) {
            for (int32_t i = 0; i < self->n_in && slot == NULL; ++i)
                if (pass ? PyUnicode_Compare(key, self->in_names[i]) == 0
                         : key == self->in_names[i])
                    slot = &cs->in_obj[i];
            for (int32_t j = 0; j < self->n_attr && slot == NULL; ++j)
                if (pass ? PyUnicode_Compare(key, self->attr_names[j]) == 0
                         : key == self->attr_names[j])
                    slot = &cs->attr_obj[j];
        }
        if (slot == NULL) {
            PyObject *known = PyUnicode_FromString("");
            for (int32_t i = 0; known && i < self->n_in + self->n_attr; ++i)
                Py_SETREF(known,
                          PyUnicode_FromFormat("%U%s'%U'", known, i ? ", " : "",
                                               i < self->n_in ? self->in_names[i]
                                                              : self->attr_names[i - self->n_in]));
            if (known != NULL)
                PyErr_Format(PyExc_TypeError,
                             "%s() got an unexpected keyword argument '%U' (it takes %U)",
                             self->name, key, known);
            Py_XDECREF(known);
            return -1;
        }
        if (*slot != NULL)
            return fail_type(self, "got multiple values for argument '%U'", key);
        *slot = args[nargs + k];
    }
    return 0;
}

/* Borrows every input tensor; vector inputs take a list or tuple. */
static int bind_inputs(const pdext_OpObject *self, pdext_call *cs)
{
    int32_t total = 0;
    for (int32_t i = 0; i < self->n_in; ++i) {
        PyObject *o = cs->in_obj[i];
        if (o == NULL || o == Py_None) {
            if (!self->in[i].is_optional)
                return fail_type(self, "missing required input '%U'", self->in_names[i]);
            cs->in_obj[i] = NULL;
            continue;
        }
        if (self->in[i].is_vector) {
            if (!PyList_Check(o) && !PyTuple_Check(o))
                return fail_type(self, "input '%U' takes a list of arrays", self->in_names[i]);
            total += (int32_t)PySequence_Fast_GET_SIZE(o);
        } else {
            total += 1;
        }
    }
    cs->tin = cs->stack_in;
    cs->borrows = cs->stack_borrow;
    if (total > PDEXT_STACK_TENSORS) {
        cs->tin = calloc((size_t)total, sizeof *cs->tin);
        cs->borrows = calloc((size_t)total, sizeof *cs->borrows);
        if (cs->tin == NULL || cs->borrows == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    }
    for (int32_t i = 0; i < self->n_in; ++i) {
        PyObject *o = cs->in_obj[i];
        pd_arg *arg = &cs->in_args[i];
        arg->name = NULL;
        arg->tensors = cs->tin + cs->n_tin;
        arg->count = 0;
        if (o == NULL)
            continue;
        bool vec = self->in[i].is_vector;
        Py_ssize_t n = vec ? PySequence_Fast_GET_SIZE(o) : 1;
        PyObject **items = vec ? PySequence_Fast_ITEMS(o) : &o;
        for (Py_ssize_t k = 0; k < n; ++k) {
            pdext_input_name who = {self->name, self->in[i].name, vec ? k : -1};
            if (pdext_input_borrow(items[k], self->in_written[i], &who, &cs->tin[cs->n_tin],
                                   &cs->borrows[cs->n_borrowed]) < 0)
                return -1;
            /* A list item is referenced only by the list, which another thread may change
             * while the kernel runs without the GIL: the call holds its own reference. */
            if (vec && cs->borrows[cs->n_borrowed].buffer_owner == NULL) /* else it holds it */
                cs->borrows[cs->n_borrowed].buffer_owner = Py_NewRef(items[k]);
            cs->n_borrowed++;
            cs->n_tin++;
            if (cs->first == NULL)
                cs->first = items[k];
        }
        arg->count = (int32_t)n;
    }
    return 0;
}

static int bind_attrs(const pdext_OpObject *self, pdext_call *cs, int32_t *n_attrs)
{
    int32_t n = 0;
    for (int32_t j = 0; j < self->n_attr; ++j) {
        cs->slots[j].heap = NULL;
        cs->n_slots = j + 1;
        if (cs->attr_obj[j] == NULL) {
            if (!self->attr[j].has_default) {
                PyErr_Format(PyExc_TypeError, "%s(): missing required attr '%s' (declared '%s')",
                             self->name, self->attr[j].name, self->attr[j].decl);
                return -1;
            }
            continue;
        }
        if (pdext_attr_convert(self->name, &self->attr[j], cs->attr_obj[j], &cs->slots[j]) < 0)
            return -1;
        cs->attrs[n++] = cs->slots[j].attr;
    }
    *n_attrs = n;
    return 0;
}

/* Room a vector output gets at least: its count is known only once infer or the kernel ran
 * (a split makes many outputs of one input), and the runner refuses a call whose output does
 * not fit after the kernel ran, so the room is generous rather than exact. */
#define VECTOR_OUTPUT_ROOM 64

static int32_t vector_room(const pdext_call *cs)
{
    return cs->n_tin > VECTOR_OUTPUT_ROOM ? cs->n_tin : VECTOR_OUTPUT_ROOM;
}

/* Output slots: one tensor each, vector outputs vector_room(). */
static int bind_outputs(const pdext_OpObject *self, pdext_call *cs)
{
    int32_t need = 0;
    for (int32_t o = 0; o < self->n_out; ++o)
        need += self->out[o].is_vector ? vector_room(cs) : 1;
    cs->tout = cs->stack_out;
    if (need > PDEXT_STACK_TENSORS) {
        cs->tout = calloc((size_t)need, sizeof *cs->tout);
        if (cs->tout == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    } else {
        memset(cs->tout, 0, (size_t)need * sizeof *cs->tout);
    }
    int32_t used = 0;
    for (int32_t o = 0; o < self->n_out; ++o) {
        int32_t cap = self->out[o].is_vector ? vector_room(cs) : 1;
        cs->out_args[o].name = NULL;
        cs->out_args[o].tensors = cs->tout + used;
        cs->out_args[o].count = cap;
        used += cap;
    }
    cs->n_tout = used;
    return 0;
}

/* The from_dlpack of the top-level module of `type` (torch.from_dlpack for torch.Tensor), or
 * NULL (no exception) when it has none. The last type asked about is remembered: looking the
 * function up costs more than the op call. */
static PyObject *foreign_from_dlpack(PyTypeObject *type, bool *wants_capsule)
{
    static PyObject *cached_type;
    static PyObject *cached_fn;
    static bool cached_capsule;
    if ((PyObject *)type == cached_type && cached_fn != NULL) {
        *wants_capsule = cached_capsule;
        return cached_fn;
    }
    PyObject *modname = PyObject_GetAttrString((PyObject *)type, "__module__");
    PyObject *dot = PyUnicode_FromString(".");
    PyObject *fn = NULL;
    bool capsule = false;
    if (modname != NULL && dot != NULL && PyUnicode_Check(modname)) {
        PyObject *top = PyUnicode_Partition(modname, dot);
        PyObject *mod = top ? PyImport_Import(PyTuple_GET_ITEM(top, 0)) : NULL;
        if (mod != NULL && PyObject_HasAttrString(mod, "from_dlpack"))
            fn = PyObject_GetAttrString(mod, "from_dlpack");
        /* MindSpore's from_dlpack takes a DLPack capsule only, not an object with __dlpack__. */
        capsule = top != NULL &&
                  PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(top, 0), "mindspore") == 0;
        Py_XDECREF(mod);
        Py_XDECREF(top);
    }
    Py_XDECREF(modname);
    Py_XDECREF(dot);
    PyErr_Clear(); /* a module that cannot be imported just has no from_dlpack */
    if (fn == NULL)
        return NULL;
    /* The cache holds references to both, so the type cannot be freed and its address reused
     * by another while it is remembered. */
    Py_XSETREF(cached_fn, fn);
    Py_INCREF(type);
    Py_XSETREF(cached_type, (PyObject *)type);
    *wants_capsule = cached_capsule = capsule;
    return cached_fn;
}

/* One result object for output tensor *t (whose reference it takes). */
static PyObject *result_object(enum result_kind kind, PyObject *first, pd_tensor *t)
{
    /* The op handed back (a view of) a borrowed input: copy it so that the result owns its
     * memory. */
    if (t->storage == NULL && pdext_tensor_own(t) < 0)
        return NULL;
    if (kind == RESULT_NUMPY)
        return pdext_tensor_to_numpy(t);
    if (kind == RESULT_FOREIGN) { /* a Paddle tensor through DLPack's C API, without Python */
        bool handled;
        PyObject *r = pdext_dlpack_c_result(first, t, &handled);
        if (handled)
            return r;
    }
    PyObject *tensor = pdext_tensor_wrap(t);
    if (tensor == NULL || kind == RESULT_TENSOR)
        return tensor;
    /* Another framework's tensor: its top-level module's from_dlpack (torch.from_dlpack). */
    bool capsule = false;
    PyObject *from_dlpack = foreign_from_dlpack(Py_TYPE(first), &capsule);
    if (from_dlpack == NULL) {
        if (PyErr_Occurred()) {
            Py_DECREF(tensor);
            return NULL;
        }
        return tensor; /* no from_dlpack: the pdext.Tensor itself */
    }
    if (capsule)
        Py_SETREF(tensor, PyObject_CallMethod(tensor, "__dlpack__", NULL));
    PyObject *result = tensor ? PyObject_CallOneArg(from_dlpack, tensor) : NULL;
    Py_XDECREF(tensor);
    return result;
}

PyObject *pdext_result_like(PyObject *first, pd_tensor *t)
{
    enum result_kind kind = RESULT_NUMPY;
    if (first != NULL && !(PyArray_API != NULL && PyArray_Check(first)))
        kind = Py_TYPE(first) == &pdext_TensorType ? RESULT_TENSOR : RESULT_FOREIGN;
    if (pdext_executor_active())
        kind = RESULT_TENSOR;
    return result_object(kind, first, t);
}

static PyObject *collect_results(const pdext_OpObject *self, pdext_call *cs)
{
    enum result_kind kind = RESULT_NUMPY;
    /* A numpy first input attached numpy's API while it was bound. */
    if (cs->first != NULL && !(PyArray_API != NULL && PyArray_Check(cs->first)))
        kind = Py_TYPE(cs->first) == &pdext_TensorType ? RESULT_TENSOR : RESULT_FOREIGN;
    if (pdext_executor_active())
        kind = RESULT_TENSOR; /* pending results: a Tensor waits where it is read */
    PyObject *values[PD_MAX_OUTPUTS] = {0};
    for (int32_t o = 0; o < self->n_out; ++o) {
        pd_arg *arg = &cs->out_args[o];
        if (self->inplace_input[o] >= 0) {
            values[o] = Py_NewRef(cs->in_obj[self->inplace_input[o]]);
            continue;
        }
        if (!self->out[o].is_vector) {
            values[o] = result_object(kind, cs->first, &arg->tensors[0]);
        } else {
            values[o] = PyList_New(arg->count);
            for (int32_t k = 0; values[o] != NULL && k < arg->count; ++k) {
                PyObject *v = result_object(kind, cs->first, &arg->tensors[k]);
                if (v == NULL)
                    Py_CLEAR(values[o]);
                else
                    PyList_SET_ITEM(values[o], k, v);
            }
        }
        if (values[o] == NULL) {
            for (int32_t p = 0; p < o; ++p)
                Py_DECREF(values[p]);
            return NULL;
        }
    }
    if (self->n_out == 1)
        return values[0];
    PyObject *tuple = PyTuple_New(self->n_out);
    for (int32_t o = 0; o < self->n_out; ++o) {
        if (tuple == NULL)
            Py_DECREF(values[o]);
        else
            PyTuple_SET_ITEM(tuple, o, values[o]);
    }
    if (tuple == NULL || self->result_type == NULL)
        return tuple;
    PyObject *named = PyObject_Call(self->result_type, tuple, NULL);
    Py_DECREF(tuple);
    return named;
}

/* pdext_call_bind for an Op known to be one; static so that the call path inlines it. */
static void call_init(pdext_call *cs)
{
    /* Only the bookkeeping is cleared; the big arrays are written before they are read. */
    memset(cs->in_obj, 0, sizeof cs->in_obj);
    memset(cs->attr_obj, 0, sizeof cs->attr_obj);
    cs->n_attrs = cs->n_slots = cs->n_tin = cs->n_borrowed = cs->n_tout = 0;
    cs->tin = cs->stack_in;
    cs->tout = cs->stack_out;
    cs->borrows = cs->stack_borrow;
    cs->first = NULL;
}

static int call_bind(pdext_OpObject *self, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames, pdext_call *cs)
{
    call_init(cs);
    if (sort_arguments(self, args, nargs, kwnames, cs) < 0 || bind_inputs(self, cs) < 0 ||
        bind_attrs(self, cs, &cs->n_attrs) < 0 || bind_outputs(self, cs) < 0)
        return -1;
    return 0;
}

int pdext_call_bind(PyObject *obj, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    pdext_call *cs)
{
    if (pdext_op_of(obj, "pdext", NULL) == NULL) {
        call_init(cs);
        return -1;
    }
    return call_bind((pdext_OpObject *)obj, args, nargs, kwnames, cs);
}

const pd_op *pdext_op_of(PyObject *obj, const char *who, const pd_registry **reg)
{
    if (!PyObject_TypeCheck(obj, &pdext_OpType)) {
        PyErr_Format(PyExc_TypeError, "%s: expected a pdext op (ops.<name>), got %.100s", who,
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    pdext_OpObject *self = (pdext_OpObject *)obj;
    if (reg != NULL)
        *reg = self->lib->reg;
    return self->op;
}

/* Input bytes up to which a synchronous call keeps the GIL through its kernel, and how many
 * calls released it (pdext._pdext._gil_releases(), for the tests). */
static Py_ssize_t gil_keep_bytes = PDEXT_GIL_KEEP_BYTES;
static unsigned long long gil_releases;

PyObject *pdext_gil_releases(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    return PyLong_FromUnsignedLongLong(gil_releases);
}

PyObject *pdext_set_gil_threshold(PyObject *module, PyObject *arg)
{
    (void)module;
    Py_ssize_t n = PyNumber_AsSsize_t(arg, PyExc_OverflowError);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n < 0)
        return PyErr_Format(PyExc_ValueError,
                            "set_gil_threshold: nbytes is %zd; expected >= 0 (0: every call "
                            "releases the GIL)",
                            n);
    Py_ssize_t old = gil_keep_bytes;
    gil_keep_bytes = n;
    return PyLong_FromSsize_t(old);
}

/* Whether the kernel runs with the GIL released. Handing the GIL over and taking it back
 * costs about 50 ns, more than a kernel on a few thousand bytes, so a synchronous call of an
 * op whose work follows its inputs' size, on host inputs of at most gil_keep_bytes in all,
 * keeps it, as numpy's ufunc loops keep it below 500 elements. Every other call releases it:
 * larger inputs, device inputs, ops that size their outputs or workspace themselves or say
 * they may block (PD_OP_MAY_BLOCK), calls through an executor, and inputs an executor is
 * still computing (the call waits for them). */
static bool call_releases_gil(const pdext_OpObject *self, const pdext_call *cs)
{
    if (!self->sized_by_inputs || pdext_executor_active())
        return true;
    Py_ssize_t bytes = 0;
    for (int32_t k = 0; k < cs->n_tin; ++k) {
        const pd_tensor *t = &cs->tin[k];
        if (!pd_place_is_host(t->place) || pd_tensor_is_pending(t))
            return true;
        bytes += (Py_ssize_t)(pd_numel(t) * (int64_t)pd_dtype_size(t->dtype));
    }
    return bytes > gil_keep_bytes;
}

static PyObject *op_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                               PyObject *kwnames)
{
    pdext_OpObject *self = (pdext_OpObject *)callable;
    pdext_call cs;
    PyObject *result = NULL;
    if (call_bind(self, args, PyVectorcall_NARGS(nargsf), kwnames, &cs) < 0)
        goto done;
    /* Other Python threads go on while the kernel runs (but a small one, call_releases_gil). */
    PyThreadState *ts = NULL;
    if (call_releases_gil(self, &cs)) {
        ++gil_releases;
        ts = PyEval_SaveThread();
    }
    pd_status st = pdext_op_run(self->op, cs.in_args, self->n_in, cs.attrs, cs.n_attrs, cs.out_args,
                                self->n_out); /* pd_op_run, or the current executor's */
    if (ts != NULL)
        PyEval_RestoreThread(ts);
    if (st != PD_OK) {
        cs.n_tout = 0; /* a failed run wrote nothing */
        pdext_raise_status(st, NULL);
        goto done;
    }
    result = collect_results(self, &cs);
done:
    pdext_call_clear(&cs);
    return result;
}

PyTypeObject pdext_OpType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pdext.Op",
    .tp_basicsize = sizeof(pdext_OpObject),
    .tp_dealloc = (destructor)op_dealloc,
    .tp_vectorcall_offset = offsetof(pdext_OpObject, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = (reprfunc)op_repr,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_doc = "A pdext op, called like a function on arrays and attrs.",
    .tp_traverse = (traverseproc)op_traverse,
    .tp_clear = (inquiry)op_clear,
    .tp_descr_get = op_descr_get,
    .tp_dictoffset = offsetof(pdext_OpObject, dict),
};
