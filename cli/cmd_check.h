/*
 * cmd_check.h - what the files of `pdext check` share (cmd_check.c: the checks and the
 * command; cmd_check_inputs.c: inputs, runs and the --input specs). Private to them.
 */
#ifndef PDEXT_CMD_CHECK_H
#define PDEXT_CMD_CHECK_H

#include "pdext_cmd.h"

#define VECTOR_ITEMS 2 /* tensors given to a vector input */

/* --input [OP.]NAME=D0,D1,...[:DTYPE]: the shape (and dtype) input NAME is checked with (of
 * op OP only, when given: a module's ops may need different shapes). */
typedef struct input_spec {
    char op[128]; /* "": every op */
    char name[64];
    int32_t ndim;
    int64_t shape[PD_MAX_DIMS];
    pd_data_type dtype; /* PD_UNDEFINED: each dtype under test */
} input_spec;

/* The command's verdicts so far, how it shows them, and the --input specs. */
typedef struct check_state {
    bool json;
    int32_t failed, rows;
    FILE *fp;
    const input_spec *specs;
    int32_t n_specs;
} check_state;

/* An op call's arguments, every tensor owned: inputs in `store`, outputs in the arrays the
 * runner made (pd_arg_release). */
typedef struct call_args {
    int32_t n;
    pd_arg arg[PD_MAX_INPUTS];
    pd_tensor store[PD_MAX_INPUTS][VECTOR_ITEMS];
} call_args;

void pd_check_call_free(call_args *c);
/* "[OP.]NAME=D0,D1,...[:DTYPE]" (no dims: a scalar) into *spec; false when malformed. */
bool pd_check_spec_parse(const char *text, input_spec *spec);
/* Random inputs for every declared input (absent optional ones left out): of `dtype` and
 * `shape` [2], or what --input says for that input. With `strided`, 2-d inputs are
 * transposed views, except those whose bit is set in `dense`. */
pd_status pd_check_inputs_make(const check_state *s, const pd_op *op, pd_data_type dtype,
                               const int64_t shape[2], bool strided, uint32_t dense, call_args *c);
/* How many of op's inputs a --input spec gives a shape (then the op runs at those only). */
int32_t pd_check_op_specs(const check_state *s, const pd_op *op);
/* Dense copies of c's tensors. */
pd_status pd_check_inputs_dense(const call_args *c, call_args *d);
/* One run of op on `in` into fresh outputs. */
pd_status pd_check_run(const pd_op *op, call_args *in, const pd_attr *attrs, int32_t n_attrs,
                       call_args *out);
/* Whether two runs' outputs hold the same bytes; `why` says where they differ. */
bool pd_check_outputs_same(const call_args *a, const call_args *b, char *why, size_t size);
/* The first line of the last error, for a table cell. */
const char *pd_check_error_line(char *buf, size_t size);

#endif /* PDEXT_CMD_CHECK_H */
