/*
 * pdext_executor.h - the executor: op calls run asynchronously through a pipeline of stages,
 * so that the caller's per-op work overlaps the kernels (MindSpore's PyboostRunner model).
 *
 * A call of pd_run_async goes through these stages:
 *   1. on the caller's thread: bind and check the inputs, attrs and outputs exactly as
 *      pd_op_run does (bad input fails here, with the runner's messages); infer the outputs'
 *      shapes and dtypes; allocate the outputs. The caller gets its output tensors at once:
 *      defined, with shape, dtype and memory, but "pending" (not yet computed).
 *   2. on the executor stream's worker: wait for inputs made on other streams (or other
 *      executors), allocate the op's workspace (pd_op_def.workspace), and launch the kernel:
 *      on the CPU the worker runs it; on a device it enqueues it on the executor stream's own
 *      stream of that device (one per executor stream and device, so that the device work of
 *      two executor streams may overlap) and records an event, which carries the order to
 *      whoever reads the result: a call on another stream of the device waits for it on the
 *      device, the host when it reads.
 *
 * Why stage 1 allocates on the caller: a pd_tensor is a value whose `data` field the host
 * reads directly (pd_data), so its memory must exist when the call returns.
 *
 * Ordering rules.
 *   - Calls submitted to one executor stream run in submission order (from any number of
 *     threads: the order in which their pd_run_async calls took the stream's queue).
 *   - A pending tensor may be passed to a later pd_run_async without waiting: the later call
 *     runs after the call that makes it, on any stream of any executor.
 *   - A pending tensor passed to the synchronous runner (pd_run, pd_op_run) is waited for
 *     first. The host functions that read element data wait too: pd_tensor_copy_to,
 *     pd_tensor_cast, pd_tensor_contiguous, pd_npy_save. Reading pd_data(t) directly is the
 *     host's business: call pd_tensor_wait first.
 *   - Inplace ops write into their input's memory; the write is ordered after the call that
 *     made the input. A cycle cannot form: every call depends only on calls submitted before
 *     it. Writes are not ordered after earlier *readers* on other streams: a host that
 *     overwrites, from stream B, a tensor that a call on stream A still reads must wait for
 *     that call (or synchronize) first. On one stream the order is submission order.
 *   - The host must not write into a tensor (its memory) while a call in flight reads it.
 *
 * Errors. A kernel's error (PD_CHECK, PD_THROW, a failed output check, an unallocatable
 * workspace) poisons that call's outputs and the outputs of every later call that uses them;
 * waiting on any of them (pd_tensor_wait) returns the error with the failing op's name and
 * message, as pd_op_run would have. pd_executor_synchronize returns the first error since the
 * last synchronize. Poisoned tensors are released like any other: nothing leaks.
 *
 * Data-dependent outputs. An op whose infer_shape may read input data (one with a vector
 * output and an infer_shape: the count of its items may depend on the data, as for a split)
 * waits on the caller for its inputs before inferring. An op whose outputs inference cannot
 * describe (no inferred shape or dtype: the kernel makes them with pd_set_output) waits for
 * its own launch before pd_run_async returns.
 *
 * Lifetimes. The modules of ops in flight must stay loaded: synchronize before unloading.
 * Input tensors are retained by the pipeline: the host may release its references as soon as
 * pd_run_async returns. Attr values are copied. An input over the host's own memory (a
 * pd_tensor filled by hand, storage NULL) cannot be retained: such a call waits for its
 * launch before pd_run_async returns (its outputs are then complete).
 */
#ifndef PDEXT_EXECUTOR_H
#define PDEXT_EXECUTOR_H

#include "pdext.h"

PD_EXTERN_C_BEGIN
#pragma GCC visibility push(default)

/* An executor: stage queues and their worker threads. Opaque. */
typedef struct pd_executor pd_executor;

/* Options of pd_executor_create. Zero-initialize, set struct_size = sizeof(pd_executor_options)
 * and the fields you want; 0 in a field means its default. A NULL options pointer means all
 * defaults. */
