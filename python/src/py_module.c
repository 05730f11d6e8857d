/*
 * py_module.c - the _pdext extension module: its exception types, the mapping from pdext's
 * status values to Python exceptions, and the module's functions and types.
 *
 * The pdext package (python/pdext/__init__.py) builds the user-facing API (load, load_inline,
 * load_library, CustomOpBuilder, aot, gradcheck, check) on these few functions.
 */
#define PDEXT_PY_NUMPY_OWNER
#include "py_device.h"
#include "py_executor.h"
#include "py_internal.h"

#include "pdext_jit.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

PyObject *pdext_Error;
PyObject *pdext_OpError;
PyObject *pdext_BuildError;

PyObject *pdext_raise_text(pd_status status, const char *who, const char *text)
{
    PyObject *type;
    switch (status) {
    case PD_ERR_INVALID_ARGUMENT: type = PyExc_ValueError; break;
    case PD_ERR_OUT_OF_MEMORY: type = PyExc_MemoryError; break;
    case PD_ERR_NOT_FOUND: type = PyExc_FileNotFoundError; break;
    case PD_ERR_BUILD: type = pdext_BuildError; break;
    case PD_ERR_OP_FAILED: type = pdext_OpError; break;
    default: type = pdext_Error; break;
    }
    if (text == NULL)
        text = "(no message)";
    if (who != NULL)
        PyErr_Format(type, "%s: %s", who, text);
    else
        PyErr_SetString(type, text);
    return NULL;
}

PyObject *pdext_raise_status(pd_status status, const char *who)
{
    return pdext_raise_text(status, who, pd_last_error());
}

/* ImportError for a loaded numpy this build cannot use, naming both versions; -1. */
static int refuse_numpy(PyObject *numpy)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *said = value ? PyObject_Str(value) : NULL;
    PyObject *version = PyObject_GetAttrString(numpy, "__version__");
    PyObject *file = PyObject_GetAttrString(numpy, "__file__");
    PyErr_Clear();
#if NPY_ABI_VERSION < 0x02000000
    /* Built against numpy 1.x headers (Debian's python3-numpy): numpy 2 cannot serve it. */
    PyErr_Format(PyExc_ImportError,
                 "this pdext extension was built against numpy 1.x headers and runs only under "
                 "numpy 1.x, but numpy %S is loaded from %S; install pdext with pip (its wheel "
                 "is built against numpy 2 and serves numpy >= %s and 2.x), or use numpy < 2 "
                 "(numpy said: %S)",
                 version ? version : Py_None, file ? file : Py_None, PDEXT_NUMPY_MIN,
                 said ? said : Py_None);
#else
    PyErr_Format(PyExc_ImportError,
                 "pdext needs numpy >= %s (its extension is built for numpy's C API of %s and "
                 "later), but numpy %S is loaded from %S; upgrade it: "
                 "pip install --upgrade 'numpy>=%s' (numpy said: %S)",
                 PDEXT_NUMPY_MIN, PDEXT_NUMPY_MIN, version ? version : Py_None,
                 file ? file : Py_None, PDEXT_NUMPY_MIN, said ? said : Py_None);
#endif
    Py_XDECREF(said);
    Py_XDECREF(version);
    Py_XDECREF(file);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return -1;
}

int pdext_numpy_attach(void)
{
    static PyObject *name;
    if (name == NULL && (name = PyUnicode_InternFromString("numpy")) == NULL) {
        PyErr_Clear();
        return 0;
    }
    PyObject *numpy = PyImport_GetModule(name);
    if (numpy == NULL) {
        PyErr_Clear();
        return 0;
    }
    int rc = _import_array() < 0 ? refuse_numpy(numpy) : 1;
    Py_DECREF(numpy);
    return rc;
}

int pdext_numpy_require(void)
{
    if (PyArray_API != NULL)
        return 0;
    PyObject *numpy = PyImport_ImportModule("numpy");
    if (numpy == NULL)
        return -1;
    int rc = pdext_numpy_attach();
    Py_DECREF(numpy);
    return rc > 0 ? 0 : -1;
}

