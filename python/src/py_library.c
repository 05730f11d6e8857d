/*
 * py_library.c - Library objects: one registry holding one loaded module, made by the JIT
 * (_pdext.load: sources and inline sources through pd_jit_load) or from a prebuilt library
 * (_pdext.load_library: pd_module_load).
 *
 * Each Library has a registry of its own, so that two loads never clash over op names and the
 * registry's lifetime is the Library's: Op objects keep their Library alive, and the module
 * unloads when the last of them goes. A JIT load runs on a worker thread that Ctrl-C can stop
 * (py_build.c), its log going to sys.stderr as it comes; a warm one runs no subprocess.
 */
#include "py_internal.h"

#include "pdext_jit.h"

static void library_dealloc(pdext_LibraryObject *self)
{
    pd_registry_destroy(self->reg);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Library.ops(): a list of Op objects, one per op of the module, in table order. */
static PyObject *library_ops(pdext_LibraryObject *self, PyObject *unused)
{
    (void)unused;
    int32_t n = pd_module_op_count(self->module);
    PyObject *list = PyList_New(n);
    if (list == NULL)
        return NULL;
    for (int32_t i = 0; i < n; ++i) {
        PyObject *op = pdext_op_new(self, pd_module_op(self->module, i));
        if (op == NULL) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, op);
    }
    return list;
}

static PyObject *library_path(pdext_LibraryObject *self, void *unused)
{
    (void)unused;
    return PyUnicode_DecodeFSDefault(pd_module_path(self->module));
}

static PyMethodDef library_methods[] = {{"ops", (PyCFunction)library_ops, METH_NOARGS,
                                         "The module's ops as callables."},
                                        {NULL, NULL, 0, NULL}};

static PyGetSetDef library_getset[] = {{"path", (getter)library_path, NULL,
                                        "Path of the loaded library.", NULL},
                                       {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject pdext_LibraryType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "pdext._pdext.Library",
    .tp_basicsize = sizeof(pdext_LibraryObject),
    .tp_dealloc = (destructor)library_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A loaded op library with a registry of its own.",
    .tp_methods = library_methods,
    .tp_getset = library_getset,
};

PyObject *pdext_library_make(pd_registry *reg, pd_module *module)
{
    pdext_LibraryObject *lib = PyObject_New(pdext_LibraryObject, &pdext_LibraryType);
    if (lib == NULL) {
        pd_registry_destroy(reg);
        return NULL;
    }
    lib->reg = reg;
    lib->module = module;
    return (PyObject *)lib;
}

/* load_library(path) */
PyObject *pdext_load_library(PyObject *self, PyObject *arg)
{
    (void)self;
    PyObject *bytes = NULL;
    if (!PyUnicode_FSConverter(arg, &bytes))
        return NULL;
    pd_registry *reg = NULL;
    pd_module *module = NULL;
    pd_status st = pd_registry_create(&reg);
    if (st == PD_OK)
        st = pd_module_load(reg, PyBytes_AS_STRING(bytes), &module);
    Py_DECREF(bytes);
    if (st != PD_OK) {
        pd_registry_destroy(reg);
        return pdext_raise_status(st, "pdext.load_library");
    }
    return pdext_library_make(reg, module);
}

/* --- The JIT ------------------------------------------------------------------------------- */

void pdext_strings_clear(pdext_strings *l)
{
    PyMem_Free((void *)l->items);
    Py_XDECREF(l->keep);
    memset(l, 0, sizeof *l);
}

int pdext_strings_fill(PyObject *seq, const char *what, pdext_strings *l)
{
    memset(l, 0, sizeof *l);
    if (seq == NULL || seq == Py_None)
        return 0;
    if (PyUnicode_Check(seq) || PyBytes_Check(seq)) {
        PyErr_Format(PyExc_TypeError, "%s must be a list of strings, not a single string", what);
        return -1;
    }
    PyObject *fast = PySequence_Fast(seq, what);
    if (fast == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    l->keep = PyList_New(0);
    l->items = PyMem_Calloc((size_t)n + 1, sizeof *l->items);
    if (l->keep == NULL || l->items == NULL) {
        Py_DECREF(fast);
        pdext_strings_clear(l);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        PyObject *bytes = NULL;
        if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(fast, i), &bytes) ||
            PyList_Append(l->keep, bytes) < 0) {
            Py_XDECREF(bytes);
            Py_DECREF(fast);
            pdext_strings_clear(l);
            return -1;
        }
        Py_DECREF(bytes);
        l->items[i] = PyBytes_AS_STRING(bytes);
    }
    l->n = (int32_t)n;
    Py_DECREF(fast);
    return 0;
}

/* The build log goes to sys.stderr line by line; the build runs on a worker thread
 * (py_build.c), which takes the GIL for each line. */
static void jit_log(void *user, const char *line)
{
    (void)user;
    PyGILState_STATE g = PyGILState_Ensure();
    PySys_FormatStderr("%s\n", line);
    PyGILState_Release(g);
}

/* What the build thread runs (py_build.c). */
static pd_status jit_options_load(pd_registry *reg, const void *arg, pd_module **module)
{
    return pd_jit_load(reg, arg, module);
}

/* Inline sources: a sequence of (file name, text) pairs. */
typedef struct inline_list {
    pd_jit_source *items;
    int32_t n;
    PyObject *keep;
} inline_list;

static void inline_list_clear(inline_list *l)
{
    PyMem_Free(l->items);
    Py_XDECREF(l->keep);
    memset(l, 0, sizeof *l);
}

