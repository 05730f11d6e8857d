/*
 * py_internal.h - what the files of the _pdext extension share: the object types (Library,
 * Op, Tensor), the exception objects, and the conversions between Python objects and
 * pd_tensor / pd_attr values.
 *
 * The extension is an adapter over libpdext: a Library owns a registry and the module loaded
 * into it, each Op points at one registered op and keeps its Library alive, and a call binds
 * Python arguments to pd_arg / pd_attr values and runs the one runner (pd_op_run). Input
 * arrays are borrowed for the call (pd_tensor structs over their memory, no storage
 * reference, no copy); outputs are tensors the runner made, owned by a Tensor object that
 * numpy arrays and DLPack capsules keep alive.
 */
#ifndef PDEXT_PY_INTERNAL_H
#define PDEXT_PY_INTERNAL_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "pdext.h"

/* numpy's C API table lives in py_module.c; the other files import it without defining it. */
#define PY_ARRAY_UNIQUE_SYMBOL pdext_numpy_api
#ifndef PDEXT_PY_NUMPY_OWNER
#define NO_IMPORT_ARRAY
#endif
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
/* Built against numpy 2's headers (the wheel's build requirement), the extension runs under
 * numpy 1.23 and later as well as numpy 2: numpy 2's headers target an older C API on
 * request and resolve the fields that moved at run time. Built against numpy 1.x headers
 * (Debian's python3-numpy, for the system install) it runs under numpy 1.x only, which is
 * what that interpreter has. */
#ifndef NPY_TARGET_VERSION
#define NPY_TARGET_VERSION NPY_1_23_API_VERSION
#endif
#include <numpy/arrayobject.h>
#if defined(PDEXT_NUMPY2_HEADERS_REQUIRED) && NPY_ABI_VERSION < 0x02000000
#error "a pdext wheel must be built against numpy 2's headers (found numpy 1.x headers first)"
#endif
/* numpy 2 moved a dtype's item size out of the struct; numpy 1.x headers lack the accessor
 * (numpy 2's is an inline function, not a macro). */
#if NPY_ABI_VERSION < 0x02000000
#define PyDataType_ELSIZE(descr) ((descr)->elsize)
#endif
/* The oldest numpy this build runs under, for the message that refuses an older one. */
#ifdef NPY_FEATURE_VERSION_STRING
#define PDEXT_NUMPY_MIN NPY_FEATURE_VERSION_STRING
#else
#define PDEXT_NUMPY_MIN "1.23"
#endif

/* numpy is imported lazily, so that `import pdext` and a warm load cost no numpy import
 * (tens of milliseconds): its C API table is attached the first time a call can meet a numpy
 * object, i.e. once numpy is in sys.modules, or when a numpy result is asked for.
 * pdext_numpy_seen: 1 when the table is attached, attaching it now if numpy is loaded; 0 when
 * numpy is not loaded, so no numpy object exists; -1 with an ImportError when the loaded
 * numpy cannot serve this build (older than PDEXT_NUMPY_MIN). pdext_numpy_require: attached,
 * importing numpy if need be; 0, or -1 with an exception. (py_module.c) */
int pdext_numpy_attach(void);
static inline int pdext_numpy_seen(void) { return PyArray_API != NULL ? 1 : pdext_numpy_attach(); }
int pdext_numpy_require(void);

/* --- Exceptions (py_module.c) ------------------------------------------------------------- */

extern PyObject *pdext_Error;      /* pdext.Error(RuntimeError): base of the two below */
extern PyObject *pdext_OpError;    /* an op call failed (PD_CHECK / PD_THROW, infer checks) */
extern PyObject *pdext_BuildError; /* compiling or linking a module failed */

/* Raises the Python exception that matches `status`, with pd_last_error()'s message (prefixed
 * by `who` when not NULL). Returns NULL, for `return pdext_raise_status(...)`. */
PyObject *pdext_raise_status(pd_status status, const char *who);
/* The same with message `text` (a message copied from another thread). */
PyObject *pdext_raise_text(pd_status status, const char *who, const char *text);

/* --- Builds (py_build.c) ------------------------------------------------------------------- */

/* A load that may compile: loads into `reg` and sets *module (pd_jit_load, pd_aot_load). */
typedef pd_status (*pdext_load_fn)(pd_registry *reg, const void *arg, pd_module **module);

/* A new Library from fn(registry, arg, &module) run on a worker thread (a fresh registry)
 * while this one waits without the GIL and handles signals. NULL with an exception on failure
 * (the registry then destroyed): fn's error (prefixed by `who`) or, when Ctrl-C came, the
 * KeyboardInterrupt, the build stopped (its processes sent SIGTERM) and what fn made dropped.
 * fn runs without the GIL: a log callback takes it (PyGILState_Ensure). */
