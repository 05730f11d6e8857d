/*
 * cmd_aot.c - `pdext run FILE:FUNC` and `pdext list FILE:FUNC`: a MindSpore AOT function (in a
 * prebuilt library, or in a source the JIT builds first, pd_jit_aot_build) registered as an op
 * through pdext_aot.h. The command gives what MindSpore's Python API would: the input count (from
 * the
 * --input options), the outputs' shapes and dtypes (--out-shape / --out-dtype, else the
 * library's infer functions or input 0) and the attrs, untyped: each --attr value declares the
 * attr with the type its text reads as (true/false/True/False: bool; an integer: int64_t; a number:
 * float; a list "1,2" or "[1, 2]": std::vector<int64_t> or std::vector<float>; anything else,
 * nested lists included: std::string), and the kernel reads it with MindSpore's coercions.
 */
#include "pdext_cmd.h"

#include "aot_lazy.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool pd_cmd_is_aot_spec(const char *arg)
{
    size_t n;
    if (!pd_aot_spec_split(arg, &n, NULL))
        return false;
    static const char *const exts[] = {".so", ".cc", ".cpp", ".cxx", ".c", ".cu"};
    for (size_t i = 0; i < sizeof exts / sizeof exts[0]; ++i) {
        size_t e = strlen(exts[i]);
        if (n > e && strncmp(arg + n - e, exts[i], e) == 0)
            return true;
    }
    return false;
}

static bool whole_int(const char *s)
{
    char *end;
    errno = 0;
    (void)strtoll(s, &end, 10);
    return *s && *end == '\0' && errno == 0;
}

static bool whole_number(const char *s)
{
    char *end;
    errno = 0;
    (void)strtod(s, &end);
    return *s && *end == '\0' && errno == 0;
}

/* The element type of a flat list "1,2" (brackets already removed): 'i', 'f' or 0. */
static char list_kind(const char *s)
{
    char kind = 'i', item[128];
    while (*s) {
        const char *comma = strchr(s, ',');
        size_t n = comma ? (size_t)(comma - s) : strlen(s);
        while (n && isspace((unsigned char)*s)) {
            ++s;
            --n;
        }
        while (n && isspace((unsigned char)s[n - 1]))
            --n;
        if (n == 0 || n >= sizeof item)
            return 0;
        memcpy(item, s, n);
        item[n] = '\0';
        if (!whole_int(item)) {
            if (!whole_number(item))
                return 0;
            kind = 'f';
        }
        s = comma ? comma + 1 : s + n;
    }
    return kind;
}

/* Declares the attr NAME=VALUE (spec, modified in place: a flat list loses its brackets so
 * that the command's attr parser reads it) into decl. */
static void declare_attr(char *spec, char *decl, size_t cap)
{
    char *eq = strchr(spec, '=');
    char *v = eq + 1;
    size_t n = strlen(v);
    const char *type = "std::string";
    if (strcmp(v, "true") == 0 || strcmp(v, "false") == 0 || strcmp(v, "True") == 0 ||
        strcmp(v, "False") == 0) /* Python's spelling too, as MindSpore users write attrs */
        type = "bool";
    else if (whole_int(v))
        type = "int64_t";
    else if (whole_number(v))
        type = "float";
    else if (n >= 2 && v[0] == '[' && v[n - 1] == ']' && strchr(v + 1, '[') == NULL) {
        char *inner = pd_cmd_xstrdup(v + 1);
        inner[n - 2] = '\0';
        char kind = list_kind(inner);
        if (kind) {
            memmove(v, inner, n - 1); /* "[1,2]" -> "1,2" */
            type = kind == 'i' ? "std::vector<int64_t>" : "std::vector<float>";
        }
        free(inner);
    } else if (strchr(v, ',') && list_kind(v))
        type = list_kind(v) == 'i' ? "std::vector<int64_t>" : "std::vector<float>";
    snprintf(decl, cap, "%.*s: %s", (int)(eq - spec), spec, type);
}

