/*
 * py_executor.c - pdext.Executor: op calls made inside `with pdext.Executor() as ex:` on a
 * thread go through the executor (pdext_executor.h) and return pending pdext.Tensors at once;
 * a chain y = ops.f(ops.g(x)) never waits between the calls. Reading a Tensor's memory
 * (.numpy(), np.asarray / __array__, the buffer protocol, __dlpack__) waits for it; leaving
 * the block synchronizes and raises the first error of the block's calls.
 *
 * The current executor is a C thread-local: the call path reads it with one load and needs
 * no Python object lookup.
 */
#include "py_executor.h"

#include "pdext_executor.h"

#include <sched.h>
#include <time.h>

typedef struct pdext_ExecutorObject {
    PyObject_HEAD pd_executor *ex;
    int32_t n_streams;
    int32_t stream; /* the stream calls go to */
    int entered;    /* `with` blocks on this object open now, on every thread */
} pdext_ExecutorObject;

/* inline_bytes of an Executor that gives none. Smaller than the C default (65536): a Python
 * call costs its caller ~0.25 us more than a C call, time the worker overlaps with the
 * kernel, so handing a call over pays for kernels past ~0.3 us (inputs of ~8 KiB and up);
 * below that the call still runs at once on the caller when its stream is idle. A chain of
 * 16 KiB relu/add calls ran 1.3x faster than synchronous calls handed over, 0.95x inline. */
#define PY_INLINE_DEFAULT 16384

static _Thread_local pd_executor *current_ex;
static _Thread_local int32_t current_stream;

/* What each open `with` block of this thread replaced, innermost last: leaving a block
 * restores what its thread had, whatever other threads entered the same object meanwhile. */
#define OUTER_MAX 64
typedef struct outer_entry {
    const pdext_ExecutorObject *owner; /* the block's executor object */
    pd_executor *ex;
    int32_t stream;
} outer_entry;
static _Thread_local outer_entry outer[OUTER_MAX];
static _Thread_local int n_outer;

bool pdext_executor_active(void) { return current_ex != NULL; }

pd_executor *pdext_executor_current(int32_t *stream)
{
    *stream = current_stream;
    return current_ex;
}

pd_status pdext_op_run(const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                       const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs, int32_t n_outputs)
{
    if (current_ex != NULL)
        return pd_op_run_async(current_ex, current_stream, op, inputs, n_inputs, attrs, n_attrs,
                               outputs, n_outputs);
    return pd_op_run(op, inputs, n_inputs, attrs, n_attrs, outputs, n_outputs);
}

/* Polls, without the GIL, until t is not pending or about 50 ms have passed: first spinning
 * (a call handed over a moment ago usually ends within microseconds), then sleeping in steps
 * that grow to 1 ms. */
static void wait_slice(const pd_tensor *t)
{
    for (int i = 0; i < 2048; ++i) {
        if (!pd_tensor_is_pending(t))
            return;
        if (i % 64 == 63)
            sched_yield();
    }
    long nap = 20000, slept = 0; /* ns */
    while (pd_tensor_is_pending(t) && slept < 50000000) {
        struct timespec ts = {0, nap};
        nanosleep(&ts, NULL);
        slept += nap;
        nap = nap < 1000000 ? nap * 2 : 1000000;
    }
}

int pdext_tensor_ready(pdext_TensorObject *self)
{
    /* Waits in slices with the GIL released, and between them runs Python's signal handlers:
     * Ctrl-C raises KeyboardInterrupt while a long kernel runs, not once it ends (the C wait
     * cannot be interrupted). A computed or poisoned tensor is not pending: no wait. */
    while (pd_tensor_is_pending(&self->t)) {
        PyThreadState *ts = PyEval_SaveThread();
        wait_slice(&self->t);
        PyEval_RestoreThread(ts);
        if (pd_tensor_is_pending(&self->t) && PyErr_CheckSignals() < 0)
            return -1;
    }
    pd_status st = pd_tensor_wait(NULL, &self->t); /* PD_OK, or the poisoned call's error */
    if (st != PD_OK) {
        pdext_raise_status(st, NULL);
        return -1;
    }
    return 0;
}

