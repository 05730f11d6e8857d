/*
 * cmd_run.c - `pdext run SRC...|LIB.so --op NAME --input NAME=FILE ... [--attr NAME=VALUE ...]
 * [--out DIR]`: one op on .npy inputs, outputs written back as .npy. `pdext run FILE:FUNC`
 * runs a MindSpore AOT function the same way (cmd_aot.c registers it).
 *
 * Inputs are bound by their declared names without @VECTOR / @OPTIONAL ("X", "Out@GRAD"), or
 * without a name (--input FILE) to the next input not bound yet; a vector input takes one
 * tensor per repetition of its name, in order; an optional input may be left out. FILE is a .npy
 * file or MEMBER of an archive as ARCHIVE.npz:MEMBER. Attrs are parsed according to the op's
 * declared types (cmd_attr.c). Each output is written as DIR/<name>.npy with the same name
 * spelling, "X@GRAD.npy" included ('@' is an ordinary file-name character); the items of a vector
 * output as DIR/<name>_<i>.npy. DIR is made (with its parents) when the outputs are written; a file
 * in its place is refused up front.
 */
#include "pdext_cmd.h"
#include "pdext_npy.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char usage[] =
    "usage: pdext run SRC...|LIB.so --op NAME --input [NAME=]FILE ... [--attr NAME=VALUE ...]\n"
    "                 [--out DIR] [JIT options: -I DIR --cflags FLAGS ... -v]\n"
    "       pdext run FILE:FUNC --input FILE ... [--attr NAME=VALUE ...]\n"
    "                 [--out-shape 4,5 --out-dtype float32 ...] [--outputs N] [--out DIR]\n"
    "\n"
    "Runs op NAME (a grad op by its registered name, e.g. custom_relu_grad) on inputs read\n"
    "from .npy files or .npz members (FILE.npz:MEMBER). --input FILE without a name binds the\n"
    "next input not bound yet. A vector input takes one file per\n"
    "repetition (--input X=a.npy --input X=b.npy); an optional input may be left out.\n"
    "FILE:FUNC is a MindSpore AOT function in a library (lib.so:CustomAdd) or a source that\n"
    "is compiled first (add.cc:CustomAdd, .cpp, .c, .cu): it takes the inputs given, in order;\n"
    "its outputs (out0, out1, ...) have the shape and dtype given per output by --out-shape /\n"
    "--out-dtype, else its InferShape / InferType, else those of input 0; attrs are untyped\n"
    "(scale=0.5, axis=1, dims=[1,2], mode=sum) and read with MindSpore's coercions.\n"
    "Attrs follow the op's declared types: axis=1, shape=2,3, name=abc, flag=true|false,\n"
    "scale=0.5, names=a,b. Outputs go to DIR/<output name>.npy (default DIR: .; made if\n"
    "missing), items of a vector output to DIR/<name>_<i>.npy; each output's name, shape and\n"
    "dtype is printed.\n";

typedef struct run_args {
    pd_cmd_load_args load;
    const char *op;
    const char *out_dir;
    pd_cmd_strv inputs; /* NAME=FILE or FILE */
    pd_cmd_strv attrs;  /* NAME=VALUE */
    /* FILE:FUNC (MindSpore AOT) */
    pd_cmd_strv out_shapes, out_dtypes;
    int32_t n_outputs;
} run_args;

/* The tensors bound to one declared input. */
typedef struct input_slot {
    char name[128];
    bool is_vector, is_optional;
    pd_tensor *tensors;
    int32_t count;
} input_slot;