PyObject *pdext_load(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pdext_load_library(PyObject *self, PyObject *arg);
PyObject *pdext_aot_load(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pdext_aot_spec_split(PyObject *self, PyObject *spec);
PyObject *pdext_gradcheck(PyObject *self, PyObject *args, PyObject *kwargs);
PyObject *pdext_check_op(PyObject *self, PyObject *args, PyObject *kwargs);

static PyObject *module_version(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyUnicode_FromString(pd_version());
}

/* The file a symbol was loaded from, for messages ("?" when the loader cannot say). */
static const char *symbol_file(const void *sym)
{
    Dl_info info;
    return dladdr(sym, &info) && info.dli_fname ? info.dli_fname : "?";
}

/* Any object of this extension, for dladdr. */
static const char extension_anchor;

/* A symbol of libpdext (ISO C has no function-to-object pointer cast). */
static void *libpdext_symbol(void)
{
    const char *(*fn)(void) = pd_version;
    void *sym;
    memcpy(&sym, &fn, sizeof sym);
    return sym;
}

static PyObject *module_library_path(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    char *real = realpath(symbol_file(libpdext_symbol()), NULL);
    if (real == NULL)
        return PyErr_SetFromErrno(PyExc_OSError);
    PyObject *path = PyUnicode_DecodeFSDefault(real);
    free(real);
    return path;
}

static PyObject *module_sdk_include_dir(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    char *dir = pd_jit_sdk_include_dir();
    if (dir == NULL)
        return pdext_raise_status(PD_ERR_NOT_FOUND, NULL);
    PyObject *path = PyUnicode_DecodeFSDefault(dir);
    free(dir);
    return path;
}

static PyMethodDef module_methods[] =
    {{"load", (PyCFunction)(void (*)(void))pdext_load, METH_VARARGS | METH_KEYWORDS,
      "load(name, sources, inline_sources=None, cflags=None, cuda_cflags=None, ldflags=None, "
      "include_dirs=None, build_directory=None, verbose=False, cxx_cflags=None, "
      "library_only=False) -> Library (or str)\n"
      "JIT-builds (or finds in the cache) and loads a module; library_only: builds a library "
      "that is no op module and returns its path."},
     {"load_library", pdext_load_library, METH_O,
      "load_library(path) -> Library\nLoads a prebuilt op library."},
     {"aot_load", (PyCFunction)(void (*)(void))pdext_aot_load, METH_VARARGS | METH_KEYWORDS,
      "aot_load(spec, n_inputs, outputs, attrs, name=None, input_names=None, "
      "compile_flags=None, build_directory=None) -> Library\n"
      "Registers a MindSpore AOT function as the one op of a new Library."},
     {"aot_spec_split", pdext_aot_spec_split, METH_O,
      "aot_spec_split(spec) -> (file, func) or None\n"
      "pd_aot_spec_split: 'FILE:FUNC' split at its last ':' (FUNC a C identifier)."},
     {"check_op", (PyCFunction)(void (*)(void))pdext_check_op, METH_VARARGS | METH_KEYWORDS,
      "check_op(op, attrs, inputs, seed=0)\n--\n\n"
      "pd_check_op on op: ([(op, dtype, check, status, detail), ...], [note, ...])."},
     {"gradcheck", (PyCFunction)(void (*)(void))pdext_gradcheck, METH_VARARGS | METH_KEYWORDS,
      "gradcheck(op, args, kwargs, step=0.0, atol=0.0, rtol=0.0, keep_dtype=False, "
      "skip_double_grad=False, max_elements=0, seed=0) -> dict\n"
      "pd_gradcheck on op called with args and kwargs; the report as a dict."},
     {"_torch_stream", pdext_torch_stream, METH_O,
      "_torch_stream(obj) -> int or None\ntorch's current stream handle on obj's device when obj "
      "is a torch CUDA tensor (py_device.c)."},
     {"from_dlpack", pdext_from_dlpack, METH_O,
      "from_dlpack(obj) -> Tensor\nA pdext.Tensor over the memory of obj (any object with "
      "__dlpack__, or a DLPack capsule), without copying. CPU memory only."},
     {"set_gil_threshold", pdext_set_gil_threshold, METH_O,
      "set_gil_threshold(nbytes) -> int\nA synchronous call of an op whose work follows its "
      "inputs' size keeps the GIL through its kernel when its host inputs hold at most nbytes "
      "(default 4096): releasing the GIL costs more than so small a kernel. 0: every call "
      "releases it. Returns the previous limit."},
     {"_gil_releases", pdext_gil_releases, METH_NOARGS,
      "_gil_releases() -> int\nHow many op calls released the GIL (for the tests)."},
     {"version", module_version, METH_NOARGS, "The version of libpdext in use."},
     {"_library_path", module_library_path, METH_NOARGS,
      "_library_path() -> str\nThe file of the libpdext this extension runs on."},
     {"_sdk_include_dir", module_sdk_include_dir, METH_NOARGS,
      "_sdk_include_dir() -> str\nWhere the JIT finds the SDK headers (extension.h)."},
     {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def =
    {PyModuleDef_HEAD_INIT, .m_name = "pdext._pdext",
     .m_doc = "The C core of the pdext package: loading op libraries and calling their ops.",
     .m_size = -1, .m_methods = module_methods};

/* Functions defined beside their concern (py_infer.c). */
extern PyMethodDef pdext_infer_methods[];

static int add_type(PyObject *m, PyTypeObject *type, const char *name)
{
    if (PyType_Ready(type) < 0)
        return -1;
    Py_INCREF(type);
    if (PyModule_AddObject(m, name, (PyObject *)type) < 0) {
        Py_DECREF(type);
        return -1;
    }
    return 0;
}

static int add_exception(PyObject *m, PyObject **slot, const char *name, PyObject *base,
                         const char *doc)
{
    *slot = PyErr_NewExceptionWithDoc(name, doc, base, NULL);
    if (*slot == NULL)
        return -1;
    Py_INCREF(*slot);
    if (PyModule_AddObject(m, strrchr(name, '.') + 1, *slot) < 0) {
        Py_DECREF(*slot);
        return -1;
    }
    return 0;
}

/* The extension and the libpdext the loader gave it must be one pdext: a libpdext of another
 * version (an older system install found first through LD_LIBRARY_PATH, or one already loaded
 * into the process) would run this extension's calls against another ABI. */
static int check_libpdext_version(void)
{
    const char *runtime = pd_version();
    if (strcmp(runtime, PD_VERSION_STRING) == 0)
        return 0;
    PyErr_Format(PyExc_ImportError,
                 "pdext: the extension %s is pdext %s, but the libpdext it loaded, %s, is pdext "
                 "%s: they come from different installs. Remove the other install or the "
                 "LD_LIBRARY_PATH / LD_PRELOAD entry that puts it first, or reinstall pdext "
                 "(pip install --force-reinstall pdext)",
                 symbol_file(&extension_anchor), PD_VERSION_STRING, symbol_file(libpdext_symbol()),
                 runtime);
    return -1;
}

PyMODINIT_FUNC PyInit__pdext(void)
{
    if (check_libpdext_version() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (add_exception(m, &pdext_Error, "pdext.Error", PyExc_RuntimeError,
                      "A pdext operation failed; the message is pdext's.") < 0 ||
        add_exception(m, &pdext_OpError, "pdext.OpError", pdext_Error,
                      "An op call failed (PD_CHECK / PD_THROW in the op, or its output checks).") <
            0 ||
        add_exception(m, &pdext_BuildError, "pdext.BuildError", pdext_Error,
                      "Compiling or linking a module failed; the message holds the compiler's "
                      "diagnostics.") < 0 ||
        add_type(m, &pdext_TensorType, "Tensor") < 0 ||
        add_type(m, &pdext_LibraryType, "Library") < 0 || add_type(m, &pdext_OpType, "Op") < 0 ||
        add_type(m, &pdext_ExecutorType, "Executor") < 0 ||
        PyModule_AddFunctions(m, pdext_infer_methods) < 0 || pdext_msext_add_bridge(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