typedef struct pd_executor_options {
    uint32_t struct_size; /* sizeof(pd_executor_options) where the host was compiled */
    /* Executor streams: independent queues, each with its own launch worker thread, whose
     * calls may run side by side. Default 1; at most 64. */
    int32_t n_streams;
    /* Calls a stream may hold submitted but not yet launched; pd_run_async blocks while its
     * stream is full (back pressure). Default 1024; at most 1 << 20. Past the first queued
     * call, the queue also holds at most 2 MiB of outputs: a caller far ahead of large
     * kernels would otherwise keep every queued output alive (fresh memory, cold caches). */
    int32_t depth;
    /* A call on the host whose inputs hold at most half this many bytes runs on the
     * submitting thread, as pd_op_run inside pd_run_async, when its stream has no call queued
     * or running and none of its tensors is pending: for so small a kernel the hand-off to
     * the worker costs more than the kernel. So does a call of any size when the executor
     * has at least as many streams as the process has CPUs (two or more) and every other CPU
     * runs another stream's worker: the submitter's core is then the free one. Never an op
     * flagged PD_OP_MAY_BLOCK. Its outputs are complete on return, and its error (the
     * kernel's too) is pd_run_async's, as bad input's is. Default 65536; -1: never (every
     * call runs on its stream's worker); at most 1 << 20. */
    int32_t inline_bytes;
    /* Whether a stream measures if handing its calls over pays, and runs them on the
     * submitter where it does not (a machine whose cores are busy with other work, a worker
     * that does not keep up): the stream times short trials of both ways (a few ms each) and
     * keeps the faster, trying the other again now and then. A call so run waits first for
     * the calls queued on its stream and for its pending inputs, and is then as an inline
     * call above (complete on return, its error pd_run_async's). Host calls only, never an
     * op flagged PD_OP_MAY_BLOCK (nor while one is in flight). 0: on, unless the environment
     * sets PDEXT_EXECUTOR_ADAPTIVE=0; 1: on; -1: off (calls go where the rules above send
     * them). inline_bytes -1 turns it off too. */
    int32_t adaptive;
} pd_executor_options;

/* A new executor running ops of `reg` (for pd_run_async by name) into *out. Fails with
 * PD_ERR_INVALID_ARGUMENT naming a bad option (a struct_size too small, counts out of range)
 * and PD_ERR_OUT_OF_MEMORY / PD_ERR_INTERNAL when threads cannot be started. */
pd_status pd_executor_create(const pd_registry *reg, const pd_executor_options *options,
                             pd_executor **out);

/* Waits for every call in flight, stops the workers and frees the executor. Tensors it made
 * stay valid (complete, or poisoned: their wait still returns the error). NULL is ignored.
 * The handle's small header is kept for the life of the process, marked destroyed, so that a
 * later pd_run_async / pd_executor_synchronize on it fails with PD_ERR_INVALID_ARGUMENT
 * ("the executor was destroyed") instead of reading freed memory; destroying it twice is
 * also refused that way (returns PD_ERR_INVALID_ARGUMENT). */
pd_status pd_executor_destroy(pd_executor *ex);

/* Submits op `name` of the executor's registry to executor stream `stream` (0 ..
 * n_streams-1). Arguments as pd_run's. On PD_OK each output slot holds new references to
 * pending tensors (see above); on failure nothing is written and nothing was submitted, and
 * the message is the runner's. A destroyed executor or a stream out of range is
 * PD_ERR_INVALID_ARGUMENT. Safe to call from many threads at once. */
pd_status pd_run_async(pd_executor *ex, int32_t stream, const char *name, const pd_arg *inputs,
                       int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs,
                       int32_t n_outputs);
/* pd_run_async for an op handle (pd_op_find). */
pd_status pd_op_run_async(pd_executor *ex, int32_t stream, const pd_op *op, const pd_arg *inputs,
                          int32_t n_inputs, const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs,
                          int32_t n_outputs);

/* Blocks until `t` is computed. PD_OK for a tensor that was never pending or is complete;
 * the failing op's status and message for a poisoned one. With `ex` non-NULL, a tensor
 * made by another executor is refused, complete or not, so the check does not depend on
 * timing (PD_ERR_INVALID_ARGUMENT, nothing waited for); NULL waits on any executor. An undefined or
 * NULL tensor is PD_ERR_INVALID_ARGUMENT. */
pd_status pd_tensor_wait(const pd_executor *ex, const pd_tensor *t);

/* Whether `t` is still being computed (false for a tensor never pending, complete or
 * poisoned). Never blocks. */
bool pd_tensor_is_pending(const pd_tensor *t);

/* Blocks until every call submitted to the executor so far is done, their device work
 * included; returns the first error any of them raised since the last
 * pd_executor_synchronize (then forgotten), else PD_OK (or a device's error waiting). */
pd_status pd_executor_synchronize(pd_executor *ex);

/* Counters of an executor, for tests and tuning: calls submitted, calls done (launched and
 * finished, or poisoned), and calls that failed (their own kernel, or poisoned). */
typedef struct pd_executor_stats {
    uint64_t submitted;
    uint64_t done;
    uint64_t failed;
} pd_executor_stats;
/* The executor's counters into *out. */
pd_status pd_executor_get_stats(const pd_executor *ex, pd_executor_stats *out);

/* Where an executor's calls ran, for tests and tuning. Set struct_size =
 * sizeof(pd_executor_counts) before the call. */
typedef struct pd_executor_counts {
    uint32_t struct_size;
    uint64_t handed_over;     /* calls queued to a stream's worker */
    uint64_t ran_here;        /* calls run on the submitting thread (and done), by any rule */
    uint64_t ran_here_unpaid; /* of those: because handing over was measured not to pay */
    uint64_t trials;          /* trials of either way timed (pd_executor_options.adaptive) */
} pd_executor_counts;
/* The executor's counts into *out (PD_ERR_INVALID_ARGUMENT for a struct_size too small). */
pd_status pd_executor_get_counts(const pd_executor *ex, pd_executor_counts *out);

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_EXECUTOR_H */