int pd_cmd_aot_load(const char *cmd, pd_registry *reg, const char *spec, pd_cmd_aot_args *a,
                    pd_module **out)
{
    int32_t n_outputs = a->n_outputs;
    if (a->out_shapes->n > n_outputs)
        n_outputs = a->out_shapes->n;
    if (a->out_dtypes->n > n_outputs)
        n_outputs = a->out_dtypes->n;
    if (n_outputs < 1)
        n_outputs = 1;
    if (n_outputs > PD_MAX_OUTPUTS || a->n_inputs > PD_MAX_INPUTS || a->attrs->n > PD_MAX_ATTRS)
        return pd_cmd_usage_error(cmd, "at most %d inputs, %d outputs and %d attrs", PD_MAX_INPUTS,
                                  PD_MAX_OUTPUTS, PD_MAX_ATTRS);
    pd_aot_output outputs[PD_MAX_OUTPUTS];
    for (int32_t i = 0; i < n_outputs; ++i) {
        memset(&outputs[i], 0, sizeof outputs[i]);
        outputs[i].ndim = -1;
        if (i < a->out_shapes->n &&
            !pd_cmd_parse_dims(a->out_shapes->v[i], strlen(a->out_shapes->v[i]), &outputs[i].ndim,
                               outputs[i].shape))
            return pd_cmd_usage_error(cmd, "--out-shape '%s' is not a shape such as 4,5",
                                      a->out_shapes->v[i]);
        if (i < a->out_dtypes->n &&
            (outputs[i].dtype = pd_dtype_from_name(a->out_dtypes->v[i])) == PD_UNDEFINED)
            return pd_cmd_usage_error(cmd, "--out-dtype '%s' is not a dtype (float32, int64, ...)",
                                      a->out_dtypes->v[i]);
    }
    char decls[PD_MAX_ATTRS][256];
    const char *decl_ptrs[PD_MAX_ATTRS];
    for (int32_t i = 0; i < a->attrs->n; ++i) {
        if (strchr(a->attrs->v[i], '=') == NULL)
            return pd_cmd_usage_error(cmd, "--attr '%s' is not NAME=VALUE", a->attrs->v[i]);
        declare_attr(a->attrs->v[i], decls[i], sizeof decls[i]);
        decl_ptrs[i] = decls[i];
    }
    pd_aot_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = a->name;
    o.n_inputs = a->n_inputs;
    o.n_outputs = n_outputs;
    o.outputs = outputs;
    o.attrs = decl_ptrs;
    o.n_attrs = a->attrs->n;
    o.build_dir = a->build_dir;
    const char *why = NULL;
    const pd_aot_lazy *aot = pd_aot_lazy_get(&why);
    if (aot == NULL) {
        pd_cmd_error(cmd, "%s", why);
        return PD_CMD_FAILED;
    }
    char *library = NULL; /* a source is built first, by the JIT (pdext_aot.h loads libraries) */
    pd_status s = pd_jit_aot_build(spec, &o, &library);
    o.origin = spec; /* listings and messages name what the user gave */
    if (s == PD_OK)
        s = aot->load(reg, library, &o, out);
    free(library);
    return s == PD_OK ? PD_CMD_OK : pd_cmd_fail(cmd);
}

void pd_cmd_aot_print_info(const pd_op *op)
{
    const pd_aot_lazy *aot = pd_aot_lazy_loaded(); /* none loaded: op is no AOT op */
    pd_aot_info info;
    if (aot == NULL || aot->op_info(op, &info) != PD_OK)
        return;
    printf("  %-8s %s:%s (MindSpore AOT%s, %s std::string ABI)\n", "aot:", info.library,
           info.function, info.gpu ? " GPU kernel: runs on GPU tensors" : "",
           info.cxx11_abi ? "new" : "old (_GLIBCXX_USE_CXX11_ABI=0)");
    printf("  %-8s %s%s%s%s\n", "extras:", info.has_init ? "Init " : "",
           info.has_infer_shape ? "InferShape " : "", info.has_infer_type ? "InferType" : "",
           info.has_init || info.has_infer_shape || info.has_infer_type ? "" : "(none)");
}
