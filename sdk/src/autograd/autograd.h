/*
 * autograd.h - what the tape (tape.c), the tensor arithmetic it needs (grad_math.c) and
 * gradcheck (gradcheck.c) share: the tape's notion of "the same tensor", element access as
 * double, and how a grad op's arguments are named after the forward op's.
 */
#ifndef PD_AUTOGRAD_H
#define PD_AUTOGRAD_H

#include "pdext_tape.h"
#include "tensor/tensor_internal.h"

/* The tensors a recorded call bound to one declared input or output position. */
typedef struct tape_slot {
    pd_tensor *tensors; /* references owned by the record */
    int32_t count;
} tape_slot;

/* One call recorded by pd_tape_run. */
typedef struct tape_record {
    const pd_op *op;
    int32_t n_in, n_out; /* declared counts */
    tape_slot in[PD_MAX_INPUTS], out[PD_MAX_OUTPUTS];
    pd_attr *attrs; /* deep copies: names, strings and vectors allocated with the record */
    int32_t n_attrs;
    bool active; /* backward: reached from a wrt tensor */
} tape_record;

/* The records in call order. */
struct pd_tape {
    tape_record *records;
    int32_t count, capacity;
};

/* Room for `capacity` records (records move only here). */
pd_status pd__tape_reserve(pd_tape *tape, int32_t capacity);

/* Forgets the records from `count` on (a failed recorded backward pass takes its calls back). */
void pd__tape_truncate(pd_tape *tape, int32_t count);

/* The tape's identity of a tensor value: same storage, first element, dtype, shape and
 * strides (as pd_stride reads them, so a hand-filled dense struct matches its own copy). */
bool pd__tensor_same(const pd_tensor *a, const pd_tensor *b);

/* Element i (C order, dense tensors only) of a float16 / bfloat16 / float32 / float64 tensor
 * as a double, and the store back. Other dtypes read NaN and store nothing. */
double pd__elem_get(const pd_tensor *t, int64_t i);
void pd__elem_set(pd_tensor *t, int64_t i, double v);
/* The dtypes pd__elem_get reads: the ones gradients are taken in. */
bool pd__dtype_differentiable(pd_data_type t);

/* *acc becomes a new dense tensor holding *acc + *g (same shape and dtype; either may be
 * strided); the old *acc is released. `who` names the op in messages. */
pd_status pd__grad_add(const char *who, pd_tensor *acc, const pd_tensor *g);

/* The declared input (input = true) or output position of op that argument slot `arg`, the
 * index-th of a call, binds to: by name (declared name or declaration) or by position. */
int32_t pd__arg_position(const pd_op *op, bool input, const pd_arg *arg, int32_t index);

/* "[2, 3]" into buf (for messages). */
const char *pd__shape_text(const pd_tensor *t, char *buf, size_t size);

/* --- the arguments and random values gradcheck and check run ops on (args.c) ------------- */

/* An op's arguments by declared position, every tensor owned (inputs and outputs alike:
 * PD_MAX_OUTPUTS == PD_MAX_INPUTS). */
typedef struct pd__args {
    int32_t n;
    pd_arg arg[PD_MAX_INPUTS];
} pd__args;

void pd__args_free(pd__args *a);
/* Slot i gets room for `count` tensors (all undefined). */
pd_status pd__args_slot(pd__args *a, int32_t i, int32_t count);
/* Output slots for op's declared outputs: one tensor for a plain one; none for a vector one,
 * whose array the runner makes with exactly its items (tensors NULL), freed by pd__args_free
 * like the others. */
pd_status pd__args_outputs(const pd_op *op, pd__args *o);
/* One run of op on `in` into fresh outputs *out (pd__args_free it either way). */
pd_status pd__args_run(const pd_op *op, pd__args *in, const pd_attr *attrs, int32_t n_attrs,
                       pd__args *out);

/* The values random tensors hold: gradcheck's weights uniform in [-1, 1); check's inputs
 * +-[0.1, 1) (away from kinks such as relu's at 0), or 0, 1 or 2 for integer dtypes (class
 * indices of three or more classes). */
typedef enum pd__random_kind { PD__RANDOM_WEIGHTS, PD__RANDOM_INPUTS } pd__random_kind;
/* A new dense CPU tensor of dtype and shape filled from the generator *state (0 picks a fixed
 * default seed). */
pd_status pd__random_tensor(pd_data_type dtype, int32_t ndim, const int64_t *shape,
                            pd__random_kind kind, uint64_t *state, pd_tensor *out);

#endif /* PD_AUTOGRAD_H */
