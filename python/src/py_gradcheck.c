/*
 * py_gradcheck.c - _pdext.gradcheck: pd_gradcheck (pdext_gradcheck.h) on an Op object, its
 * inputs and attrs bound exactly as a call of the op binds them (pdext_call_bind), its report
 * returned as a dict that pdext.gradcheck (python/pdext/workbench.py) turns into an object.
 *
 * The check runs the forward op twice per compared element and the grad op once per input;
 * it holds no Python object while it runs, so the GIL is released.
 */
#include "py_internal.h"

#include "pdext_gradcheck.h"

/* {"op", "input", "index", "analytic", "numeric", "abs_error", "rel_error"} of one element. */
static PyObject *element_dict(const pd_gradcheck_element *e)
{
    return Py_BuildValue("{s:s,s:s,s:L,s:d,s:d,s:d,s:d}", "op", e->op, "input", e->input, "index",
                         (long long)e->index, "analytic", e->analytic, "numeric", e->numeric,
                         "abs_error", e->abs_error, "rel_error", e->rel_error);
}

static PyObject *report_dict(const pd_gradcheck_report *r)
{
    PyObject *worst = element_dict(&r->worst);
    PyObject *dworst = r->double_grad_checked ? element_dict(&r->double_worst) : Py_NewRef(Py_None);
    PyObject *d = NULL;
    if (worst != NULL && dworst != NULL)
        d = Py_BuildValue("{s:O,s:s,s:d,s:d,s:d,s:L,s:i,s:O,s:O,s:O,s:O,s:s}", "passed",
                          r->passed ? Py_True : Py_False, "dtype", pd_dtype_name(r->dtype), "atol",
                          r->atol, "rtol", r->rtol, "step", r->step, "elements",
                          (long long)r->elements, "inputs_checked", (int)r->inputs_checked, "worst",
                          worst, "double_grad_checked", r->double_grad_checked ? Py_True : Py_False,
                          "double_grad_passed", r->double_grad_passed ? Py_True : Py_False,
                          "double_worst", dworst, "skipped", r->skipped);
    Py_XDECREF(worst);
    Py_XDECREF(dworst);
    return d;
}

/* pd_gradcheck copies its inputs, which a borrowed view (no storage) cannot be: each input
 * without a storage is replaced by an owned copy (owned[k] set), dropped by release_owned. A
 * pdext.Tensor's own tensor has a storage, which the Tensor keeps for the call. */
static int own_inputs(pdext_call *cs, bool *owned)
{
    for (int32_t k = 0; k < cs->n_tin; ++k) {
        if (cs->tin[k].storage != NULL)
            continue;
        if (pdext_tensor_own(&cs->tin[k]) < 0)
            return -1;
        owned[k] = true;
    }
    return 0;
}

static void release_owned(pdext_call *cs, const bool *owned)
{
    for (int32_t k = 0; owned != NULL && k < cs->n_tin; ++k)
        if (owned[k])
            pd_tensor_release(&cs->tin[k]);
}

/* gradcheck(op, args, kwargs, step=0.0, atol=0.0, rtol=0.0, keep_dtype=False,
 *           skip_double_grad=False, max_elements=0, seed=0) -> dict */
PyObject *pdext_gradcheck(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kw[] = {"op",           "args", "kwargs",     "step",
                         "atol",         "rtol", "keep_dtype", "skip_double_grad",
                         "max_elements", "seed", NULL};
    PyObject *op_obj = NULL, *call_args = NULL, *call_kwargs = NULL;
    pd_gradcheck_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    int keep = 0, skip_double = 0;
    long long max_elements = 0;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO!O!|dddppLK", kw, &op_obj, &PyTuple_Type,
                                     &call_args, &PyDict_Type, &call_kwargs, &o.step, &o.atol,
                                     &o.rtol, &keep, &skip_double, &max_elements, &seed))
        return NULL;
    const pd_registry *reg = NULL;
    const pd_op *op = pdext_op_of(op_obj, "pdext.gradcheck", &reg);
    if (op == NULL)
        return NULL;
    /* !(x >= 0) refuses NaN as well as negatives. */
    const char *bad = !(o.step >= 0)     ? "eps"
                      : !(o.atol >= 0)   ? "atol"
                      : !(o.rtol >= 0)   ? "rtol"
                      : max_elements < 0 ? "max_elements"
                                         : NULL;
    if (bad != NULL) {
        double v = bad[0] == 'e'   ? o.step
                   : bad[0] == 'a' ? o.atol
                   : bad[0] == 'r' ? o.rtol
                                   : (double)max_elements;
        char text[64];
        snprintf(text, sizeof text, "%g", v);
        PyErr_Format(PyExc_ValueError,
                     "pdext.gradcheck: %s is %s; expected a number >= 0 (0 or None: the default)",
                     bad, text);
        return NULL;
    }
    o.keep_dtype = keep != 0;
    o.skip_double_grad = skip_double != 0;
    o.max_elements = max_elements;
    o.seed = seed;

    /* The vectorcall form of (args, kwargs): positional values, then keyword values. */
    Py_ssize_t npos = PyTuple_GET_SIZE(call_args), nkw = PyDict_GET_SIZE(call_kwargs);
    PyObject **stack = PyMem_Calloc((size_t)(npos + nkw) + 1, sizeof *stack);
    PyObject *kwnames = nkw ? PyTuple_New(nkw) : NULL;
    if (stack == NULL || (nkw && kwnames == NULL)) {
        PyMem_Free(stack);
        Py_XDECREF(kwnames);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < npos; ++i)
        stack[i] = PyTuple_GET_ITEM(call_args, i);
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *value;
    while (PyDict_Next(call_kwargs, &pos, &key, &value)) {
        PyTuple_SET_ITEM(kwnames, k, Py_NewRef(key));
        stack[npos + k++] = value;
    }
    /* The call state is large: the heap, not the stack, holds it. */
    pdext_call *cs = PyMem_Malloc(sizeof *cs);
    PyObject *result = NULL;
    bool *owned = NULL;
    if (cs == NULL) {
        PyErr_NoMemory();
    } else if (pdext_call_bind(op_obj, stack, npos, kwnames, cs) == 0 &&
               (owned = PyMem_Calloc((size_t)cs->n_tin + 1, sizeof *owned)) != NULL &&
               own_inputs(cs, owned) == 0) {
        pd_gradcheck_report report;
        PyThreadState *ts = PyEval_SaveThread();
        pd_status st = pd_gradcheck(reg, pd_op_name(op), cs->in_args, pd_op_input_count(op),
                                    cs->attrs, cs->n_attrs, &o, &report);
        PyEval_RestoreThread(ts);
        if (st != PD_OK)
            pdext_raise_status(st, "pdext.gradcheck");
        else
            result = report_dict(&report);
    }
    if (cs != NULL) {
        release_owned(cs, owned);
        pdext_call_clear(cs);
        PyMem_Free(cs);
    }
    if (result == NULL && !PyErr_Occurred())
        PyErr_NoMemory(); /* the owned flags could not be allocated */
    PyMem_Free(owned);
    PyMem_Free(stack);
    Py_XDECREF(kwnames);
    return result;
}