PyObject *pdext_build_library(pdext_load_fn fn, const void *arg, const char *who);
/* The build of pdext_build_library without the Library: fn runs on a worker thread, Ctrl-C
 * stops it (pd_jit_interrupt) and raises KeyboardInterrupt. 0 with *reg (the caller's to
 * destroy) and *module set, or -1 with the Python exception set. */
int pdext_run_build(pdext_load_fn fn, const void *arg, const char *who, pd_registry **reg,
                    pd_module **module);

/* --- Tensor (py_tensor.c) ------------------------------------------------------------------ */

/* pdext.Tensor: owns one pd_tensor (one storage reference). The base object of every numpy
 * array pdext returns, and what __dlpack__ exports from. */
typedef struct pdext_TensorObject {
    PyObject_HEAD pd_tensor t;
    Py_ssize_t view_shape[PD_MAX_DIMS];   /* the buffer protocol's shape and */
    Py_ssize_t view_strides[PD_MAX_DIMS]; /* byte strides, filled once */
} pdext_TensorObject;

extern PyTypeObject pdext_TensorType;

/* A new Tensor owning *t (the reference moves into it; *t becomes undefined). NULL with an
 * exception on failure, *t then released. */
PyObject *pdext_tensor_wrap(pd_tensor *t);
/* A numpy array over *t's memory whose base owns *t (the reference moves; *t becomes
 * undefined, also on failure). */
PyObject *pdext_tensor_to_numpy(pd_tensor *t);
/* The result object for output *t (its reference moves in) of the kind an op call with
 * first tensor argument `first` returns (py_op.c): numpy for numpy or NULL, the Tensor itself
 * for a pdext.Tensor or inside a `with pdext.Executor()` block, else the first argument's
 * framework tensor through its from_dlpack. NULL with an exception. */
PyObject *pdext_result_like(PyObject *first, pd_tensor *t);
/* numpy's type number for a pdext dtype, or -1 with a TypeError. */
int pdext_numpy_typenum(pd_data_type dtype);

/* --- Inputs (py_input.c) ------------------------------------------------------------------- */

/* What a call keeps until it ends for one input object. */
typedef struct pdext_borrow {
    PyObject *buffer_owner; /* a new reference that keeps the memory alive (or NULL) */
    void *dl_managed;       /* a consumed DLManagedTensor to hand back to its deleter */
} pdext_borrow;

/* Names an input in messages: op "custom_concat", input "X", index 2 for X[2] (-1: not a
 * vector input). */
typedef struct pdext_input_name {
    const char *op;
    const char *input;
    Py_ssize_t index;
} pdext_input_name;

/* Fills *t as a borrowed view (no storage reference) of `obj`: a numpy array, a pdext.Tensor
 * or any object with __dlpack__. `writable` refuses read-only memory (inplace inputs). `who`
 * names the argument in messages ("custom_relu(): input 'X'"). Returns 0, or -1 with a
 * TypeError / ValueError set; *b gets what pdext_borrow_release must drop afterwards. */
int pdext_input_borrow(PyObject *obj, bool writable, const pdext_input_name *who, pd_tensor *t,
                       pdext_borrow *b);
void pdext_borrow_release(pdext_borrow *b);
/* "custom_relu(): input 'X'" (or 'X'[2] for an item of a vector input), for messages; a
 * thread-local buffer, formatted only when a message needs it (py_input.c). */
const char *pdext_input_text(const pdext_input_name *who);
/* Fills *t as a borrowed view of DLPack tensor *dl (py_input.c); -1 with an exception. */
struct pdext_dl_tensor;
int pdext_borrow_dl(const struct pdext_dl_tensor *dl, const pdext_input_name *who, pd_tensor *t);

/* DLPack's C exchange API (py_dlpack_c.c). pdext_dl_exchange_borrow: 1 with *t a borrowed view
 * of *obj's CPU memory (*obj may become a copy the borrow keeps: torch's resolve_neg()), 0 when
 * obj is not for this way (no table, device memory, a refusal its __dlpack__ words better), -1
 * with an exception. pdext_dl_exchange_result: result tensor *t (CPU, owning its storage) as an
 * object of first's type, taking t's reference; NULL with no exception (t kept) where the type
 * has no table or the exchange fails. */
int pdext_dl_exchange_borrow(PyObject **obj, bool writable, const pdext_input_name *who,
                             pd_tensor *t, pdext_borrow *b);
PyObject *pdext_dl_exchange_result(PyObject *first, pd_tensor *t);

/* Replaces borrowed tensor *t (no storage: it points into an input's memory) by a dense copy
 * that owns its memory. 0, or -1 with an exception (*t is then undefined). */
int pdext_tensor_own(pd_tensor *t);

/* pdext.from_dlpack(obj): a Tensor over obj's memory (zero-copy; CPU, CUDA and CUDA-host memory).
 */
PyObject *pdext_from_dlpack(PyObject *self, PyObject *obj);

/* DLPack export of a Tensor: the capsule `__dlpack__` returns. */
PyObject *pdext_dlpack_export(pdext_TensorObject *self);

