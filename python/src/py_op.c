/*
 * py_op.c - calling Op objects (made by py_op_new.c): Python arguments -> pd_arg / pd_attr ->
 * pd_op_run (GIL released) -> Python results.
 *
 * The call path is a vectorcall with everything on the stack for the common case, so a call
 * costs a few hundred nanoseconds over the kernel. Results come back as the kind of the first
 * input: numpy arrays for numpy, pdext.Tensor for Tensors, and for any other DLPack object the
 * from_dlpack of its framework's top-level module (torch.from_dlpack for torch tensors). An
 * inplace output is the input object itself.
 *
 * pdext_call_bind and pdext_op_of are what other files get.
 */
#include "py_op.h"
#include "py_executor.h"

#include "pdext_executor.h"

#include <stdlib.h>

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
    for (uint32_t bits = cs->runner_arrays; bits != 0; bits &= bits - 1)
        pd_arg_release(&cs->out_args[__builtin_ctz(bits)]);
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

/* Output slots: one tensor each for plain outputs; a vector output, whose item count is known
 * only once infer or the kernel ran (a split makes many outputs of one input), gets no room
 * at all: the runner makes its array of exactly the items it has (pd_arg_release). */
_Static_assert(PD_MAX_OUTPUTS <= PDEXT_STACK_TENSORS && PD_MAX_OUTPUTS <= 32,
               "plain outputs fit the stack slots; runner_arrays has a bit per output");

static int bind_outputs(const pdext_OpObject *self, pdext_call *cs)
{
    int32_t used = 0;
    memset(cs->tout, 0, (size_t)self->n_out * sizeof *cs->tout); /* n_out <= PD_MAX_OUTPUTS */
    for (int32_t o = 0; o < self->n_out; ++o) {
        cs->out_args[o].name = NULL;
        if (self->out[o].is_vector) {
            cs->out_args[o].tensors = NULL;
            cs->out_args[o].count = 0;
            cs->runner_arrays |= 1u << o;
            continue;
        }
        cs->out_args[o].tensors = cs->tout + used;
        cs->out_args[o].count = 1;
        ++used;
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
    if (kind == RESULT_FOREIGN) { /* torch: DLPack's C exchange, no Python from_dlpack */
        PyObject *direct = pdext_dl_exchange_result(first, t);
        if (direct != NULL || PyErr_Occurred())
            return direct;
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
    cs->runner_arrays = 0;
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

PyObject *pdext_op_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
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
