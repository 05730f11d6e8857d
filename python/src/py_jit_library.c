/*
 * py_jit_library.c - _pdext._build_library: the JIT's cache for a shared library that is not
 * an op module (pd_jit_build_library): the XLA FFI handler of pdext.jax, built once against the
 * headers of the jaxlib in use, and the pybind11 modules of MindSpore CustomOpBuilder sources
 * (pdext.ms_extension); found warm afterwards, like any module.
 *
 *   _build_library(name, sources, cflags=None, cxxflags=None, ldflags=None, include_dirs=None,
 *                  build_directory=None, verbose=False) -> path
 *
 * The build runs without the GIL (it may take seconds); its error is pdext.BuildError with
 * the compiler's diagnostics.
 */
#include "py_internal.h"

#include "pdext_jit.h"

#include <stdio.h>
#include <stdlib.h>

/* The compiler's command lines, with `verbose`. */
static void log_stderr(void *user, const char *line)
{
    (void)user;
    fprintf(stderr, "%s\n", line);
}

static PyObject *py_build_library(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kw[] = {"name",         "sources",         "cflags",  "cxxflags", "ldflags",
                         "include_dirs", "build_directory", "verbose", NULL};
    const char *name = NULL;
    PyObject *sources = NULL, *cflags = NULL, *cxxflags = NULL, *ldflags = NULL, *incs = NULL;
    PyObject *build_dir = Py_None, *dir_bytes = NULL;
    int verbose = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "sO|OOOOOp:_build_library", kw, &name, &sources,
                                     &cflags, &cxxflags, &ldflags, &incs, &build_dir, &verbose))
        return NULL;
    pdext_strings src = {0}, cf = {0}, cxx = {0}, ld = {0}, inc = {0};
    PyObject *result = NULL;
    if (pdext_strings_fill(sources, "sources", &src) < 0 ||
        pdext_strings_fill(cflags, "cflags", &cf) < 0 ||
        pdext_strings_fill(cxxflags, "cxxflags", &cxx) < 0 ||
        pdext_strings_fill(ldflags, "ldflags", &ld) < 0 ||
        pdext_strings_fill(incs, "include_dirs", &inc) < 0)
        goto done;
    if (build_dir != Py_None && !PyUnicode_FSConverter(build_dir, &dir_bytes))
        goto done;
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = name;
    o.sources = src.items;
    o.n_sources = src.n;
    o.cflags = cf.items;
    o.n_cflags = cf.n;
    o.cxxflags = cxx.items;
    o.n_cxxflags = cxx.n;
    o.ldflags = ld.items;
    o.n_ldflags = ld.n;
    o.include_dirs = inc.items;
    o.n_include_dirs = inc.n;
    o.build_dir = dir_bytes ? PyBytes_AS_STRING(dir_bytes) : NULL;
    o.verbose = verbose != 0;
    o.log = verbose ? log_stderr : NULL;
    char *path = NULL;
    pd_status st;
    char *message = NULL;
    /* pd_last_error is per thread: copied before the GIL (and maybe the thread state) returns. */
    PyThreadState *ts = PyEval_SaveThread();
    st = pd_jit_build_library(&o, &path);
    if (st != PD_OK)
        message = strdup(pd_last_error());
    PyEval_RestoreThread(ts);
    if (st != PD_OK) {
        pdext_raise_text(st, NULL, message ? message : "the build failed");
        free(message);
        goto done;
    }
    result = PyUnicode_DecodeFSDefault(path);
    free(path);
done:
    pdext_strings_clear(&src);
    pdext_strings_clear(&cf);
    pdext_strings_clear(&cxx);
    pdext_strings_clear(&ld);
    pdext_strings_clear(&inc);
    Py_XDECREF(dir_bytes);
    return result;
}

PyMethodDef pdext_jit_library_methods[] =
    {{"_build_library", (PyCFunction)(void (*)(void))py_build_library, METH_VARARGS | METH_KEYWORDS,
      "_build_library(name, sources, cflags=None, cxxflags=None, ldflags=None, "
      "include_dirs=None, build_directory=None, verbose=False) -> str\n"
      "Builds (or finds in the JIT cache) a shared library that is not an op module and "
      "returns its path."},
     {NULL, NULL, 0, NULL}};
