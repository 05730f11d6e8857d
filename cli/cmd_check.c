/*
 * cmd_check.c - `pdext check SRC...|LIB.so [--op NAME] [--attr NAME=VALUE ...] [--json]`:
 * is each op of a module right? The checks are pd_check_op's (pdext_check.h,
 * sdk/src/autograd/check.c: dtypes, shapes+infer, bad input, deterministic, strided,
 * gradcheck), the same that Python's pdext.check runs; this file is the command around them:
 * its options (--attr values parsed by each attr's declared type, --input [OP.]NAME=SHAPE
 * [:DTYPE] into pd_check_input), one table row per check as it finishes (a progress view by
 * itself) or one JSON document with --json, notes, and the exit status (0 only when no check
 * failed). --sanitize runs the command again in a sanitized child (cmd_check_sanitize.c).
 */
#include "pdext_check.h"
#include "pdext_cmd.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pdext check SRC...|LIB.so|FILE:FUNC [--op NAME] [--attr NAME=VALUE ...]\n"
    "                   [--input [OP.]NAME=D0,D1,...[:DTYPE] ...] [--json] [--sanitize]\n"
    "                   [JIT options: -I DIR --cflags FLAGS ... -v]\n"
    "\n"
    "Checks every forward op of the module (or only --op NAME) with random inputs: the dtypes\n"
    "its kernel takes, runs at several shapes (one element, empty, large) against its infer\n"
    "functions, determinism, strided inputs against contiguous ones, and its gradient against\n"
    "finite differences (gradcheck, where it has a grad op). Attrs without a default take\n"
    "--attr values (int attrs default to 0). Every input gets the same random [3, 4] tensor\n"
    "unless --input gives its shape (and dtype): then the op runs at those shapes; OP.NAME\n"
    "gives it for op OP only (a module whose ops need different shapes). Integer\n"
    "inputs hold 0, 1 or 2. An op that refuses an input it cannot take (one element, empty,\n"
    "large) with a message naming it and saying why passes the \"bad input\" row; in-place\n"
    "inputs not declared strided stay dense in the strided row. --sanitize runs the same\n"
    "checks on the sources rebuilt with ASan and UBSan, in a child process: a crash is\n"
    "reported with its case. Prints a table (op, dtype, check, result), or JSON with --json.\n"
    "Exit status 0 only when every check passes.\n"
    "FILE:FUNC checks a MindSpore AOT function (as `pdext run FILE:FUNC` loads it): --inputs N\n"
    "gives its input count (default 1), --attr values declare its attrs (untyped); it has no\n"
    "grad op, so gradcheck is skipped.\n";

#define CHECK_HELP_SHOWN (-1) /* parse_args printed --help: exit 0 */
#define MAX_SPECS 64          /* --input options */

typedef struct check_args {
    pd_cmd_load_args load;
    const char *op;
    pd_cmd_strv attrs; /* NAME=VALUE */
    pd_check_input specs[MAX_SPECS];
    int32_t n_specs;
    bool json;
    bool sanitize;      /* --sanitize: run the checks in a sanitized child (cmd_check_sanitize.c) */
    int32_t aot_inputs; /* --inputs N: a FILE:FUNC's input count (AOT function); 0: 1 */
} check_args;

static void json_str(FILE *fp, const char *s)
{
    fputc('"', fp);
    for (; *s; ++s) {
        if (*s == '"' || *s == '\\')
            fprintf(fp, "\\%c", *s);
        else if ((unsigned char)*s < 0x20)
            fprintf(fp, "\\u%04x", (unsigned)*s);
        else
            fputc(*s, fp);
    }
    fputc('"', fp);
}

/* What the command prints as pd_check_op hands it rows and notes. */
typedef struct check_state {
    bool json;
    int32_t failed, rows;
    FILE *fp;
    pd_cmd_strv notes;
} check_state;

/* pd_check_op's on_row: a table line (flushed: the table is the progress view) or a JSON
 * object. */