static int inline_list_fill(PyObject *seq, inline_list *l)
{
    memset(l, 0, sizeof *l);
    if (seq == NULL || seq == Py_None)
        return 0;
    PyObject *fast = PySequence_Fast(seq, "inline sources must be a list of (name, text) pairs");
    if (fast == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    l->keep = fast;
    l->items = PyMem_Calloc((size_t)n + 1, sizeof *l->items);
    if (l->items == NULL) {
        inline_list_clear(l);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; ++i) {
        const char *name = NULL;
        const char *text = NULL;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, i), "ss", &name, &text)) {
            inline_list_clear(l);
            return -1;
        }
        l->items[i].name = name;
        l->items[i].text = text;
    }
    l->n = (int32_t)n;
    return 0;
}

/* What build_plain_library's worker gets and gives. */
typedef struct plain_build {
    const pd_jit_options *o;
    char *path;
} plain_build;

static pd_status build_plain(pd_registry *reg, const void *arg, pd_module **module)
{
    (void)reg;
    (void)module;
    plain_build *b = (plain_build *)arg;
    return pd_jit_build_library(b->o, &b->path);
}

/* A library that is not an op module (pd_jit_build_library): the XLA FFI handler of pdext.jax,
 * the pybind11 modules of MindSpore CustomOpBuilder sources. Its path, or NULL with
 * pdext.BuildError. The build runs on pdext_load's worker thread (py_build.c), so Ctrl-C
 * stops it and raises KeyboardInterrupt at once. */
static PyObject *build_plain_library(const pd_jit_options *o)
{
    plain_build b = {o, NULL};
    pd_registry *reg = NULL;
    pd_module *none = NULL;
    if (pdext_run_build(build_plain, &b, NULL, &reg, &none) < 0) {
        free(b.path);
        return NULL;
    }
    pd_registry_destroy(reg);
    PyObject *result = PyUnicode_DecodeFSDefault(b.path);
    free(b.path);
    return result;
}

/* load(name, sources, inline_sources=None, cflags=None, cuda_cflags=None, ldflags=None,
 *      include_dirs=None, build_directory=None, verbose=False, cxx_cflags=None,
 *      library_only=False): cflags go to C and C++ sources, cxx_cflags (when given) replace
 * them for C++ sources. library_only: the sources make a library that is no op module; its
 * path is returned instead of a Library. */
PyObject *pdext_load(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kw[] = {"name",        "sources",    "inline_sources", "cflags",
                         "cuda_cflags", "ldflags",    "include_dirs",   "build_directory",
                         "verbose",     "cxx_cflags", "library_only",   NULL};
    const char *name = NULL;
    PyObject *sources = NULL, *inl = NULL, *cflags = NULL, *cuda = NULL, *ldflags = NULL;
    PyObject *incs = NULL, *build_dir = NULL, *cxx = NULL;
    int verbose = 0, library_only = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|OOOOOOpOp", kw, &name, &sources, &inl,
                                     &cflags, &cuda, &ldflags, &incs, &build_dir, &verbose, &cxx,
                                     &library_only))
        return NULL;
    pdext_strings src = {0}, cf = {0}, cu = {0}, ld = {0}, inc = {0}, cx = {0};
    inline_list in = {0};
    PyObject *dir_bytes = NULL, *result = NULL;
    if (pdext_strings_fill(sources, "sources", &src) < 0 || inline_list_fill(inl, &in) < 0 ||
        pdext_strings_fill(cflags, "extra_cflags", &cf) < 0 ||
        pdext_strings_fill(cuda, "extra_cuda_cflags", &cu) < 0 ||
        pdext_strings_fill(ldflags, "extra_ldflags", &ld) < 0 ||
        pdext_strings_fill(incs, "extra_include_paths", &inc) < 0 ||
        pdext_strings_fill(cxx, "extra_cxx_cflags", &cx) < 0)
        goto done;
    if (build_dir != NULL && build_dir != Py_None && !PyUnicode_FSConverter(build_dir, &dir_bytes))
        goto done;
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = name;
    o.sources = src.items;
    o.n_sources = src.n;
    o.inline_sources = in.items;
    o.n_inline_sources = in.n;
    /* torch's and Paddle's extra_cflags apply to C and C++ sources alike. */
    o.cflags = cf.items;
    o.n_cflags = cf.n;
    o.cxxflags = cxx != NULL && cxx != Py_None ? cx.items : cf.items;
    o.n_cxxflags = cxx != NULL && cxx != Py_None ? cx.n : cf.n;
    o.cuda_flags = cu.items;
    o.n_cuda_flags = cu.n;
    o.ldflags = ld.items;
    o.n_ldflags = ld.n;
    o.include_dirs = inc.items;
    o.n_include_dirs = inc.n;
    o.build_dir = dir_bytes ? PyBytes_AS_STRING(dir_bytes) : NULL;
    o.verbose = verbose != 0;
    o.log = verbose ? jit_log : NULL;
    result = library_only ? build_plain_library(&o)
                          : pdext_build_library(jit_options_load, &o, NULL);
done:
    pdext_strings_clear(&src);
    pdext_strings_clear(&cf);
    pdext_strings_clear(&cu);
    pdext_strings_clear(&ld);
    pdext_strings_clear(&inc);
    pdext_strings_clear(&cx);
    inline_list_clear(&in);
    Py_XDECREF(dir_bytes);
    return result;
}
