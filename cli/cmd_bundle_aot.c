/*
 * cmd_bundle_aot.c - MindSpore AOT functions in `pdext bundle`: the FILE:FUNC arguments and the
 * options that follow each (--inputs, --outputs, --out-shape, --out-dtype, --attr, --op), read
 * into pd_aot_options; the C source the bundle gets for them is the JIT's
 * (pd_jit_aot_bundle_source, from templates/bundle_aot*.c.in): one pd_aot_bundle_op per
 * function, whose kernel and infer functions are libpdext_aot's. The function's own source is
 * compiled into the bundle like any op source, so the program that links the bundle runs no
 * compiler and opens no library to get the op; it links libpdext_aot and libpdext, no JIT
 * (libpdext_aot is added to the bundle's link flags, hence to its header and .pc).
 */
#include "pdext_cmd.h"

#include "aot_lazy.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(PD_MAX_INPUTS == PD_MAX_OUTPUTS, "one bound for --inputs and --outputs");

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

/* One function's options into *o (outputs: its n_outputs entries); a usage error (non-zero)
 * when they are wrong. */
static int fn_options(const pd_cmd_aot_fn *fn, pd_aot_options *o, pd_aot_output *outputs)
{
    static const char cmd[] = "bundle";
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
    for (int32_t j = 0; j < n_out; ++j) {
        pd_aot_output *out = &outputs[j];
        memset(out, 0, sizeof *out);
        out->ndim = -1;
        out->dtype = PD_UNDEFINED;
        if (j < fn->out_shapes.n &&
            !pd_cmd_parse_dims(fn->out_shapes.v[j], strlen(fn->out_shapes.v[j]), &out->ndim,
                               out->shape))
            return pd_cmd_usage_error(cmd, "%s: --out-shape '%s' is not a shape such as 4,5",
                                      fn->spec, fn->out_shapes.v[j]);
        if (j < fn->out_dtypes.n &&
            (out->dtype = pd_dtype_from_name(fn->out_dtypes.v[j])) == PD_UNDEFINED)
            return pd_cmd_usage_error(cmd,
                                      "%s: --out-dtype '%s' is not a dtype (float32, int64, ...)",
                                      fn->spec, fn->out_dtypes.v[j]);
    }
    memset(o, 0, sizeof *o);
    o->struct_size = sizeof *o;
    o->name = fn->op;
    o->n_inputs = fn->n_inputs;
    o->n_outputs = n_out;
    o->outputs = outputs;
    o->attrs = (const char *const *)fn->attrs.v;
    o->n_attrs = fn->attrs.n;
    return 0;
}

/* The generated source (pd_jit_aot_bundle_source fills the JIT's templates), NULL with *rc
 * set. */
static char *fill_source(const pd_cmd_bundle_aot *b, const pd_cmd_load_args *a, int *rc)
{
    pd_aot_options *opts = pd_cmd_xmalloc(sizeof *opts * (size_t)b->n);
    pd_aot_output *outs = pd_cmd_xmalloc(sizeof *outs * PD_MAX_OUTPUTS * (size_t)b->n);
    const pd_aot_options **fns = pd_cmd_xmalloc(sizeof *fns * (size_t)b->n);
    const char **specs = pd_cmd_xmalloc(sizeof *specs * (size_t)b->n);
    for (int32_t i = 0; i < b->n && *rc == PD_CMD_OK; ++i) {
        *rc = fn_options(&b->fns[i], &opts[i], outs + PD_MAX_OUTPUTS * i) ? PD_CMD_USAGE
                                                                          : PD_CMD_OK;
        fns[i] = &opts[i];
        specs[i] = b->fns[i].spec;
    }
    char *text = NULL;
    if (*rc == PD_CMD_OK) {
        pd_jit_options j; /* the flags that tell each function's string ABI */
        memset(&j, 0, sizeof j);
        j.struct_size = sizeof j;
        j.cxxflags = (const char *const *)a->cxxflags.v;
        j.n_cxxflags = a->cxxflags.n;
        j.cuda_flags = (const char *const *)a->cuda_flags.v;
        j.n_cuda_flags = a->cuda_flags.n;
        if (pd_jit_aot_bundle_source(&j, specs, fns, b->n, &text) != PD_OK)
            *rc = pd_cmd_fail("bundle");
    }
    free(specs);
    free(fns);
    free(outs);
    free(opts);
    return text;
}

char *pd_cmd_bundle_aot_source(const pd_cmd_bundle_aot *b, pd_cmd_load_args *a, bool ort, int *rc)
{
    *rc = PD_CMD_OK;
    for (int32_t i = 0; i < b->n; ++i) {
        const char *spec = b->fns[i].spec;
        size_t src_len = 0;
        pd_aot_spec_split(spec, &src_len, NULL); /* pd_cmd_is_aot_spec said it is one */
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
    char *text = fill_source(b, a, rc);
    if (text == NULL)
        return NULL;
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