static void print_row(void *user, const pd_check_row *r)
{
    check_state *s = user;
    if (r->status == PD_CHECK_FAIL)
        s->failed++;
    if (s->json) {
        fprintf(s->fp, "%s\n    {\"op\": ", s->rows ? "," : "");
        json_str(s->fp, r->op);
        fprintf(s->fp, ", \"dtype\": ");
        json_str(s->fp, r->dtype);
        fprintf(s->fp, ", \"check\": ");
        json_str(s->fp, r->check);
        fprintf(s->fp, ", \"status\": \"%s\", \"detail\": ",
                r->status == PD_CHECK_FAIL ? "fail" : pd_check_status_name(r->status));
        json_str(s->fp, r->detail);
        fprintf(s->fp, "}");
    } else {
        fprintf(s->fp, "%-20s %-9s %-14s %-4s %s\n", r->op, r->dtype, r->check,
                pd_check_status_name(r->status), r->detail);
        fflush(s->fp);
    }
    s->rows++;
}

static void keep_note(void *user, const char *note)
{
    pd_cmd_strv_add(&((check_state *)user)->notes, note);
}

/* In a sanitized child (cmd_check_sanitize.c), names the check about to run on stderr, so
 * that a crash in it can be told. */
static void mark_case(void *user, const char *op, const char *dtype, const char *check)
{
    (void)user;
    fprintf(stderr, "@case %-20s %-9s %s\n", op, dtype, check);
    fflush(stderr);
}

/* --- attrs and the command ----------------------------------------------------------------- */

/* The --attr values op takes, parsed by each attr's declared type (pd_check_op gives the
 * others their defaults, or 0 for int attrs, or asks for them). Returns PD_CMD_USAGE (after
 * saying what an attr takes) for a value it cannot read. elems/texts collect what the parsed
 * values point into. */
static int op_attrs(const pd_op *op, const check_args *a, pd_attr *attrs, int32_t *n, void **elems,
                    char **texts)
{
    *n = 0;
    for (int32_t k = 0; k < pd_op_attr_count(op); ++k) {
        pd_attr_info info;
        if (pd_op_attr_info(op, k, &info) != PD_OK)
            continue;
        const char *given = NULL;
        size_t len = strlen(info.name);
        for (int32_t j = 0; j < a->attrs.n; ++j)
            if (strncmp(a->attrs.v[j], info.name, len) == 0 && a->attrs.v[j][len] == '=')
                given = a->attrs.v[j] + len + 1;
        if (!given)
            continue;
        if (!pd_cmd_parse_attr(&attrs[*n], info.name, info.type, given, &elems[*n], &texts[*n]))
            return pd_cmd_usage_error("check", "--attr %s=%s: %s attr '%s' takes %s", info.name,
                                      given, pd_attr_type_name(info.type), info.name,
                                      pd_cmd_attr_syntax(info.type));
        (*n)++;
    }
    return PD_CMD_OK;
}

/* "[OP.]NAME=D0,D1,...[:DTYPE]" (no dims: a scalar) into *spec; false when malformed. */
static bool spec_parse(const char *text, pd_check_input *spec)
{
    memset(spec, 0, sizeof *spec);
    const char *eq = strchr(text, '=');
    if (!eq || eq == text)
        return false;
    /* OP.NAME: op and input names are identifiers, so the first '.' splits them. */
    const char *dot = memchr(text, '.', (size_t)(eq - text)), *name = text;
    if (dot != NULL) {
        if (dot == text || dot + 1 == eq || (size_t)(dot - text) >= sizeof spec->op)
            return false;
        memcpy(spec->op, text, (size_t)(dot - text));
        name = dot + 1;
    }
    if ((size_t)(eq - name) >= sizeof spec->name)
        return false;
    memcpy(spec->name, name, (size_t)(eq - name));
    const char *p = eq + 1, *colon = strchr(p, ':');
    if (colon) {
        spec->dtype = pd_dtype_from_name(colon + 1);
        if (spec->dtype == PD_UNDEFINED)
            return false;
    }
    size_t len = colon ? (size_t)(colon - p) : strlen(p);
    return pd_cmd_parse_dims(p, len, &spec->ndim, spec->shape);
}

