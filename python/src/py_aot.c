/*
 * py_aot.c - _pdext.aot_load: a MindSpore AOT function ("lib.so:Func" or "file.cc:Func")
 * registered through libpdext_aot (pdext_aot.h) as the one op of a Library of its own, so that
 * it is called like every other op. pdext.aot (python/pdext/aot_op.py) turns MindSpore's
 * keywords (out_shape, out_dtype, attr values) into the arguments taken here.
 */
#include "py_internal.h"

#include "aot_lazy.h"
#include "pdext_jit.h"

/* One entry of `outputs`: (dtype name or None, shape sequence or None). */
static int output_fill(PyObject *item, int32_t index, pd_aot_output *out)
{
    const char *dtype = NULL;
    PyObject *shape = NULL;
    memset(out, 0, sizeof *out);
    out->ndim = -1;
    if (!PyArg_ParseTuple(item, "zO", &dtype, &shape))
        return -1;
    if (dtype != NULL && (out->dtype = pd_dtype_from_name(dtype)) == PD_UNDEFINED) {
        PyErr_Format(PyExc_ValueError,
                     "pdext.aot: out_dtype of output %d is '%s', which is not a pdext dtype "
                     "(float32, float64, int32, int64, bool, ...)",
                     (int)index, dtype);
        return -1;
    }
    if (shape == Py_None)
        return 0;
    PyObject *fast = PySequence_Fast(shape, "pdext.aot: out_shape must be a list of ints");
    if (fast == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > PD_MAX_DIMS) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError,
                     "pdext.aot: out_shape of output %d has %zd dimensions; at most %d", (int)index,
                     n, PD_MAX_DIMS);
        return -1;
    }
    for (Py_ssize_t d = 0; d < n; ++d) {
        PyObject *v = PySequence_Fast_GET_ITEM(fast, d);
        long long x = PyBool_Check(v) || !PyLong_Check(v) ? -2 : PyLong_AsLongLong(v);
        if (x == -1 && PyErr_Occurred())
            PyErr_Clear();
        if (x < 0) {
            PyErr_Format(PyExc_ValueError,
                         "pdext.aot: out_shape of output %d must be a list of ints >= 0, got %R",
                         (int)index, shape);
            Py_DECREF(fast);
            return -1;
        }
        out->shape[d] = x;
    }
    out->ndim = (int32_t)n;
    Py_DECREF(fast);
    return 0;
}

/* What the build thread gets: a source spec compiles (py_build.c). */
typedef struct aot_args {
    const pd_aot_lazy *aot; /* the adapter, loaded by the caller (with the GIL) */
    const char *spec;
    const pd_aot_options *options;
} aot_args;

static pd_status aot_args_load(pd_registry *reg, const void *arg, pd_module **module)
{
    const aot_args *a = arg;
    char *library = NULL; /* a source is built first, by the JIT (pdext_aot.h loads libraries) */
    pd_status s = pd_jit_aot_build(a->spec, a->options, &library);
    pd_aot_options o = *a->options;
    o.origin = a->spec; /* the Library and messages name what the user gave */
    if (s == PD_OK)
        s = a->aot->load(reg, library, &o, module);
    free(library);
    return s;
}

/* aot_spec_split(spec) -> (file, func), or None when spec is no "FILE:FUNC": the C rule
 * (pd_aot_spec_split), so that pdext.aot reads a spec as the command and pd_aot_load do. */
PyObject *pdext_aot_spec_split(PyObject *self, PyObject *spec)
{
    (void)self;
    const char *text = PyUnicode_Check(spec) ? PyUnicode_AsUTF8(spec) : NULL;
    if (text == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    size_t file_len;
    const char *func;
    if (!pd_aot_spec_split(text, &file_len, &func))
        Py_RETURN_NONE;
    return Py_BuildValue("(s#s)", text, (Py_ssize_t)file_len, func);
}

/* aot_load(spec, n_inputs, outputs, attrs, name=None, input_names=None, compile_flags=None,
 *          build_directory=None) -> Library */
PyObject *pdext_aot_load(PyObject *self, PyObject *args, PyObject *kwargs)
{
    (void)self;
    static char *kw[] = {"spec",        "n_inputs",      "outputs",         "attrs", "name",
                         "input_names", "compile_flags", "build_directory", NULL};
    PyObject *spec = NULL, *outputs = NULL, *attrs = NULL, *names = NULL, *flags = NULL;
    PyObject *build_dir = NULL;
    int n_inputs = 0;
    const char *name = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&iO!O|zOOO", kw, PyUnicode_FSConverter, &spec,
                                     &n_inputs, &PyList_Type, &outputs, &attrs, &name, &names,
                                     &flags, &build_dir))
        return NULL;
    pdext_strings decls = {0}, in_names = {0}, cflags = {0};
    PyObject *dir_bytes = NULL, *result = NULL;
    pd_aot_output outs[PD_MAX_OUTPUTS];
    Py_ssize_t n_out = PyList_GET_SIZE(outputs);
    if (n_out > PD_MAX_OUTPUTS) {
        PyErr_Format(PyExc_ValueError, "pdext.aot: %zd outputs; at most %d", n_out, PD_MAX_OUTPUTS);
        goto done;
    }
    for (Py_ssize_t o = 0; o < n_out; ++o)
        if (output_fill(PyList_GET_ITEM(outputs, o), (int32_t)o, &outs[o]) < 0)
            goto done;
    if (pdext_strings_fill(attrs, "attrs", &decls) < 0 ||
        pdext_strings_fill(names, "input_names", &in_names) < 0 ||
        pdext_strings_fill(flags, "extra_cflags", &cflags) < 0)
        goto done;
    if (in_names.items != NULL && in_names.n != n_inputs) {
        PyErr_Format(PyExc_ValueError, "pdext.aot: %d input_names for %d inputs", in_names.n,
                     n_inputs);
        goto done;
    }
    if (build_dir != NULL && build_dir != Py_None && !PyUnicode_FSConverter(build_dir, &dir_bytes))
        goto done;
    pd_aot_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = name;
    o.n_inputs = n_inputs;
    o.input_names = in_names.items;
    o.n_outputs = (int32_t)n_out;
    o.outputs = n_out ? outs : NULL;
    o.attrs = decls.items;
    o.n_attrs = decls.n;
    o.compile_flags = cflags.items;
    o.n_compile_flags = cflags.n;
    o.build_dir = dir_bytes ? PyBytes_AS_STRING(dir_bytes) : NULL;
    const char *why = NULL;
    const pd_aot_lazy *aot = pd_aot_lazy_get(&why);
    if (aot == NULL) {
        PyErr_Format(PyExc_RuntimeError, "pdext.aot: %s", why);
        goto done;
    }
    aot_args job = {aot, PyBytes_AS_STRING(spec), &o};
    result = pdext_build_library(aot_args_load, &job, "pdext.aot");
done:
    pdext_strings_clear(&decls);
    pdext_strings_clear(&in_names);
    pdext_strings_clear(&cflags);
    Py_XDECREF(dir_bytes);
    Py_DECREF(spec);
    return result;
}
