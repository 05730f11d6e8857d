/*
 * pdext_tape.h - reverse-mode autograd for hosts: a tape that records op calls and runs the
 * ops' registered grad ops backwards over them. Link with libpdext (declared apart from
 * pdext.h so that hosts that only run ops do not see it).
 *
 *     pd_tape *tape;
 *     pd_tape_create(&tape);
 *     pd_tape_run(tape, relu, in, 1, NULL, 0, out, 1);           // runs relu, records it
 *     pd_tape_backward(tape, &loss, NULL, 1, &x, 1, &grad_x);    // d(loss)/d(x)
 *     pd_tape_destroy(tape);
 *
 * Tensors are values (pdext.h), so the tape tells them apart by what they are: two tensors are
 * the same tensor for the tape when they share storage, first element, dtype, shape and
 * strides. A tensor passed to several recorded calls is therefore one variable whose
 * gradients add up. The tape keeps a reference to every tensor it recorded until it is
 * cleared or destroyed.
 *
 * How a grad op's inputs are bound (the names are those of pd_op_input_info): a name that is
 * a forward input ("X") or output ("Out") gets the recorded tensors; "<output>@GRAD" gets the
 * gradient that reached that output (zeros when only another output reaches the loss). Each
 * grad op output "<input>@GRAD" is the gradient of that forward input. Attrs recorded with the
 * forward call are passed to the grad op, the ones it declares.
 *
 * Thread safety: a tape is used by one thread at a time.
 */
#ifndef PDEXT_TAPE_H
#define PDEXT_TAPE_H

#include "pdext.h"

PD_EXTERN_C_BEGIN
#pragma GCC visibility push(default)

typedef struct pd_tape pd_tape; /* an autograd tape: recorded op calls; opaque */

/* A new empty tape in *out. */
pd_status pd_tape_create(pd_tape **out);
/* Releases every recorded tensor and frees the tape. NULL is fine. */
void pd_tape_destroy(pd_tape *tape);
/* Forgets every recorded call (and releases its tensors); the tape stays usable. */
void pd_tape_clear(pd_tape *tape);
/* Number of calls recorded. */
int32_t pd_tape_size(const pd_tape *tape);

/* Runs `op` exactly as pd_op_run does (same arguments, same errors, same outputs) and, when it
 * succeeds, records the call: the op, copies of the attrs, and references to the input and
 * output tensors. A failed call records nothing. */
pd_status pd_tape_run(pd_tape *tape, const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                      const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs, int32_t n_outputs);

/* Gradients of L = sum_i <grads[i], outputs[i]> with respect to wrt[0 .. n_wrt-1]: runs the
 * grad op of every recorded call that lies on a path from a wrt tensor to an output, newest
 * first. grads may be NULL (every output's gradient is ones; the usual scalar loss) and each
 * grads[i] must have outputs[i]'s shape and dtype. Each outputs[i] must be a tensor the tape
 * recorded. On success input_grads[j] is a new tensor (shape and dtype of wrt[j]) the caller
 * releases: zeros when wrt[j] does not reach any output. Errors name the op: a call on the path
 * whose op has no grad op (PD_ERR_NOT_FOUND), a grad op input the tape cannot bind, a failing
 * grad kernel. On failure nothing is written. The tape is left as it was and may be run
 * backwards again. */
pd_status pd_tape_backward(pd_tape *tape, const pd_tensor *outputs, const pd_tensor *grads,
                           int32_t n_outputs, const pd_tensor *wrt, int32_t n_wrt,
                           pd_tensor *input_grads);

/* What pd_tape_backward_ex does beyond pd_tape_backward. Zero-initialize and set struct_size =
 * sizeof(pd_tape_backward_options); fields past struct_size are taken as zero. */
typedef struct pd_tape_backward_options {
    uint32_t struct_size;
    /* Record the backward pass on this same tape: each grad op call is made through
     * pd_tape_run, so input_grads are recorded outputs and a backward pass over them (with
     * the same wrt) gives second derivatives through the double grad ops (<op>_grad_grad).
     * Gradients of a tensor used twice would be added outside any op, so such a path is
     * refused (PD_ERR_UNAVAILABLE) rather than differentiated wrongly. */
    bool record;
} pd_tape_backward_options;

/* pd_tape_backward with options (NULL: none). */
pd_status pd_tape_backward_ex(pd_tape *tape, const pd_tensor *outputs, const pd_tensor *grads,
                              int32_t n_outputs, const pd_tensor *wrt, int32_t n_wrt,
                              pd_tensor *input_grads, const pd_tape_backward_options *options);

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_TAPE_H */
