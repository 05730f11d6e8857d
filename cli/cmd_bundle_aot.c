/*
 * cmd_bundle_aot.c - MindSpore AOT functions in `pdext bundle`: the FILE:FUNC arguments and the
 * options that follow each (--inputs, --outputs, --out-shape, --out-dtype, --attr, --op), and
 * the C source the bundle gets for them (pdext_aot_bundle.h): one pd_aot_bundle_op per
 * function, listed in the bundle's op table, whose kernel and infer functions are libpdext_aot's.
 * The function's own source is compiled into the bundle like any op source, so the program
 * that links the bundle runs no compiler and opens no library to get the op; it links
 * libpdext_aot (added to the bundle's link flags, hence to its header and .pc).
 */
#include "pdext_cmd.h"

#include "aot_lazy.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(PD_MAX_INPUTS == PD_MAX_OUTPUTS, "one bound for --inputs and --outputs");

/* A C string literal of s. */
static void put_literal(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; ++s) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(f, "\\%03o", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

int pd_cmd_bundle_aot_arg(pd_cmd_bundle_aot *b, int argc, char **argv, int *i)
{
    static const char cmd[] = "bundle";
    if (pd_cmd_is_aot_spec(argv[*i])) {
        if (b->n == PD_CMD_MAX_AOT) {
            pd_cmd_usage_error(cmd, "at most %d AOT functions in one bundle", PD_CMD_MAX_AOT);
            return -1;
        }
        pd_cmd_aot_fn *fn = &b->fns[b->n++];
        memset(fn, 0, sizeof *fn);
        fn->spec = argv[*i];
        fn->n_inputs = -1;
        return 1;
    }
    static const char *const opts[] = {"--inputs",    "--outputs", "--out-shape",
                                       "--out-dtype", "--attr",    "--op"};
    for (int k = 0; k < 6; ++k) {
        bool bad = false;
        const char *v = pd_cmd_option(cmd, argc, argv, i, opts[k], NULL, &bad);
        if (bad)
            return -1;
        if (v == NULL)
            continue;
        if (b->n == 0) {
            pd_cmd_usage_error(cmd,
                               "%s describes an AOT function: give it after the "
                               "function's FILE:FUNC (add.cc:CustomAdd %s ...)",
                               opts[k], opts[k]);
            return -1;
        }
        pd_cmd_aot_fn *fn = &b->fns[b->n - 1];
        char *end;
        long n = 0;
        if (k <= 1) {
            n = strtol(v, &end, 10);
            /* PD_MAX_INPUTS and PD_MAX_OUTPUTS are both 16 */
            if (end == v || *end != '\0' || n < 0 || n > PD_MAX_INPUTS) {
                pd_cmd_usage_error(cmd, "%s '%s' (for %s): expected 0 to %d", opts[k], v, fn->spec,
                                   PD_MAX_INPUTS);
                return -1;
            }
        }
        switch (k) {
        case 0: fn->n_inputs = (int32_t)n; break;
        case 1: fn->n_outputs = (int32_t)n; break;
        case 2: pd_cmd_strv_add(&fn->out_shapes, v); break;
        case 3: pd_cmd_strv_add(&fn->out_dtypes, v); break;
        case 4:
            if (strchr(v, ':') == NULL) {
                pd_cmd_usage_error(cmd,
                                   "--attr '%s' (for %s) is not a declaration NAME: TYPE "
                                   "(scale: float, axis: int64_t = -1)",
                                   v, fn->spec);
                return -1;
            }
            pd_cmd_strv_add(&fn->attrs, v);
            break;
        default: fn->op = v; break;
        }
        return 1;
    }
    return 0;
}

void pd_cmd_bundle_aot_free(pd_cmd_bundle_aot *b)
{
    for (int32_t i = 0; i < b->n; ++i) {
        pd_cmd_strv_free(&b->fns[i].out_shapes);
        pd_cmd_strv_free(&b->fns[i].out_dtypes);
        pd_cmd_strv_free(&b->fns[i].attrs);
    }
    b->n = 0;
}

/* True when the flags select libstdc++'s old std::string ABI. */
static bool old_abi(const pd_cmd_strv *flags)
{
    bool old = false;
    for (int32_t i = 0; i < flags->n; ++i)
        if (strstr(flags->v[i], "_GLIBCXX_USE_CXX11_ABI="))
            old = strstr(flags->v[i], "_GLIBCXX_USE_CXX11_ABI=0") != NULL;
    return old;
}

/* One function's descriptor into f; a usage error (non-zero) when its options are wrong. */
static int write_fn(FILE *f, const pd_cmd_aot_fn *fn, int index, const pd_cmd_load_args *a)
{
    static const char cmd[] = "bundle";
    size_t file_len = 0;
    const char *func = "";
    pd_aot_spec_split(fn->spec, &file_len, &func); /* pd_cmd_is_aot_spec said it is one */
    const char *colon = fn->spec + file_len;
    int src_len = (int)file_len;
    bool cuda = src_len > 3 && strncmp(colon - 3, ".cu", 3) == 0;
    bool c_source = src_len > 2 && strncmp(colon - 2, ".c", 2) == 0;
    if (fn->n_inputs < 0)
        return pd_cmd_usage_error(cmd, "%s: give its input count (--inputs N after it)", fn->spec);
    int32_t n_out = fn->n_outputs;
    if (fn->out_shapes.n > n_out)
        n_out = fn->out_shapes.n;
    if (fn->out_dtypes.n > n_out)
        n_out = fn->out_dtypes.n;
    if (n_out < 1)
        n_out = 1;
    if (n_out > PD_MAX_OUTPUTS || fn->attrs.n > PD_MAX_ATTRS)
        return pd_cmd_usage_error(cmd, "%s: at most %d outputs and %d attrs", fn->spec,
                                  PD_MAX_OUTPUTS, PD_MAX_ATTRS);
    int32_t ndim[PD_MAX_OUTPUTS];
    int64_t shape[PD_MAX_OUTPUTS][PD_MAX_DIMS];
    int32_t dtype[PD_MAX_OUTPUTS];
    for (int32_t j = 0; j < n_out; ++j) {
        ndim[j] = -1;
        dtype[j] = PD_UNDEFINED;
        if (j < fn->out_shapes.n &&
            !pd_cmd_parse_dims(fn->out_shapes.v[j], strlen(fn->out_shapes.v[j]), &ndim[j],
                               shape[j]))
            return pd_cmd_usage_error(cmd, "%s: --out-shape '%s' is not a shape such as 4,5",
                                      fn->spec, fn->out_shapes.v[j]);
        if (j < fn->out_dtypes.n &&
            (dtype[j] = pd_dtype_from_name(fn->out_dtypes.v[j])) == PD_UNDEFINED)
            return pd_cmd_usage_error(cmd,
                                      "%s: --out-dtype '%s' is not a dtype (float32, int64, ...)",
                                      fn->spec, fn->out_dtypes.v[j]);
    }
    bool old = cuda ? old_abi(&a->cuda_flags) : (!c_source && old_abi(&a->cxxflags));

    fprintf(f,
            "\n/* %s */\nextern int %s(int, void **, int *, int64_t **, const char **, void *, "
            "void *);\n",
            fn->spec, func);
    static const char *const companions[] = {"Init", "InferShape", "InferType"};
    for (int k = 0; k < 3; ++k)
        fprintf(f, "extern void %s%s(void) __attribute__((weak, visibility(\"hidden\")));\n", func,
                companions[k]);
    fprintf(f,
            "static pd_aot_bundle_op pd_aot_op_%d = {\n    .def = {.struct_size = "
            "sizeof(pd_op_def), .kind = PD_OP_FORWARD, .name = ",
            index);
    put_literal(f, fn->op ? fn->op : func);
    fputs(", .file = ", f);
    fprintf(f, "\"%.*s\"", src_len, fn->spec); /* checked by the caller: no quotes */
    fputs(",\n            .inputs = {", f);
    for (int32_t i = 0; i < fn->n_inputs; ++i)
        fprintf(f, "%s\"in%d\"", i ? ", " : "", (int)i);
    fputs("},\n            .outputs = {", f);
    for (int32_t j = 0; j < n_out; ++j)
        fprintf(f, "%s\"out%d\"", j ? ", " : "", (int)j);
    fputs("},\n            .attrs = {", f);
    for (int32_t k = 0; k < fn->attrs.n; ++k) {
        fputs(k ? ", " : "", f);
        put_literal(f, fn->attrs.v[k]);
    }
    fprintf(f,
            "},\n            .kernel = pd_aot_bundle_kernel, .infer_shape = "
            "pd_aot_bundle_infer_shape,\n            .infer_dtype = pd_aot_bundle_infer_dtype},\n"
            "    .struct_size = sizeof(pd_aot_bundle_op), .function = \"%s\", .source = "
            "\"%.*s\",\n    .fn = %s, .init = %sInit, .infer_shape = %sInferShape, .infer_type = "
            "%sInferType,\n    .cxx11_abi = %d, .gpu = %d, .n_inputs = %d, .n_outputs = %d,\n"
            "    .out_dtype = {",
            func, src_len, fn->spec, func, func, func, func, old ? 0 : 1, cuda ? 1 : 0,
            (int)fn->n_inputs, (int)n_out);
    for (int32_t j = 0; j < n_out; ++j)
        fprintf(f, "%s%d", j ? ", " : "", (int)dtype[j]);
    fputs("},\n    .out_ndim = {", f);
    for (int32_t j = 0; j < n_out; ++j)
        fprintf(f, "%s%d", j ? ", " : "", (int)ndim[j]);
    fputs("},\n    .out_shape = {", f);
    for (int32_t j = 0; j < n_out; ++j) {
        fputs(j ? ", {" : "{", f);
        for (int32_t d = 0; d < ndim[j]; ++d)
            fprintf(f, "%s%lld", d ? ", " : "", (long long)shape[j][d]);
        fputs("}", f);
    }
    fprintf(f,
            "}};\nPD__OP_SECTION static const pd_op_def *const pd_aot_ptr_%d = "
            "&pd_aot_op_%d.def;\n",
            index, index);
    return 0;
}

char *pd_cmd_bundle_aot_source(const pd_cmd_bundle_aot *b, pd_cmd_load_args *a, bool ort, int *rc)
{
    *rc = PD_CMD_OK;
    for (int32_t i = 0; i < b->n; ++i) {
        const char *spec = b->fns[i].spec;
        size_t src_len = 0;
        pd_aot_spec_split(spec, &src_len, NULL); /* pd_cmd_is_aot_spec said it is one */
        if (memchr(spec, '"', src_len) || memchr(spec, '\\', src_len)) {
            *rc = pd_cmd_usage_error("bundle", "%s: a source path with '\"' or '\\'", spec);
            return NULL;
        }
        char *src = pd_cmd_xmalloc(src_len + 1);
        memcpy(src, spec, src_len);
        src[src_len] = '\0';
        bool seen = false;
        for (int32_t k = 0; k < a->inputs.n && !seen; ++k)
            seen = strcmp(a->inputs.v[k], src) == 0;
        if (!seen)
            pd_cmd_strv_add(&a->inputs, src);
        free(src);
    }
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream(&text, &size);
    if (f == NULL) {
        fputs("pdext bundle: out of memory\n", stderr);
        exit(PD_CMD_FAILED);
    }
    fputs("/* Generated by `pdext bundle`: the MindSpore AOT functions of this bundle as ops\n"
          " * (pdext_aot_bundle.h). */\n#include \"extension.h\"\n#include "
          "\"pdext_aot_bundle.h\"\n",
          f);
    for (int32_t i = 0; i < b->n && *rc == PD_CMD_OK; ++i)
        *rc = write_fn(f, &b->fns[i], (int)i, a) ? PD_CMD_USAGE : PD_CMD_OK;
    fputs("\n/* Frees what the adapter made for the functions (process exit, dlclose). */\n"
          "__attribute__((destructor)) static void pd_aot_release_all(void)\n{\n",
          f);
    for (int32_t i = 0; i < b->n; ++i)
        fprintf(f, "    pd_aot_bundle_release(&pd_aot_op_%d);\n", (int)i);
    fputs("}\n", f);
    fclose(f);
    if (*rc != PD_CMD_OK) {
        free(text);
        return NULL;
    }
    /* The bundle links libpdext_aot, found where this command's copy is. */
    Dl_info info;
    const char *why = NULL;
    const pd_aot_lazy *aot = pd_aot_lazy_get(&why);
    if (aot == NULL) {
        pd_cmd_error("bundle", "%s", why);
        *rc = PD_CMD_FAILED;
        free(text);
        return NULL;
    }
    void *sym;
    memcpy(&sym, &aot->load, sizeof sym);
    if (dladdr(sym, &info) && info.dli_fname && strrchr(info.dli_fname, '/')) {
        const char *slash = strrchr(info.dli_fname, '/');
        size_t n = (size_t)(slash - info.dli_fname);
        char *flag = pd_cmd_xmalloc(n + 32);
        snprintf(flag, n + 32, "-L%.*s", (int)n, info.dli_fname);
        pd_cmd_strv_add(&a->ldflags, flag);
        if (!ort) { /* an ORT library is for other machines: no path of this one in it */
            snprintf(flag, n + 32, "-Wl,-rpath,%.*s", (int)n, info.dli_fname);
            pd_cmd_strv_add(&a->ldflags, flag);
        }
        free(flag);
    }
    if (ort) {
        /* The library links the adapter from libpdext_onnxruntime.a (before these flags), so
         * libpdext_aot, which only the check of the objects needs (it is loaded in this
         * process already), is left out of it; the adapter is C++ inside. */
        pd_cmd_strv_add(&a->ldflags, "-Wl,--push-state,--as-needed");
        pd_cmd_strv_add(&a->ldflags, "-lpdext_aot");
        pd_cmd_strv_add(&a->ldflags, "-Wl,--pop-state");
        pd_cmd_strv_add(&a->ldflags, "-lstdc++");
    } else {
        pd_cmd_strv_add(&a->ldflags, "-lpdext_aot");
    }
    return text;
}
