/*
 * pdext_check.h - is an op right? pd_check_op runs the checks of `pdext check` on one forward
 * op with random inputs and hands back one row per check as it finishes. The command prints
 * the rows as its table (or JSON) and Python's pdext.check builds its report from them: the
 * checks are written once, here. Link with libpdext.
 *
 *   dtypes         which of float32, float64, float16, bfloat16, int32, int64 the kernel
 *                  takes, found by running it at [3, 4] (the dispatch refuses the others)
 *   shapes+infer   per accepted dtype, runs at [3, 4], one element [1, 1], empty [0, 4] and
 *                  a large [64, 300]; the runner checks every output against the infer
 *                  functions
 *   bad input      a run at an edge shape that the op refuses clearly (PD_CHECK / PD_THROW,
 *                  or the runner before the kernel, with a message naming the op and saying
 *                  why) is no failure: this row reports the refusal as ok
 *   deterministic  two runs on the large inputs (the given ones, see below) give the same bytes
 *   strided        transposed (strided) inputs give the same bytes as their contiguous copies;
 *                  inputs the op writes in place without declaring them strided stay dense
 *   gradcheck      pd_gradcheck (pdext_gradcheck.h) at [3, 4] in float32 and float64 ("gradcheck
 *                  x2" where a double grad op was compared too); skipped, with the reason, for
 *                  an op without a grad op and for other dtypes
 *
 * Every input gets the same shape (a vector input two tensors of it), which suits element-wise
 * ops and ops such as concat. A pd_check_input gives one input its own shape (and dtype), for
 * ops such as a matmul; the op then runs at those shapes only. Floating inputs hold +-[0.1, 1)
 * (away from kinks at 0), integer inputs 0, 1 or 2 (valid class indices of three or more
 * classes). Attrs not given take their declared defaults, else 0 for int and int64 attrs (a
 * guess, said in a note); another attr without a default is an error naming it.
 */
#ifndef PDEXT_CHECK_H
#define PDEXT_CHECK_H

#include "pdext.h"

PD_EXTERN_C_BEGIN
#pragma GCC visibility push(default)

typedef enum pd_check_status {
    PD_CHECK_OK = 0,
    PD_CHECK_FAIL = 1,
    PD_CHECK_SKIP = 2
} pd_check_status;

/* One row; the strings live until the callback returns. */
typedef struct pd_check_row {
    const char *op;    /* the op checked */
    const char *dtype; /* "float32", ...; "-" for the dtypes row */
    const char *check; /* "dtypes", "shapes+infer", "bad input", "deterministic", "strided",
                        * "gradcheck", "gradcheck x2" */
    pd_check_status status;
    const char *detail; /* what it found ("" possible) */
    uint32_t dtypes;    /* the dtypes row: bit (1u << dtype) for each dtype the kernel takes;
                         * 0 in the other rows */
} pd_check_row;

/* The shape (and dtype) input `name` is checked with, of op `op` only when op is not "" (a
 * module's ops may need different shapes). ndim 0 is a scalar. */
typedef struct pd_check_input {
    char op[128];
    char name[64];
    int32_t ndim;
    int64_t shape[PD_MAX_DIMS];
    pd_data_type dtype; /* PD_UNDEFINED: each dtype under test */
} pd_check_input;

/* What pd_check_op may be told. Zero-initialize and set struct_size = sizeof(...). */
typedef struct pd_check_options {
    uint32_t struct_size;
    const pd_check_input *inputs; /* given shapes; an input named by none keeps the default */
    int32_t n_inputs;
    uint64_t seed;    /* of the random inputs (0: a fixed default); the same seed, the same rows */
    bool dtypes_only; /* only the dtypes row (the dtypes a run at [3, 4] takes) */
    /* How the host passes an attr, for notes and errors: before and after its name, e.g.
     * {"--attr ", "=VALUE"} (NULL: {"", "=VALUE"}). */
    const char *attr_hint[2];
    /* Called with each row as it finishes (NULL: rows are only counted). */
    void (*on_row)(void *user, const pd_check_row *row);
    /* Called with each note (an attr guessed as 0). */
    void (*on_note)(void *user, const char *note);
    /* Called before each check starts ("dtypes" with dtype "-", then per dtype), e.g. so that
     * a process that dies in a kernel can say in which case. */
    void (*on_case)(void *user, const char *op, const char *dtype, const char *check);
    void *user;
} pd_check_options;

/* Checks forward op `name` of `reg`, with the given attrs (bound as pd_op_run binds them).
 * Returns PD_OK when the rows could be made, whether or not they passed; *failed (when not
 * NULL) is the count of PD_CHECK_FAIL rows. Errors: no such forward op (PD_ERR_NOT_FOUND);
 * an attr without a value, a default or a guess, or an input given for this op that it does
 * not have (PD_ERR_INVALID_ARGUMENT, naming it). options may be NULL. */
pd_status pd_check_op(const pd_registry *reg, const char *name, const pd_attr *attrs,
                      int32_t n_attrs, const pd_check_options *options, int32_t *failed);

/* Whether every pd_check_input naming an op names a forward op of reg and one of its inputs:
 * PD_OK, or PD_ERR_INVALID_ARGUMENT with a message beginning "OP.NAME: " that lists what
 * there is (a typo would otherwise leave the op checked at the default shapes). */
pd_status pd_check_inputs_validate(const pd_registry *reg, const pd_check_input *inputs,
                                   int32_t n_inputs);

/* "ok", "FAIL" or "skip". */
const char *pd_check_status_name(pd_check_status status);

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_CHECK_H */