static int parse_args(int argc, char **argv, run_args *r)
{
    bool bad = false;
    for (int i = 1; i < argc; ++i) {
        const char *v;
        int took;
        if (pd_cmd_help(argv[i], usage)) {
            return -1;
        } else if ((v = pd_cmd_option("run", argc, argv, &i, "--op", NULL, &bad)) != NULL) {
            r->op = v;
        } else if (!bad &&
                   (v = pd_cmd_option("run", argc, argv, &i, "--input", NULL, &bad)) != NULL) {
            pd_cmd_strv_add(&r->inputs, v);
        } else if (!bad &&
                   (v = pd_cmd_option("run", argc, argv, &i, "--attr", NULL, &bad)) != NULL) {
            pd_cmd_strv_add(&r->attrs, v);
        } else if (!bad &&
                   (v = pd_cmd_option("run", argc, argv, &i, "--out", NULL, &bad)) != NULL) {
            r->out_dir = v;
        } else if (!bad &&
                   (v = pd_cmd_option("run", argc, argv, &i, "--out-shape", NULL, &bad)) != NULL) {
            pd_cmd_strv_add(&r->out_shapes, v);
        } else if (!bad &&
                   (v = pd_cmd_option("run", argc, argv, &i, "--out-dtype", NULL, &bad)) != NULL) {
            pd_cmd_strv_add(&r->out_dtypes, v);
        } else if (!bad &&
                   (v = pd_cmd_option("run", argc, argv, &i, "--outputs", NULL, &bad)) != NULL) {
            r->n_outputs = atoi(v);
            if (r->n_outputs < 1 || r->n_outputs > PD_MAX_OUTPUTS)
                return pd_cmd_usage_error("run", "--outputs '%s' is not 1 to %d", v,
                                          PD_MAX_OUTPUTS);
        } else if (bad || (took = pd_cmd_load_option("run", &r->load, argc, argv, &i)) < 0) {
            return PD_CMD_USAGE;
        } else if (took == 0 && argv[i][0] == '-') {
            return pd_cmd_usage_error("run", "unknown option '%s'", argv[i]);
        } else if (took == 0) {
            pd_cmd_strv_add(&r->load.inputs, argv[i]);
        }
    }
    bool aot = r->load.inputs.n == 1 && pd_cmd_is_aot_spec(r->load.inputs.v[0]);
    if (r->op == NULL && !aot)
        return pd_cmd_usage_error("run", "missing --op NAME (the op to run)");
    if (!aot && (r->out_shapes.n || r->out_dtypes.n || r->n_outputs))
        return pd_cmd_usage_error("run", "--out-shape, --out-dtype and --outputs are for "
                                         "FILE:FUNC (a MindSpore AOT function)");
    for (int32_t k = 0; k < r->inputs.n; ++k)
        if (r->inputs.v[k][0] == '=' || r->inputs.v[k][0] == '\0')
            return pd_cmd_usage_error("run", "--input '%s' is not [NAME=]FILE", r->inputs.v[k]);
    for (int32_t k = 0; k < r->attrs.n; ++k)
        if (strchr(r->attrs.v[k], '=') == NULL || r->attrs.v[k][0] == '=')
            return pd_cmd_usage_error("run", "--attr '%s' is not NAME=VALUE", r->attrs.v[k]);
    return PD_CMD_OK;
}

/* Whether `path` names an .npz archive: by its name, or by the zip magic at its start. */
static bool looks_like_npz(const char *path)
{
    size_t n = strlen(path);
    if (n >= 4 && strcmp(path + n - 4, ".npz") == 0)
        return true;
    char magic[4] = {0};
    FILE *fp = fopen(path, "rb");
    size_t got = fp ? fread(magic, 1, sizeof magic, fp) : 0;
    if (fp)
        fclose(fp);
    return got == sizeof magic && memcmp(magic, "PK\x03\x04", sizeof magic) == 0;
}

/* An archive given without :MEMBER: says how to name one, and which there are. */
static void report_npz_without_member(const char *input, const char *path)
{
    char **names = NULL;
    int32_t count = 0;
    if (pd_npz_list(path, &names, &count) != PD_OK) {
        pd_cmd_error("run", "input '%s': %s", input, pd_last_error());
        return;
    }
    char list[1024] = "";
    size_t at = 0;
    for (int32_t i = 0; i < count && at < sizeof list; ++i)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", names[i]);
    pd_cmd_error("run",
                 "input '%s': %s is an .npz archive; name a member: %s=%s:MEMBER "
                 "(members: %s)",
                 input, path, input, path, count ? list : "none");
    pd_npz_names_free(names, count);
}

/* Reads FILE.npy, or ARCHIVE.npz:MEMBER, for input `input`; prints the error itself. */
static bool load_tensor(const char *input, const char *spec, pd_tensor *out)
{
    const char *colon = strrchr(spec, ':');
    pd_status st;
    if (colon && colon - spec >= 4 && strncmp(colon - 4, ".npz", 4) == 0) {
        char path[4096];
        snprintf(path, sizeof path, "%.*s", (int)(colon - spec), spec);
        st = pd_npz_load(path, colon + 1, out);
    } else if (looks_like_npz(spec)) {
        report_npz_without_member(input, spec);
        return false;
    } else {
        st = pd_npy_load(spec, out);
    }
    if (st != PD_OK)
        pd_cmd_error("run", "input '%s': %s", input, pd_last_error());
    return st == PD_OK;
}