/* --- Attrs (py_attr.c) --------------------------------------------------------------------- */

/* Storage for the converted values of one attr (vectors point into `buf` or `heap`). */
typedef struct pdext_attr_slot {
    pd_attr attr;
    void *heap; /* malloc'd elements of a long vector, or NULL */
    int64_t buf[8];
} pdext_attr_slot;

/* Converts `value` to the declared type of attr `info` into *slot. Returns 0, or -1 with a
 * TypeError / ValueError naming `op_name` and the attr. */
int pdext_attr_convert(const char *op_name, const pd_attr_info *info, PyObject *value,
                       pdext_attr_slot *slot);
void pdext_attr_slot_clear(pdext_attr_slot *slot);
/* A Python value for a pd_attr (defaults in signatures and docstrings); NULL with an
 * exception on failure. */
PyObject *pdext_attr_to_python(const pd_attr *a);

/* --- Library and Op (py_library.c, py_op.c) ----------------------------------------------- */

typedef struct pdext_LibraryObject {
    PyObject_HEAD pd_registry *reg;
    pd_module *module;
} pdext_LibraryObject;

extern PyTypeObject pdext_LibraryType;
extern PyTypeObject pdext_OpType;

/* A new Library owning `reg` and its loaded `module`; NULL with an exception (reg then
 * destroyed). */
PyObject *pdext_library_make(pd_registry *reg, pd_module *module);

/* C strings of a sequence of str / os.PathLike (NULL or None: none), kept alive by `keep`. */
typedef struct pdext_strings {
    const char **items;
    int32_t n;
    PyObject *keep; /* list of bytes objects */
} pdext_strings;

/* Fills *l from `seq` (`what` names it in the TypeError for a single string); 0, or -1 with an
 * exception (*l then cleared). */
int pdext_strings_fill(PyObject *seq, const char *what, pdext_strings *l);
void pdext_strings_clear(pdext_strings *l);

/* A new Op object for `op`, which belongs to `lib`. */
PyObject *pdext_op_new(pdext_LibraryObject *lib, const pd_op *op);

/* Op objects (py_op.c); their fields are read through the functions below. */
typedef struct pdext_OpObject pdext_OpObject;

/* The op and the registry (its Library's) of Op object `obj`, or NULL with a TypeError when
 * obj is not an Op (`who` names the caller). */
const pd_op *pdext_op_of(PyObject *obj, const char *who, const pd_registry **reg);

/* Input bytes up to which a synchronous op call keeps the GIL through its kernel (py_op.c,
 * pdext.set_gil_threshold). */
#define PDEXT_GIL_KEEP_BYTES 4096

/* pdext.set_gil_threshold(nbytes): sets that limit; returns the previous one. */
PyObject *pdext_set_gil_threshold(PyObject *module, PyObject *arg);
/* _pdext._gil_releases(): how many op calls released the GIL so far (for the tests). */
PyObject *pdext_gil_releases(PyObject *module, PyObject *unused);

/* Tensors a call binds without touching the heap. */
#define PDEXT_STACK_TENSORS 32

/* What one bound call holds (inputs borrowed, attrs converted, output slots); every field is
 * set by pdext_call_bind and freed by pdext_call_clear. */
typedef struct pdext_call {
    PyObject *in_obj[PD_MAX_INPUTS];
    PyObject *attr_obj[PD_MAX_ATTRS];
    pd_arg in_args[PD_MAX_INPUTS];
    pd_arg out_args[PD_MAX_OUTPUTS];
    pd_attr attrs[PD_MAX_ATTRS];
    int32_t n_attrs; /* attrs given (the others take their defaults) */
    pdext_attr_slot slots[PD_MAX_ATTRS];
    int32_t n_slots;
    pd_tensor stack_in[PDEXT_STACK_TENSORS];
    pdext_borrow stack_borrow[PDEXT_STACK_TENSORS];
    pd_tensor stack_out[PDEXT_STACK_TENSORS];
    pd_tensor *tin, *tout;
    pdext_borrow *borrows;
    int32_t n_tin, n_borrowed, n_tout;
    uint32_t runner_arrays; /* bit o: out_args[o] asks the runner for its array (pd_arg_release) */
    PyObject *first;        /* the first input object: it picks the kind of the results */
} pdext_call;

/* Binds a call of Op `obj` as calling it would (vectorcall arguments: positional ones, then
 * the values of the keywords named in kwnames): inputs, attrs and output slots into *cs.
 * 0, or -1 with the call's TypeError / ValueError; pdext_call_clear *cs either way. */
int pdext_call_bind(PyObject *obj, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    pdext_call *cs);
void pdext_call_clear(pdext_call *cs);

/* --- MindSpore CustomOpBuilder sources (py_msext.c) --------------------------------------- */

/* Adds the capsule _ms_bridge (ms_extension/bridge.h) to the module; 0, or -1. */
int pdext_msext_add_bridge(PyObject *module);

#endif /* PDEXT_PY_INTERNAL_H */