static int parse_args(int argc, char **argv, check_args *c)
{
    bool bad = false;
    for (int i = 1; i < argc; ++i) {
        const char *v;
        int took;
        if (pd_cmd_help(argv[i], usage)) {
            return CHECK_HELP_SHOWN;
        } else if (strcmp(argv[i], "--json") == 0) {
            c->json = true;
        } else if (strcmp(argv[i], "--sanitize") == 0) {
            c->sanitize = true;
        } else if ((v = pd_cmd_option("check", argc, argv, &i, "--op", NULL, &bad)) != NULL) {
            c->op = v;
        } else if (!bad &&
                   (v = pd_cmd_option("check", argc, argv, &i, "--attr", NULL, &bad)) != NULL) {
            if (strchr(v, '=') == NULL || v[0] == '=')
                return pd_cmd_usage_error("check", "--attr '%s' is not NAME=VALUE", v);
            pd_cmd_strv_add(&c->attrs, v);
        } else if (!bad &&
                   (v = pd_cmd_option("check", argc, argv, &i, "--inputs", NULL, &bad)) != NULL) {
            char *end;
            long n = strtol(v, &end, 10);
            if (end == v || *end != '\0' || n < 1 || n > PD_MAX_INPUTS)
                return pd_cmd_usage_error("check", "--inputs '%s': expected 1 to %d", v,
                                          PD_MAX_INPUTS);
            c->aot_inputs = (int32_t)n;
        } else if (!bad &&
                   (v = pd_cmd_option("check", argc, argv, &i, "--input", NULL, &bad)) != NULL) {
            if (c->n_specs == MAX_SPECS)
                return pd_cmd_usage_error("check", "more than %d --input options", MAX_SPECS);
            if (!spec_parse(v, &c->specs[c->n_specs++]))
                return pd_cmd_usage_error("check",
                                          "--input '%s' is not [OP.]NAME=D0,D1,...[:DTYPE] (e.g. "
                                          "X=4,3, Label=4:int64 or matmul.B=4,5)",
                                          v);
        } else if (bad || (took = pd_cmd_load_option("check", &c->load, argc, argv, &i)) < 0) {
            return PD_CMD_USAGE;
        } else if (took == 0 && argv[i][0] == '-') {
            return pd_cmd_usage_error("check", "unknown option '%s'", argv[i]);
        } else if (took == 0) {
            pd_cmd_strv_add(&c->load.inputs, argv[i]);
        }
    }
    return PD_CMD_OK;
}

/* Checks one op; returns a usage status when its attrs cannot be made. */
static int check_one(check_state *s, const pd_registry *reg, const pd_op *op, const check_args *c)
{
    pd_attr attrs[PD_MAX_ATTRS];
    void *elems[PD_MAX_ATTRS] = {0};
    char *texts[PD_MAX_ATTRS] = {0};
    int32_t n_attrs = 0;
    int rc = op_attrs(op, c, attrs, &n_attrs, elems, texts);
    pd_check_options o = {.struct_size = sizeof o,
                          .inputs = c->specs,
                          .n_inputs = c->n_specs,
                          .attr_hint = {"--attr ", "=VALUE"},
                          .on_row = print_row,
                          .on_note = keep_note,
                          .on_case = getenv("PDEXT_CHECK_CHILD") ? mark_case : NULL,
                          .user = s};
    pd_status st = PD_OK;
    if (rc == PD_CMD_OK)
        st = pd_check_op(reg, pd_op_name(op), attrs, n_attrs, &o, NULL);
    if (st != PD_OK) { /* an attr to pass: the command's usage */
        pd_cmd_error("check", "%s", pd_last_error());
        rc = st == PD_ERR_INVALID_ARGUMENT ? PD_CMD_USAGE : PD_CMD_FAILED;
    }
    for (int32_t k = 0; k < PD_MAX_ATTRS; ++k) {
        free(elems[k]);
        free(texts[k]);
    }
    return rc;
}

