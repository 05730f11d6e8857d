/*
 * py_op.h - the Op object's struct, shared by its two files: py_op_new.c reads the
 * declaration into it once (creation, the type) and py_op.c reads it on every call.
 */
#ifndef PDEXT_PY_OP_H
#define PDEXT_PY_OP_H

#include "py_internal.h"

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

/* The call path (py_op.c): tp_vectorcall of every Op object. */
PyObject *pdext_op_vectorcall(PyObject *callable, PyObject *const *args, size_t nargsf,
                              PyObject *kwnames);

#endif /* PDEXT_PY_OP_H */