/* Names of the op's inputs (or attrs) for messages: "X, Y (optional)". */
static void list_inputs(const input_slot *slots, int32_t n, char *buf, size_t cap)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int32_t i = 0; i < n && at < cap; ++i)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s%s", i ? ", " : "", slots[i].name,
                               slots[i].is_vector     ? " (vector)"
                               : slots[i].is_optional ? " (optional)"
                                                      : "");
}

/* Reads every --input into the slot of its declared name; checks counts. */
static int bind_inputs(const pd_op *op, const run_args *r, input_slot *slots, int32_t n)
{
    char names[1024];
    for (int32_t i = 0; i < n; ++i) {
        pd_arg_info info;
        if (pd_op_input_info(op, i, &info) != PD_OK)
            return pd_cmd_fail("run");
        snprintf(slots[i].name, sizeof slots[i].name, "%s", info.name);
        slots[i].is_vector = info.is_vector;
        slots[i].is_optional = info.is_optional;
        slots[i].tensors = pd_cmd_xmalloc(sizeof(pd_tensor) *
                                          (size_t)(r->inputs.n ? r->inputs.n : 1));
    }
    list_inputs(slots, n, names, sizeof names);
    for (int32_t k = 0; k < r->inputs.n; ++k) {
        const char *spec = r->inputs.v[k], *eq = strchr(spec, '=');
        input_slot *s = NULL;
        if (eq == NULL) { /* --input FILE: the next input not bound yet */
            for (int32_t i = 0; i < n && s == NULL; ++i)
                if (slots[i].count == 0)
                    s = &slots[i];
            if (s == NULL) {
                pd_cmd_error("run", "--input %s: every input of %s is bound already (inputs: %s)",
                             spec, pd_op_name(op), n ? names : "none");
                return PD_CMD_FAILED;
            }
            if (!load_tensor(s->name, spec, &s->tensors[s->count]))
                return PD_CMD_FAILED;
            s->count++;
            continue;
        }
        for (int32_t i = 0; i < n && s == NULL; ++i)
            if (strlen(slots[i].name) == (size_t)(eq - spec) &&
                strncmp(slots[i].name, spec, (size_t)(eq - spec)) == 0)
                s = &slots[i];
        if (s == NULL) {
            pd_cmd_error("run", "op %s has no input '%.*s' (inputs: %s)", pd_op_name(op),
                         (int)(eq - spec), spec, n ? names : "none");
            return PD_CMD_FAILED;
        }
        if (s->count == 1 && !s->is_vector) {
            pd_cmd_error("run", "input '%s' of %s is not a vector input: give it once", s->name,
                         pd_op_name(op));
            return PD_CMD_FAILED;
        }
        if (!load_tensor(s->name, eq + 1, &s->tensors[s->count]))
            return PD_CMD_FAILED;
        s->count++;
    }
    for (int32_t i = 0; i < n; ++i)
        if (slots[i].count == 0 && !slots[i].is_optional) {
            pd_cmd_error("run",
                         "missing input '%s' of %s: give --input %s=FILE.npy%s (inputs: "
                         "%s)",
                         slots[i].name, pd_op_name(op), slots[i].name,
                         slots[i].is_vector ? " once per item" : "", names);
            return PD_CMD_FAILED;
        }
    return PD_CMD_OK;
}

/* Parses every --attr by the op's declared type into attrs[0..*count); a repeated NAME
 * replaces its earlier value (the last one wins, as with most command-line options). */
static int parse_attrs(const pd_op *op, const run_args *r, pd_attr *attrs, void **elems,
                       char **texts, int32_t *count)
{
    int32_t n = pd_op_attr_count(op);
    *count = 0;
    for (int32_t k = 0; k < r->attrs.n; ++k) {
        char *spec = r->attrs.v[k], *eq = strchr(spec, '=');
        *eq = '\0'; /* NAME and VALUE become two strings, owned by r->attrs */
        int32_t j = 0;
        while (j < n && strcmp(pd_op_attr_name(op, j), spec) != 0)
            j++;
        if (j == n) {
            char names[1024] = "";
            size_t at = 0;
            for (int32_t i = 0; i < n && at < sizeof names; ++i)
                at += (size_t)snprintf(names + at, sizeof names - at, "%s%s: %s", i ? ", " : "",
                                       pd_op_attr_name(op, i),
                                       pd_attr_type_name(pd_op_attr_type(op, i)));
            pd_cmd_error("run", "op %s has no attr '%s' (attrs: %s)", pd_op_name(op), spec,
                         n ? names : "none");
            return PD_CMD_FAILED;
        }
        pd_attr_type type = pd_op_attr_type(op, j);
        int32_t slot = 0;
        while (slot < *count && attrs[slot].name != pd_op_attr_name(op, j))
            slot++;
        if (slot == *count)
            (*count)++;
        free(elems[slot]);
        free(texts[slot]);
        if (!pd_cmd_parse_attr(&attrs[slot], pd_op_attr_name(op, j), type, eq + 1, &elems[slot],
                               &texts[slot])) {
            pd_cmd_error("run", "bad value '%s' for attr '%s' of %s: it is %s, so give %s", eq + 1,
                         spec, pd_op_name(op), pd_attr_type_name(type), pd_cmd_attr_syntax(type));
            return PD_CMD_FAILED;
        }
    }
    return PD_CMD_OK;
}

