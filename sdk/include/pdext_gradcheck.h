/*
 * pdext_gradcheck.h - is an op's backward right? pd_gradcheck compares the gradient its grad
 * op computes (through the autograd tape, pdext_tape.h) with central finite differences of
 * its forward kernel, element by element, and, where the op has a double grad op, does the
 * same one order up. Link with libpdext.
 *
 * The scalar differentiated is L = sum over the floating outputs of <W, Out>, W fixed random
 * weights, so that every output element takes part with a different weight. Each floating
 * input whose gradient the grad op declares ("<input>@GRAD" among its outputs) is checked;
 * the others (integer inputs, inputs without a declared gradient) are listed in
 * report.skipped with the reason.
 *
 * Precision: when the op also runs in float64, the floating inputs are cast up and the check
 * runs in float64 with tight tolerances; otherwise it runs in the inputs' dtype with step and
 * tolerances scaled to it (report.dtype says which). An element passes when
 * |analytic - numeric| <= atol + rtol * |numeric|.
 */
#ifndef PDEXT_GRADCHECK_H
#define PDEXT_GRADCHECK_H

#include "pdext.h"

PD_EXTERN_C_BEGIN
#pragma GCC visibility push(default)

/* What pd_gradcheck may be told. Zero-initialize and set struct_size = sizeof(...); a zero
 * field means "the default for the dtype the check runs in". */
typedef struct pd_gradcheck_options {
    uint32_t struct_size;
    double step;           /* finite-difference step h: default 1e-6 (float64), 1e-2 (float32), 1e-1
                            * (float16, bfloat16) */
    double atol;           /* default 1e-5 (float64), 1e-2 (float32), 1e-1 (half types) */
    double rtol;           /* default 1e-3 (float64), 1e-2 (float32), 1e-1 (half types) */
    bool keep_dtype;       /* run in the inputs' own dtype even when float64 would work */
    bool skip_double_grad; /* do not check the double grad op */
    int64_t max_elements;  /* check at most this many elements of each input, evenly
                            * spread (0: all); each one costs two forward runs */
    uint64_t seed;         /* seed of the weights W (0: a fixed default) */
} pd_gradcheck_options;

/* One compared element. */
typedef struct pd_gradcheck_element {
    char op[64];      /* the op whose gradient it is: the op, or its grad op for double grad */
    char input[64];   /* that op's input ("X", or "X[1]" for the second tensor of a vector) */
    int64_t index;    /* C-order element index in it */
    double analytic;  /* from the grad op */
    double numeric;   /* (L(x + h) - L(x - h)) / 2h */
    double abs_error; /* |analytic - numeric| */
    double rel_error; /* abs_error / max(|analytic|, |numeric|); 0 when both are 0 */
} pd_gradcheck_element;

typedef struct pd_gradcheck_report {
    bool passed;             /* every compared element (both orders) within tolerance */
    pd_data_type dtype;      /* the dtype the check ran in */
    double atol, rtol, step; /* what it used */
    int64_t elements;        /* elements compared, both orders */
    int32_t inputs_checked;  /* tensors differentiated in the first order */
    /* The element farthest outside (or least inside) its tolerance, first order. */
    pd_gradcheck_element worst;
    bool double_grad_checked; /* the op has a double grad op and it was compared */
    bool double_grad_passed;
    pd_gradcheck_element double_worst; /* the same for the double grad op */
    char skipped[256];                 /* inputs not checked and why, "; "-separated ("" if none) */
} pd_gradcheck_report;

/* Checks op `name` of `reg` at the given inputs and attrs (bound as pd_op_run binds them;
 * the inputs are not modified). Writes *report and returns PD_OK when the check could be made,
 * whether or not it passed (report->passed says). Errors: no such op (PD_ERR_NOT_FOUND); an op
 * without a grad op (PD_ERR_NOT_FOUND, saying so); no floating input to differentiate or no
 * floating output (PD_ERR_INVALID_ARGUMENT, naming them); the op or its grad op failing on
 * these inputs (its error, prefixed). options may be NULL. */
pd_status pd_gradcheck(const pd_registry *reg, const char *name, const pd_arg *inputs,
                       int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs,
                       const pd_gradcheck_options *options, pd_gradcheck_report *report);

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_GRADCHECK_H */
