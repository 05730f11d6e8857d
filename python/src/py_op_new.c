/*
 * py_op_new.c - Op objects made: one callable per registered op, with the declaration's facts
 * read once at creation (names, vector / optional inputs, attr types and defaults, the inplace
 * map, a namedtuple type for several outputs, a docstring and a signature), and the type.
 * Calling them is py_op.c.
 *
 * Op objects define __get__ (returning themselves) so that inspect and pydoc treat them as
 * routines: help(ops.custom_relu) shows the signature and the declaration.
 */
#include "py_op.h"

#include <stdlib.h>

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

/* The docstring's section on a grad op's binding to its forward op (grad_inputs,
 * grad_outputs), appended to doc (consumed). */
static PyObject *describe_grad_binding(const pdext_OpObject *self, PyObject *doc)
{
    static const char *const from_text[] = {"nothing of the forward op (cannot be bound)",
                                            "the gradient of forward output", "forward input",
                                            "forward output"};
    Py_SETREF(doc, PyUnicode_FromFormat("%U\n\nBinding to the forward op (grad_inputs, "
                                        "grad_outputs):",
                                        doc));
    for (int32_t i = 0; doc != NULL && i < self->n_in; ++i) {
        int32_t p;
        pd_grad_source from = pd_op_grad_input_source(self->op, i, &p);
        if (from < PD_GRAD_FROM_NONE || from > PD_GRAD_FROM_OUTPUT)
            from = PD_GRAD_FROM_NONE;
        if (from == PD_GRAD_FROM_NONE)
            Py_SETREF(doc, PyUnicode_FromFormat("%U\n    %U: %s", doc, self->in_names[i],
                                                from_text[from]));
        else
            Py_SETREF(doc, PyUnicode_FromFormat("%U\n    %U: %s %d", doc, self->in_names[i],
                                                from_text[from], (int)p));
    }
    for (int32_t o = 0; doc != NULL && o < self->n_out; ++o) {
        int32_t p = pd_op_grad_output_target(self->op, o);
        if (p >= 0)
            Py_SETREF(doc, PyUnicode_FromFormat("%U\n    returns %s: the gradient of forward "
                                                "input %d",
                                                doc, self->out[o].name, (int)p));
        else
            Py_SETREF(doc, PyUnicode_FromFormat("%U\n    returns %s: the gradient of no forward "
                                                "input",
                                                doc, self->out[o].name));
    }
    return doc;
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
    if (doc != NULL && pd_op_get_kind(self->op) != PD_OP_FORWARD)
        doc = describe_grad_binding(self, doc); /* consumes the old doc */
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

/* A grad op's binding to its forward op, as pdext.h's pd_op_grad_input_source publishes it
 * (the fronts read it instead of matching names themselves): `grad_inputs`, per input
 * ("output_grad" | "input" | "output", index) or None when it binds to nothing;
 * `grad_outputs`, per output the forward input it is the gradient of, or None. Both None for a
 * forward op. */
static int expose_grad_binding(pdext_OpObject *self)
{
    static const char *const from_names[] = {NULL, "output_grad", "input", "output"};
    if (pd_op_get_kind(self->op) == PD_OP_FORWARD)
        return PyDict_SetItemString(self->dict, "grad_inputs", Py_None) < 0 ||
                       PyDict_SetItemString(self->dict, "grad_outputs", Py_None) < 0
                   ? -1
                   : 0;
    PyObject *in = PyTuple_New(self->n_in), *out = PyTuple_New(self->n_out);
    int rc = -1;
    if (in == NULL || out == NULL)
        goto done;
    for (int32_t i = 0; i < self->n_in; ++i) {
        int32_t p;
        pd_grad_source from = pd_op_grad_input_source(self->op, i, &p);
        PyObject *v = from > PD_GRAD_FROM_NONE && from <= PD_GRAD_FROM_OUTPUT
                          ? Py_BuildValue("(si)", from_names[from], (int)p)
                          : Py_NewRef(Py_None);
        if (v == NULL)
            goto done;
        PyTuple_SET_ITEM(in, i, v);
    }
    for (int32_t o = 0; o < self->n_out; ++o) {
        int32_t p = pd_op_grad_output_target(self->op, o);
        PyObject *v = p >= 0 ? PyLong_FromLong(p) : Py_NewRef(Py_None);
        if (v == NULL)
            goto done;
        PyTuple_SET_ITEM(out, o, v);
    }
    if (PyDict_SetItemString(self->dict, "grad_inputs", in) == 0 &&
        PyDict_SetItemString(self->dict, "grad_outputs", out) == 0)
        rc = 0;
done:
    Py_XDECREF(in);
    Py_XDECREF(out);
    return rc;
}

PyObject *pdext_op_new(pdext_LibraryObject *lib, const pd_op *op)
{
    pdext_OpObject *self = PyObject_GC_New(pdext_OpObject, &pdext_OpType);
    if (self == NULL)
        return NULL;
    memset((char *)self + offsetof(pdext_OpObject, vectorcall), 0,
           sizeof *self - offsetof(pdext_OpObject, vectorcall));
    self->vectorcall = pdext_op_vectorcall;
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
    if (make_result_type(self) < 0 || describe(self) < 0 || expose_declaration(self) < 0 ||
        expose_grad_binding(self) < 0)
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