/* Every declared attr without a default must be given: says which one is missing before
 * anything runs, as for inputs. */
static int check_attrs_given(const pd_op *op, const pd_attr *attrs, int32_t count)
{
    for (int32_t j = 0; j < pd_op_attr_count(op); ++j) {
        const char *name = pd_op_attr_name(op, j);
        pd_attr_info info;
        if (pd_op_attr_info(op, j, &info) == PD_OK && info.has_default)
            continue;
        int32_t k = 0;
        while (k < count && strcmp(attrs[k].name, name) != 0)
            k++;
        if (k == count) {
            pd_cmd_error("run", "missing attr '%s' of %s: give --attr %s=VALUE (%s)", name,
                         pd_op_name(op), name, pd_attr_type_name(pd_op_attr_type(op, j)));
            return PD_CMD_FAILED;
        }
    }
    return PD_CMD_OK;
}

/* --out must be a directory or not exist yet (it is made, with its parents, once the op has
 * run): an existing file there, or as one of its parents, is refused before anything runs. */
static int check_out_dir(const char *out_dir)
{
    char path[4096];
    size_t len = (size_t)snprintf(path, sizeof path, "%s", out_dir);
    while (len > 1 && path[len - 1] == '/')
        path[--len] = '\0';
    for (size_t end = 1; end <= len; ++end) {
        if (end < len && path[end] != '/')
            continue;
        char saved = path[end];
        path[end] = '\0';
        struct stat st;
        bool file = stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
        if (file && end == len)
            pd_cmd_error("run", "--out '%s' is a file, not a directory", out_dir);
        else if (file)
            pd_cmd_error("run", "--out '%s': '%s' is a file, not a directory", out_dir, path);
        path[end] = saved;
        if (file)
            return PD_CMD_FAILED;
    }
    return PD_CMD_OK;
}

/* Writes and reports every output. */
static int write_outputs(const pd_op *op, const char *out_dir, pd_arg *outs, int32_t n)
{
    char dir[4096];
    size_t len = (size_t)snprintf(dir, sizeof dir, "%s", out_dir);
    while (len > 1 && dir[len - 1] == '/') /* "out/" -> "out", so paths print as out/Out.npy */
        dir[--len] = '\0';
    if (!pd_cmd_make_dirs(dir)) {
        pd_cmd_error("run", "cannot create output directory '%s': %s", dir, strerror(errno));
        return PD_CMD_FAILED;
    }
    for (int32_t o = 0; o < n; ++o) {
        char base[128], path[4096 + 160], shape[256];
        pd_arg_info info;
        if (pd_op_output_info(op, o, &info) != PD_OK)
            return pd_cmd_fail("run");
        bool vec = info.is_vector;
        snprintf(base, sizeof base, "%s", info.name);
        for (char *c = base; *c; ++c)
            if (*c == '/')
                *c = '_';
        for (int32_t k = 0; k < outs[o].count; ++k) {
            const pd_tensor *t = &outs[o].tensors[k];
            const char *sep = strcmp(dir, "/") == 0 ? "" : "/";
            if (vec)
                snprintf(path, sizeof path, "%s%s%s_%d.npy", dir, sep, base, (int)k);
            else
                snprintf(path, sizeof path, "%s%s%s.npy", dir, sep, base);
            if (pd_npy_save(path, t) != PD_OK)
                return pd_cmd_fail("run");
            char label[160];
            snprintf(label, sizeof label, vec ? "%s[%d]" : "%s", base, (int)k);
            printf("%s  shape=%s  dtype=%s  -> %s\n", label,
                   pd_cmd_shape_str(t, shape, sizeof shape), pd_dtype_name(t->dtype), path);
        }
    }
    return PD_CMD_OK;
}

