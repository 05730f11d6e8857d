/*
 * runner_steps.h - the runner's steps (runner.c) as separate entry points, for the executor
 * (exec/), which runs them on different threads: bind on the caller, infer on the caller,
 * then the input step and the kernel on a stream's worker. pd_op_run runs the same steps in
 * one go; these entry points only cut it at its seams, so both paths share every check and
 * every message.
 *
 * The context must not move between the steps (it points into itself): the executor keeps
 * it on the heap.
 */
#ifndef PD_RUNNER_STEPS_H
#define PD_RUNNER_STEPS_H

#include "call/kernel_ctx.h"

/* Sets up ctx for op and binds and checks the host's inputs, attrs and outputs, with the
 * runner's messages. On failure the caller still calls pd__runner_release(ctx, false). */
pd_status pd__runner_bind(pd_kernel_ctx *ctx, const pd_op *op, const pd_arg *inputs,
                          int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs,
                          const pd_arg *outputs, int32_t n_outputs);

/* pd__runner_bind for a call that will only infer (pd_op_infer): the inputs may have no data
 * (dtype, shape and place are checked as in a call), and no outputs are bound. */
pd_status pd__runner_bind_meta(pd_kernel_ctx *ctx, const pd_op *op, const pd_arg *inputs,
                               int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs);

/* A step run under the runner's error frame: returns false when op code failed (the context
 * holds the message; pd__ctx_report turns it into the thread's last error). */
typedef bool (*pd__runner_stage_fn)(pd_kernel_ctx *ctx, void *arg);
bool pd__runner_protected(pd_kernel_ctx *ctx, pd__runner_stage_fn stage, void *arg);

/* Stages for pd__runner_protected. */
/* The runner's input step (storage bounds, strided inputs made contiguous), unless the
 * binder saw to it. */
bool pd__runner_input_step(pd_kernel_ctx *ctx, void *unused);
/* Inference: outputs set up from their inputs, infer functions, the default inference. */
bool pd__runner_infer_step(pd_kernel_ctx *ctx, void *unused);
/* The kernel (phase set to the kernel's). */
bool pd__runner_kernel_step(pd_kernel_ctx *ctx, void *unused);

/* Checks the outputs against inference and moves them into the host's slots (all or none),
 * as pd_op_run does at its end. */
pd_status pd__runner_hand_over(pd_kernel_ctx *ctx, pd_arg *outputs);
/* Checks the outputs as pd__runner_hand_over does, writing nothing: the message of the first
 * output that is not as inferred. */
pd_status pd__runner_check_outputs(pd_kernel_ctx *ctx);
/* pd_op_run for a call the executor runs on its submitting thread, counting it: one is added
 * to *count when the call succeeds, with a load and a store (only one thread may write
 * *count). The executor reaches it as its last call, with no frame of its own left to count
 * after it (bench/NOTES.md). */
pd_status pd__runner_run_counted(const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                                 const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs,
                                 int32_t n_outputs, atomic_uint_fast64_t *count);
/* Releases what the call holds; `handed`: after a successful pd__runner_hand_over. */
void pd__runner_release(pd_kernel_ctx *ctx, bool handed);

#endif /* PD_RUNNER_STEPS_H */
