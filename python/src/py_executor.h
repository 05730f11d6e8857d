/*
 * py_executor.h - the Python front's side of the executor (py_executor.c): pdext.Executor,
 * the executor a `with` block makes current for op calls on its thread, and the waits that
 * pending Tensors need before Python reads their memory.
 */
#ifndef PDEXT_PY_EXECUTOR_H
#define PDEXT_PY_EXECUTOR_H

#include "py_internal.h"

#include "pdext_executor.h"

extern PyTypeObject pdext_ExecutorType;

/* Runs an op call: through this thread's current executor (pd_op_run_async) inside a `with
 * pdext.Executor()` block, else pd_op_run. Called without the GIL. */
pd_status pdext_op_run(const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                       const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs, int32_t n_outputs);
/* An executor is current on this thread: op results are pdext.Tensors (pending ones). */
bool pdext_executor_active(void);
/* This thread's current executor and its stream (*stream), or NULL outside a block: what a
 * MindSpore CustomOpBuilder module's calls go through (py_msext.c). */
pd_executor *pdext_executor_current(int32_t *stream);
/* Waits (GIL released) until the Tensor's memory is computed; 0, or -1 with the op's error
 * raised. */
int pdext_tensor_ready(pdext_TensorObject *self);
/* Tensor.__array__([dtype]): waits, then a numpy array over the memory. */
PyObject *pdext_tensor_array(pdext_TensorObject *self, PyObject *args, PyObject *kwargs);

#endif /* PDEXT_PY_EXECUTOR_H */