int pd_cmd_check(int argc, char **argv)
{
    check_args c;
    memset(&c, 0, sizeof c);
    int rc = parse_args(argc, argv, &c);
    pd_registry *reg = NULL;
    pd_module *module = NULL;
    if (rc == PD_CMD_OK && c.load.inputs.n == 0)
        rc = pd_cmd_usage_error("check", "no sources or library given");
    bool aot = rc == PD_CMD_OK && c.load.inputs.n == 1 && pd_cmd_is_aot_spec(c.load.inputs.v[0]);
    if (rc == PD_CMD_OK && c.sanitize) {
        if (aot)
            rc = pd_cmd_usage_error("check", "--sanitize rebuilds op sources; it does not take an "
                                             "AOT function (FILE:FUNC)");
        else if (pd_cmd_is_library(c.load.inputs.v[0]))
            rc = pd_cmd_usage_error("check", "--sanitize rebuilds the module from its sources; "
                                             "give the sources, not a library");
        else
            rc = pd_cmd_check_sanitized(argc, argv);
        pd_cmd_load_args_free(&c.load);
        pd_cmd_strv_free(&c.attrs);
        return rc;
    }
    if (rc == PD_CMD_OK && pd_registry_create(&reg) != PD_OK)
        rc = pd_cmd_fail("check");
    pd_cmd_strv none = {0};
    pd_cmd_aot_args aot_args =
        {NULL, c.aot_inputs ? c.aot_inputs : 1, 0, &c.attrs, &none, &none, c.load.build_dir};
    if (rc == PD_CMD_OK && aot)
        rc = pd_cmd_aot_load("check", reg, c.load.inputs.v[0], &aot_args, &module);
    else if (rc == PD_CMD_OK)
        rc = pd_cmd_load("check", reg, &c.load, &module);
    const pd_op *only = NULL;
    if (rc == PD_CMD_OK && c.op) {
        only = pd_op_find(reg, c.op);
        if (!only || pd_op_get_kind(only) != PD_OP_FORWARD) {
            pd_cmd_error("check", "no forward op '%s' in the module (it has: see below)", c.op);
            pd_cmd_print_op_names(stderr, module);
            rc = PD_CMD_FAILED;
        }
    }
    if (rc == PD_CMD_OK && pd_check_inputs_validate(reg, c.specs, c.n_specs) != PD_OK)
        rc = pd_cmd_usage_error("check", "--input %s", pd_last_error());
    check_state s = {c.json, 0, 0, stdout, {0}};
    if (rc == PD_CMD_OK) {
        if (c.json)
            fprintf(stdout, "{\n  \"rows\": [");
        else
            printf("%-20s %-9s %-14s %-4s %s\n", "op", "dtype", "check", "ok?", "detail");
        for (int32_t i = 0; rc == PD_CMD_OK && i < pd_module_op_count(module); ++i) {
            const pd_op *op = pd_module_op(module, i);
            if (pd_op_get_kind(op) == PD_OP_FORWARD && (!only || op == only))
                rc = check_one(&s, reg, op, &c);
        }
    }
    if (rc == PD_CMD_OK) {
        if (c.json) {
            fprintf(stdout, "\n  ],\n  \"notes\": [");
            for (int32_t k = 0; k < s.notes.n; ++k) {
                fprintf(stdout, "%s", k ? ", " : "");
                json_str(stdout, s.notes.v[k]);
            }
            fprintf(stdout, "],\n  \"failed\": %d,\n  \"ok\": %s\n}\n", s.failed,
                    s.failed ? "false" : "true");
        } else {
            for (int32_t k = 0; k < s.notes.n; ++k)
                printf("note: %s\n", s.notes.v[k]);
            printf("%d check%s, %d failed\n", s.rows, s.rows == 1 ? "" : "s", s.failed);
        }
        rc = s.failed ? PD_CMD_FAILED : PD_CMD_OK;
    }
    pd_cmd_strv_free(&s.notes);
    pd_registry_destroy(reg);
    pd_cmd_load_args_free(&c.load);
    pd_cmd_strv_free(&c.attrs);
    return rc == CHECK_HELP_SHOWN ? PD_CMD_OK : rc;
}