PyObject *pdext_tensor_array(pdext_TensorObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO", kw, &dtype, &copy))
        return NULL;
    if (pdext_tensor_ready(self) < 0 || pdext_numpy_require() < 0)
        return NULL;
    pd_tensor t;
    pd_tensor_retain(&t, &self->t);
    PyObject *array = pdext_tensor_to_numpy(&t);
    if (array == NULL || dtype == Py_None)
        return array;
    PyObject *cast = PyObject_CallMethod(array, "astype", "O", dtype);
    Py_DECREF(array);
    return cast;
}

/* --- pdext.Executor ----------------------------------------------------------------------- */

static int executor_init(pdext_ExecutorObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"streams", "depth", "inline_bytes", NULL};
    int streams = 1, depth = 0, inline_bytes = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|iii", kw, &streams, &depth, &inline_bytes))
        return -1;
    if (self->ex != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "pdext.Executor: already initialized");
        return -1;
    }
    pd_executor_options o = {sizeof o, streams, depth,
                             inline_bytes == 0 ? PY_INLINE_DEFAULT : inline_bytes, 0};
    pd_status st = pd_executor_create(NULL, &o, &self->ex);
    if (st != PD_OK) {
        pdext_raise_status(st, NULL);
        return -1;
    }
    self->n_streams = streams;
    return 0;
}

/* Waits for every call and ends the executor (GIL released while waiting). */
static void executor_close_now(pdext_ExecutorObject *self)
{
    if (self->ex == NULL)
        return;
    if (current_ex == self->ex)
        current_ex = NULL;
    pd_executor *ex = self->ex;
    self->ex = NULL;
    Py_BEGIN_ALLOW_THREADS pd_executor_destroy(ex);
    Py_END_ALLOW_THREADS
}