/* Binds, runs and writes; everything it allocates is freed here. */
static int run_op(const pd_op *op, run_args *r)
{
    int32_t n_in = pd_op_input_count(op), n_out = pd_op_output_count(op), n_attr = 0;
    input_slot *slots = calloc((size_t)n_in + 1, sizeof *slots);
    pd_arg *ins = calloc((size_t)n_in + 1, sizeof *ins),
           *outs = calloc((size_t)n_out + 1, sizeof *outs);
    size_t max_attrs = (size_t)r->attrs.n + 1;
    pd_attr *attrs = calloc(max_attrs, sizeof *attrs);
    void **elems = calloc(max_attrs, sizeof *elems);
    char **texts = calloc(max_attrs, sizeof *texts);
    if (!slots || !ins || !outs || !attrs || !elems || !texts) {
        pd_cmd_error(NULL, "out of memory");
        exit(PD_CMD_FAILED);
    }
    int rc = bind_inputs(op, r, slots, n_in);
    if (rc == PD_CMD_OK)
        rc = parse_attrs(op, r, attrs, elems, texts, &n_attr);
    if (rc == PD_CMD_OK)
        rc = check_attrs_given(op, attrs, n_attr);
    for (int32_t i = 0; i < n_in; ++i)
        ins[i] = pd_arg_named(slots[i].name, slots[i].tensors, slots[i].count);
    /* outs[o] stays tensors NULL / count 0: the runner makes each output's array with exactly
     * as many items as the op made (a vector output has no guessed room to outgrow) */
    if (rc == PD_CMD_OK && pd_op_run(op, ins, n_in, attrs, n_attr, outs, n_out) != PD_OK)
        rc = pd_cmd_fail("run");
    else if (rc == PD_CMD_OK)
        rc = write_outputs(op, r->out_dir ? r->out_dir : ".", outs, n_out);
    for (int32_t o = 0; o < n_out; ++o)
        pd_arg_release(&outs[o]);
    for (int32_t i = 0; i < n_in; ++i) {
        for (int32_t k = 0; k < slots[i].count; ++k)
            pd_tensor_release(&slots[i].tensors[k]);
        free(slots[i].tensors);
    }
    for (int32_t k = 0; k < r->attrs.n; ++k) {
        free(elems[k]);
        free(texts[k]);
    }
    free(slots), free(ins), free(outs), free(attrs), free(elems), free(texts);
    return rc;
}

int pd_cmd_run(int argc, char **argv)
{
    run_args r;
    memset(&r, 0, sizeof r);
    int rc = parse_args(argc, argv, &r);
    if (rc < 0)
        rc = PD_CMD_OK; /* --help */
    else if (rc == PD_CMD_OK) {
        pd_registry *reg = NULL;
        pd_module *module = NULL;
        if (r.out_dir != NULL)
            rc = check_out_dir(r.out_dir);
        if (rc == PD_CMD_OK && pd_registry_create(&reg) != PD_OK)
            rc = pd_cmd_fail("run");
        bool aot = r.load.inputs.n == 1 && pd_cmd_is_aot_spec(r.load.inputs.v[0]);
        if (rc == PD_CMD_OK && aot) {
            pd_cmd_aot_args a = {r.op,          r.inputs.n,    r.n_outputs,     &r.attrs,
                                 &r.out_shapes, &r.out_dtypes, r.load.build_dir};
            rc = pd_cmd_aot_load("run", reg, r.load.inputs.v[0], &a, &module);
            if (rc == PD_CMD_OK)
                r.op = pd_op_name(pd_module_op(module, 0));
        } else if (rc == PD_CMD_OK)
            rc = pd_cmd_load("run", reg, &r.load, &module);
        if (rc == PD_CMD_OK) {
            const pd_op *op = pd_op_find(reg, r.op);
            if (op == NULL) {
                char names[1024] = "";
                size_t at = 0;
                for (int32_t i = 0; i < pd_module_op_count(module) && at < sizeof names; ++i)
                    at += (size_t)snprintf(names + at, sizeof names - at, "%s%s", i ? ", " : "",
                                           pd_op_name(pd_module_op(module, i)));
                pd_cmd_error("run", "no op '%s' in %s%s (ops: %s)", r.op, r.load.inputs.v[0],
                             r.load.inputs.n > 1 ? " ..." : "", names[0] ? names : "none");
                rc = PD_CMD_FAILED;
            } else {
                rc = run_op(op, &r);
            }
        }
        pd_registry_destroy(reg);
    }
    pd_cmd_load_args_free(&r.load);
    pd_cmd_strv_free(&r.inputs);
    pd_cmd_strv_free(&r.attrs);
    pd_cmd_strv_free(&r.out_shapes);
    pd_cmd_strv_free(&r.out_dtypes);
    return rc;
}