static void executor_dealloc(pdext_ExecutorObject *self)
{
    executor_close_now(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int need_open(const pdext_ExecutorObject *self)
{
    if (self->ex != NULL)
        return 0;
    PyErr_SetString(PyExc_ValueError, "pdext.Executor: the executor is closed");
    return -1;
}

static PyObject *executor_synchronize(pdext_ExecutorObject *self, PyObject *unused)
{
    (void)unused;
    if (need_open(self) < 0)
        return NULL;
    pd_status st;
    Py_BEGIN_ALLOW_THREADS st = pd_executor_synchronize(self->ex);
    Py_END_ALLOW_THREADS if (st != PD_OK) return pdext_raise_status(st, NULL);
    Py_RETURN_NONE;
}

static PyObject *executor_enter(pdext_ExecutorObject *self, PyObject *unused)
{
    (void)unused;
    if (need_open(self) < 0)
        return NULL;
    if (n_outer == OUTER_MAX) {
        PyErr_Format(PyExc_RuntimeError,
                     "pdext.Executor: `with` blocks nest %d deep on this thread; at most %d",
                     n_outer + 1, OUTER_MAX);
        return NULL;
    }
    outer[n_outer++] = (outer_entry){self, current_ex, current_stream};
    self->entered++;
    current_ex = self->ex;
    current_stream = self->stream;
    return Py_NewRef(self);
}

static PyObject *executor_exit(pdext_ExecutorObject *self, PyObject *args)
{
    (void)args;
    /* Only this thread's innermost block of this object is left (an __exit__ without its
     * __enter__ on this thread restores nothing). */
    if (n_outer > 0 && outer[n_outer - 1].owner == self) {
        const outer_entry *e = &outer[--n_outer];
        current_ex = e->ex;
        current_stream = e->stream;
        --self->entered;
    }
    if (self->ex == NULL)
        Py_RETURN_FALSE;
    pd_status st;
    Py_BEGIN_ALLOW_THREADS st = pd_executor_synchronize(self->ex);
    Py_END_ALLOW_THREADS
        /* An exception already leaving the block wins; the op error is then dropped. */
        if (st != PD_OK && !PyErr_Occurred()) return pdext_raise_status(st, NULL);
    Py_RETURN_FALSE;
}

static PyObject *executor_close(pdext_ExecutorObject *self, PyObject *unused)
{
    (void)unused;
    /* A thread inside the block still calls through it: ending it would leave that thread's
     * current executor dangling. */
    if (self->entered > 0) {
        PyErr_SetString(PyExc_RuntimeError,
                        "pdext.Executor.close: the executor is in use by a `with` block; close "
                        "it after the block ends (leaving the block already waits for its calls)");
        return NULL;
    }
    executor_close_now(self);
    Py_RETURN_NONE;
}

static PyObject *executor_pending(pdext_ExecutorObject *self, PyObject *obj)
{
    (void)self;
    if (Py_TYPE(obj) != &pdext_TensorType) {
        PyErr_SetString(PyExc_TypeError, "pdext.Executor.pending: expected a pdext.Tensor");
        return NULL;
    }
    return PyBool_FromLong(pd_tensor_is_pending(&((pdext_TensorObject *)obj)->t));
}

static PyObject *executor_stats(pdext_ExecutorObject *self, PyObject *unused)
{
    (void)unused;
    if (need_open(self) < 0)
        return NULL;
    pd_executor_stats s;
    pd_status st = pd_executor_get_stats(self->ex, &s);
    if (st != PD_OK)
        return pdext_raise_status(st, NULL);
    pd_executor_counts c = {sizeof c, 0, 0, 0, 0};
    if ((st = pd_executor_get_counts(self->ex, &c)) != PD_OK)
        return pdext_raise_status(st, NULL);
    /* where the calls ran: handed to a worker, or on the calling thread (and of those, how
     * many because handing over was measured not to pay) */
    return Py_BuildValue("{sKsKsKsKsKsKsK}", "submitted", (unsigned long long)s.submitted, "done",
                         (unsigned long long)s.done, "failed", (unsigned long long)s.failed,
                         "handed_over", (unsigned long long)c.handed_over, "ran_here",
                         (unsigned long long)c.ran_here, "ran_here_unpaid",
                         (unsigned long long)c.ran_here_unpaid, "trials",
                         (unsigned long long)c.trials);
}

static PyObject *executor_get_stream(pdext_ExecutorObject *self, void *unused)
{
    (void)unused;
    return PyLong_FromLong(self->stream);
}

static int executor_set_stream(pdext_ExecutorObject *self, PyObject *value, void *unused)
{
    (void)unused;
    long s = value ? PyLong_AsLong(value) : -1;
    if (s == -1 && PyErr_Occurred())
        return -1;
    if (s < 0 || s >= self->n_streams) {
        PyErr_Format(PyExc_ValueError,
                     "pdext.Executor.stream: %ld is out of range; the executor has %d stream(s)", s,
                     (int)self->n_streams);
        return -1;
    }
    self->stream = (int32_t)s;
    if (self->entered > 0 && current_ex == self->ex)
        current_stream = self->stream;
    return 0;
}

static PyMethodDef executor_methods[] =
    {{"__enter__", (PyCFunction)executor_enter, METH_NOARGS,
      "Makes this executor current on this thread: op calls return pending Tensors."},
     {"__exit__", (PyCFunction)executor_exit, METH_VARARGS,
      "Restores the previous executor, waits for every call and raises the first error."},
     {"synchronize", (PyCFunction)executor_synchronize, METH_NOARGS,
      "Waits for every call submitted so far; raises the first error since the last one."},
     {"close", (PyCFunction)executor_close, METH_NOARGS,
      "Waits for the calls in flight and ends the executor."},
     {"pending", (PyCFunction)executor_pending, METH_O,
      "Whether a pdext.Tensor is still being computed (never blocks)."},
     {"stats", (PyCFunction)executor_stats, METH_NOARGS,
      "Counters: {'submitted', 'done', 'failed'} calls."},
     {NULL, NULL, 0, NULL}};

static PyGetSetDef executor_getset[] =
    {{"stream", (getter)executor_get_stream, (setter)executor_set_stream,
      "The executor stream (0 .. streams-1) calls made in its block go to.", NULL},
     {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject pdext_ExecutorType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pdext.Executor",
    .tp_basicsize = sizeof(pdext_ExecutorObject),
    .tp_dealloc = (destructor)executor_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Executor(streams=1, depth=0, inline_bytes=0): op calls inside `with executor:` "
              "run asynchronously and return pending pdext.Tensors. A host call whose inputs hold "
              "at most inline_bytes/2 bytes (inline_bytes 0: 16384; -1: none) runs at once "
              "when its stream is idle, as does a call of any size when there are at least as "
              "many streams as CPUs and every other CPU runs another stream's calls.",
    .tp_methods = executor_methods,
    .tp_getset = executor_getset,
    .tp_init = (initproc)executor_init,
    .tp_new = PyType_GenericNew,
};
