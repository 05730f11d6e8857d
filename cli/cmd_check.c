/*
 * cmd_check.c - `pdext check SRC...|LIB.so [--op NAME] [--attr NAME=VALUE ...] [--json]`:
 * is each op of a module right? For every forward op (or the one named), with random inputs:
 *
 *   dtypes         which of float32, float64, float16, bfloat16, int32, int64 the kernel takes,
 *                  found by running it (the dispatch refuses the others)
 *   shapes         per accepted dtype, a run at [3, 4], one element [1, 1], empty [0, 4] and a
 *                  large [64, 300]; the runner checks every output against the infer functions
 *   deterministic  two runs on the large inputs (the --input ones if given) give the same bytes
 *   strided        transposed (strided) inputs give the same bytes as their contiguous copies
 *   gradcheck      pd_gradcheck at [3, 4] (float32 and float64; skipped, with the reason, for
 *                  ops without a grad op and for other dtypes)
 *
 * Every input gets the same shape (a vector input two tensors of it), which suits element-wise
 * ops and ops such as concat; --input NAME=D0,D1[:DTYPE] gives one input its own shape (and
 * dtype), for ops such as a matmul, and the op then runs at those shapes only; --input
 * OP.NAME=... gives it for one op of a module only. A run at an edge shape that the op
 * refuses clearly (PD_CHECK / PD_THROW, or the runner before the kernel, with a message naming
 * the op and saying why) is no failure: a "bad input" row reports the refusal as ok. Integer inputs
 * hold 0, 1 or 2 (valid class indices for three or more classes). Attrs take --attr values, else
 * their declared defaults, else 0 for int and int64 attrs (a guess that is said); other attrs
 * without a default stop the command asking for --attr. One table row per check as it finishes (a
 * progress view by itself), or one JSON document with --json; exit status 0 only when no check
 * failed.
 */
#include "cmd_check.h"
#include "pdext_gradcheck.h"

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

#define N_DTYPES 6
#define CHECK_HELP_SHOWN (-1) /* parse_args printed --help: exit 0 */
#define MAX_SPECS 64          /* --input options */

static const pd_data_type candidates[N_DTYPES] = {PD_FLOAT32,  PD_FLOAT64, PD_FLOAT16,
                                                  PD_BFLOAT16, PD_INT32,   PD_INT64};

typedef struct check_args {
    pd_cmd_load_args load;
    const char *op;
    pd_cmd_strv attrs; /* NAME=VALUE */
    input_spec specs[MAX_SPECS];
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

/* One row: status "ok", "FAIL" or "skip"; detail may be "". */
static void row(check_state *s, const char *op, const char *dtype, const char *check,
                const char *status, const char *detail)
{
    if (strcmp(status, "FAIL") == 0)
        s->failed++;
    if (s->json) {
        fprintf(s->fp, "%s\n    {\"op\": ", s->rows ? "," : "");
        json_str(s->fp, op);
        fprintf(s->fp, ", \"dtype\": ");
        json_str(s->fp, dtype);
        fprintf(s->fp, ", \"check\": ");
        json_str(s->fp, check);
        fprintf(s->fp,
                ", \"status\": \"%s\", \"detail\": ", strcmp(status, "FAIL") ? status : "fail");
        json_str(s->fp, detail);
        fprintf(s->fp, "}");
    } else {
        fprintf(s->fp, "%-20s %-9s %-14s %-4s %s\n", op, dtype, check, status, detail);
        fflush(s->fp);
    }
    s->rows++;
}

/* --- the checks ------------------------------------------------------------------------------ */

static const int64_t small[2] = {3, 4};

/* One run of op at `shape` with fresh inputs; false (and the error in msg, its status in
 * *status when not NULL) on failure. */
static bool runs_at(const check_state *s, const pd_op *op, pd_data_type t, const int64_t shape[2],
                    const pd_attr *attrs, int32_t n_attrs, char *msg, size_t size,
                    pd_status *status)
{
    call_args in, out;
    pd_status st = pd_check_inputs_make(s, op, t, shape, false, 0, &in);
    memset(&out, 0, sizeof out);
    if (st == PD_OK)
        st = pd_check_run(op, &in, attrs, n_attrs, &out);
    if (st != PD_OK)
        pd_check_error_line(msg, size);
    if (status)
        *status = st;
    pd_check_call_free(&in);
    pd_check_call_free(&out);
    return st == PD_OK;
}

/* Whether a failed run is a refusal of its input by the op: the op said no (PD_CHECK,
 * PD_THROW: the message ends with the author's [file:line]) or the runner refused the input
 * before the kernel (PD_ERR_INVALID_ARGUMENT), with a message that names the op and says
 * why. The runner's checks of what the kernel made (an output not as inferred, one not set)
 * are the op's bugs, and stay failures. */
static bool is_refusal(const pd_op *op, pd_status st, const char *msg)
{
    size_t n = strlen(pd_op_name(op));
    if ((st != PD_ERR_OP_FAILED && st != PD_ERR_INVALID_ARGUMENT) ||
        strncmp(msg, pd_op_name(op), n) != 0 || strncmp(msg + n, ": ", 2) != 0)
        return false;
    const char *why = msg + n + 2;
    size_t len = strlen(why);
    bool located = len > 3 && why[len - 1] == ']' && strchr(why, '[') != NULL &&
                   strchr(strrchr(why, '['), ':') != NULL;
    if (st == PD_ERR_OP_FAILED && !located)
        return false;
    /* "An error occurred." is PD_THROW with no message: not a reason */
    return *why != '\0' && *why != '[' && strncmp(why, "An error occurred.", 18) != 0;
}

static void check_shapes(check_state *s, const pd_op *op, pd_data_type t, const pd_attr *attrs,
                         int32_t n_attrs)
{
    static const int64_t shapes[3][2] = {{1, 1}, {0, 4}, {64, 300}};
    static const char *const names[3] = {"one element [1, 1]", "empty [0, 4]", "large [64, 300]"};
    static const char *const dims[3] = {"[1, 1]", "[0, 4]", "[64, 300]"};
    char msg[512], detail[700], ran[128] = "[3, 4]", refused[900] = "";
    if (pd_check_op_specs(s, op) > 0) { /* the shapes are the author's: the dtypes trial ran them */
        row(s, pd_op_name(op), pd_dtype_name(t), "shapes+infer", "ok", "the --input shapes");
        return;
    }
    for (int i = 0; i < 3; ++i) {
        pd_status st = PD_OK;
        if (runs_at(s, op, t, shapes[i], attrs, n_attrs, msg, sizeof msg, &st)) {
            size_t used = strlen(ran);
            snprintf(ran + used, sizeof ran - used, ", %s", dims[i]);
            continue;
        }
        if (!is_refusal(op, st, msg)) {
            snprintf(detail, sizeof detail, "%s: %s", names[i], msg);
            row(s, pd_op_name(op), pd_dtype_name(t), "shapes+infer", "FAIL", detail);
            return;
        }
        /* A clear no to an input it cannot take is right: the "bad input" row says so. */
        size_t used = strlen(refused);
        snprintf(refused + used, sizeof refused - used, "%s%s refused: %s", used ? "; " : "",
                 names[i], msg);
    }
    row(s, pd_op_name(op), pd_dtype_name(t), "shapes+infer", "ok", ran);
    if (refused[0])
        row(s, pd_op_name(op), pd_dtype_name(t), "bad input", "ok", refused);
}

static void check_determinism(check_state *s, const pd_op *op, pd_data_type t, const pd_attr *attrs,
                              int32_t n_attrs)
{
    static const int64_t large[2] = {64, 300};
    call_args in, a, b;
    char msg[512] = "";
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    /* with --input shapes, the inputs without one keep the [3, 4] they ran the dtypes at */
    pd_status st = pd_check_inputs_make(s, op, t, pd_check_op_specs(s, op) ? small : large, false,
                                        0, &in);
    if (st == PD_OK)
        st = pd_check_run(op, &in, attrs, n_attrs, &a);
    if (st == PD_OK)
        st = pd_check_run(op, &in, attrs, n_attrs, &b);
    if (st != PD_OK)
        row(s, pd_op_name(op), pd_dtype_name(t), "deterministic", "FAIL",
            pd_check_error_line(msg, sizeof msg));
    else if (!pd_check_outputs_same(&a, &b, msg, sizeof msg))
        row(s, pd_op_name(op), pd_dtype_name(t), "deterministic", "FAIL", msg);
    else
        row(s, pd_op_name(op), pd_dtype_name(t), "deterministic", "ok", "two runs, same bytes");
    pd_check_call_free(&in);
    pd_check_call_free(&a);
    pd_check_call_free(&b);
}

/* Whether the definition holds `field` (one compiled against an older SDK may stop short). */
#define DEF_HAS(def, field) \
    ((def)->struct_size >= offsetof(pd_op_def, field) + sizeof((def)->field))

/* The inputs the op writes in place without declaring them strided (bits by input index):
 * the runner refuses a strided view there (a contiguous copy could not be written back), so
 * they get dense inputs in the strided row. *first names the first of them. */
static uint32_t dense_inplace_inputs(const pd_op *op, const char **first)
{
    const pd_op_def *def = pd_op_definition(op);
    *first = NULL;
    if (def == NULL || !DEF_HAS(def, inplace))
        return 0;
    uint32_t flags = DEF_HAS(def, flags) ? def->flags : 0;
    uint32_t strided = DEF_HAS(def, strided_inputs) ? def->strided_inputs : 0;
    if (flags & PD_OP_STRIDED_INPUTS)
        return 0;
    uint32_t mask = 0;
    for (int k = 0; k < PD_MAX_INPLACE && def->inplace[k][0] != NULL; ++k)
        for (int32_t i = 0; i < pd_op_input_count(op) && i < 32; ++i) {
            pd_arg_info info;
            if (pd_op_input_info(op, i, &info) == PD_OK &&
                (strcmp(info.name, def->inplace[k][0]) == 0 ||
                 strcmp(info.decl, def->inplace[k][0]) == 0) &&
                !(strided & PD_INPUT_BIT(i))) {
                mask |= 1u << i;
                if (*first == NULL)
                    *first = info.name;
            }
        }
    return mask;
}

static void check_strided(check_state *s, const pd_op *op, pd_data_type t, const pd_attr *attrs,
                          int32_t n_attrs)
{
    call_args in, dense, a, b;
    char msg[512] = "", note[256] = "";
    const char *inplace = NULL;
    uint32_t dense_mask = dense_inplace_inputs(op, &inplace);
    int32_t others = 0; /* inputs that can take a strided view */
    for (int32_t i = 0; i < pd_op_input_count(op); ++i) {
        pd_arg_info info;
        if (pd_op_input_info(op, i, &info) == PD_OK && !info.is_optional &&
            !(i < 32 && (dense_mask & (1u << i))))
            ++others;
    }
    if (inplace != NULL && others == 0) {
        snprintf(msg, sizeof msg,
                 "in-place input '%s' is not declared strided, so the op only ever gets dense "
                 "inputs (declare strided_inputs to have it checked)",
                 inplace);
        row(s, pd_op_name(op), pd_dtype_name(t), "strided", "skip", msg);
        return;
    }
    if (inplace != NULL)
        snprintf(note, sizeof note, " (in-place input '%s' kept dense: not declared strided)",
                 inplace);
    memset(&dense, 0, sizeof dense);
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    pd_status st = pd_check_inputs_make(s, op, t, small, true, dense_mask, &in);
    if (st == PD_OK)
        st = pd_check_inputs_dense(&in, &dense);
    if (st == PD_OK)
        st = pd_check_run(op, &in, attrs, n_attrs, &a);
    if (st == PD_OK)
        st = pd_check_run(op, &dense, attrs, n_attrs, &b);
    if (st != PD_OK) {
        row(s, pd_op_name(op), pd_dtype_name(t), "strided", "FAIL",
            pd_check_error_line(msg, sizeof msg));
    } else if (!pd_check_outputs_same(&a, &b, msg, sizeof msg)) {
        row(s, pd_op_name(op), pd_dtype_name(t), "strided", "FAIL", msg);
    } else {
        snprintf(msg, sizeof msg, "transposed inputs agree%s", note);
        row(s, pd_op_name(op), pd_dtype_name(t), "strided", "ok", msg);
    }
    pd_check_call_free(&in);
    pd_check_call_free(&dense);
    pd_check_call_free(&a);
    pd_check_call_free(&b);
}

static void check_gradient(check_state *s, const pd_registry *reg, const pd_op *op, pd_data_type t,
                           const pd_attr *attrs, int32_t n_attrs)
{
    const char *name = pd_op_name(op), *dt = pd_dtype_name(t);
    if (!pd_op_grad(op)) {
        row(s, name, dt, "gradcheck", "skip", "no grad op");
        return;
    }
    if (t != PD_FLOAT32 && t != PD_FLOAT64) {
        row(s, name, dt, "gradcheck", "skip",
            pd_dtype_is_floating(t) ? "checked in float32/float64" : "not differentiable");
        return;
    }
    call_args in;
    char detail[900], msg[512];
    pd_gradcheck_options opt = {.struct_size = sizeof opt, .max_elements = 24, .keep_dtype = true};
    pd_gradcheck_report rep;
    pd_status st = pd_check_inputs_make(s, op, t, small, false, 0, &in);
    if (st == PD_OK)
        st = pd_gradcheck(reg, name, in.arg, in.n, attrs, n_attrs, &opt, &rep);
    pd_check_call_free(&in);
    if (st != PD_OK) {
        row(s, name, dt, "gradcheck", "FAIL", pd_check_error_line(msg, sizeof msg));
        return;
    }
    /* the element to show: the first order's, unless only the double grad op is wrong */
    bool show_double = rep.double_grad_checked && !rep.double_grad_passed &&
                       rep.worst.abs_error <= rep.atol + rep.rtol * (rep.worst.numeric < 0
                                                                         ? -rep.worst.numeric
                                                                         : rep.worst.numeric);
    const pd_gradcheck_element *w = show_double ? &rep.double_worst : &rep.worst;
    snprintf(detail, sizeof detail, "%s %s %s[%lld]: analytic %.6g numeric %.6g (rel err %.2g)%s%s",
             rep.passed ? "worst" : "WRONG", w->op, w->input, (long long)w->index, w->analytic,
             w->numeric, w->rel_error, rep.skipped[0] ? "; skipped " : "", rep.skipped);
    row(s, name, dt, rep.double_grad_checked ? "gradcheck x2" : "gradcheck",
        rep.passed ? "ok" : "FAIL", detail);
}

/* In a sanitized child (cmd_check_sanitize.c), names the check about to run on stderr, so
 * that a crash in it can be told. */
static void mark_case(const pd_op *op, const char *dtype, const char *check)
{
    static int child = -1;
    if (child < 0)
        child = getenv("PDEXT_CHECK_CHILD") != NULL;
    if (child) {
        fprintf(stderr, "@case %-20s %-9s %s\n", pd_op_name(op), dtype, check);
        fflush(stderr);
    }
}

static void check_op(check_state *s, const pd_registry *reg, const pd_op *op, const pd_attr *attrs,
                     int32_t n_attrs)
{
    char msg[512], works[128] = "", refused[160] = "";
    bool accepted[N_DTYPES];
    char first_error[512] = "";
    mark_case(op, "-", "dtypes");
    for (int d = 0; d < N_DTYPES; ++d) {
        accepted[d] = runs_at(s, op, candidates[d], small, attrs, n_attrs, msg, sizeof msg, NULL);
        char *list = accepted[d] ? works : refused;
        size_t used = strlen(list), cap = accepted[d] ? sizeof works : sizeof refused;
        snprintf(list + used, cap - used, "%s%s", used ? " " : "", pd_dtype_name(candidates[d]));
        if (!accepted[d] && !first_error[0])
            snprintf(first_error, sizeof first_error, "%s", msg);
    }
    if (!works[0]) {
        snprintf(msg, sizeof msg, "takes none of float32..int64: %s", first_error);
        row(s, pd_op_name(op), "-", "dtypes", "FAIL", msg);
        return;
    }
    snprintf(msg, sizeof msg, "takes %s%s%s", works, refused[0] ? "; refuses " : "", refused);
    row(s, pd_op_name(op), "-", "dtypes", "ok", msg);
    for (int d = 0; d < N_DTYPES; ++d) {
        if (!accepted[d])
            continue;
        const char *dt = pd_dtype_name(candidates[d]);
        mark_case(op, dt, "shapes+infer");
        check_shapes(s, op, candidates[d], attrs, n_attrs);
        mark_case(op, dt, "deterministic");
        check_determinism(s, op, candidates[d], attrs, n_attrs);
        mark_case(op, dt, "strided");
        check_strided(s, op, candidates[d], attrs, n_attrs);
        mark_case(op, dt, "gradcheck");
        check_gradient(s, reg, op, candidates[d], attrs, n_attrs);
    }
}

/* --- attrs and the command ----------------------------------------------------------------- */

/* The attrs op is checked with: --attr values, declared defaults (left to the runner), 0 for
 * int attrs without one. Returns PD_CMD_USAGE (after saying which attr to pass) when an attr
 * can be neither given nor guessed. elems/texts collect what the parsed values point into. */
static int op_attrs(const pd_op *op, const check_args *a, pd_attr *attrs, int32_t *n,
                    pd_cmd_strv *notes, void **elems, char **texts)
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
        if (given) {
            if (!pd_cmd_parse_attr(&attrs[*n], info.name, info.type, given, &elems[*n], &texts[*n]))
                return pd_cmd_usage_error("check", "--attr %s=%s: %s attr '%s' takes %s", info.name,
                                          given, pd_attr_type_name(info.type), info.name,
                                          pd_cmd_attr_syntax(info.type));
            (*n)++;
        } else if (info.has_default) {
            continue;
        } else if (info.type == PD_ATTR_INT || info.type == PD_ATTR_INT64) {
            attrs[(*n)++] = info.type == PD_ATTR_INT ? pd_attr_of_int(info.name, 0)
                                                     : pd_attr_of_int64(info.name, 0);
            char note[256];
            snprintf(note, sizeof note, "%s: attr %s = 0 (no default; --attr %s=VALUE to choose)",
                     pd_op_name(op), info.name, info.name);
            pd_cmd_strv_add(notes, note);
        } else {
            return pd_cmd_usage_error("check",
                                      "op '%s' needs attr '%s' (%s), which has no default; "
                                      "pass --attr %s=VALUE (%s)",
                                      pd_op_name(op), info.name, pd_attr_type_name(info.type),
                                      info.name, pd_cmd_attr_syntax(info.type));
        }
    }
    return PD_CMD_OK;
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
            if (!pd_check_spec_parse(v, &c->specs[c->n_specs++]))
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

/* A --input naming an op (OP.NAME=...) must name a forward op of the module and one of its
 * inputs: a typo would otherwise leave the op checked at the default shapes. */
static int check_spec_target(const input_spec *spec, const pd_registry *reg, const pd_module *m)
{
    if (spec->op[0] == '\0')
        return PD_CMD_OK;
    const pd_op *op = pd_op_find(reg, spec->op);
    if (op == NULL || pd_op_get_kind(op) != PD_OP_FORWARD) {
        pd_cmd_error("check", "--input %s.%s: no forward op '%s' in the module (it has: see below)",
                     spec->op, spec->name, spec->op);
        pd_cmd_print_op_names(stderr, m);
        fputc('\n', stderr);
        return PD_CMD_USAGE;
    }
    pd_cmd_strv names = {0};
    for (int32_t i = 0; i < pd_op_input_count(op); ++i) {
        pd_arg_info info;
        if (pd_op_input_info(op, i, &info) != PD_OK)
            continue;
        if (strcmp(info.name, spec->name) == 0) {
            pd_cmd_strv_free(&names);
            return PD_CMD_OK;
        }
        pd_cmd_strv_add(&names, info.name);
    }
    char list[512] = "";
    for (int32_t i = 0; i < names.n; ++i) {
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", i ? ", " : "", names.v[i]);
    }
    pd_cmd_strv_free(&names);
    return pd_cmd_usage_error("check", "--input %s.%s: op '%s' has no input '%s' (its inputs: %s)",
                              spec->op, spec->name, spec->op, spec->name, list[0] ? list : "none");
}

/* Checks one op; returns a usage status when its attrs cannot be made. */
static int check_one(check_state *s, const pd_registry *reg, const pd_op *op, const check_args *c,
                     pd_cmd_strv *notes)
{
    pd_attr attrs[PD_MAX_ATTRS];
    void *elems[PD_MAX_ATTRS] = {0};
    char *texts[PD_MAX_ATTRS] = {0};
    int32_t n_attrs = 0;
    int rc = op_attrs(op, c, attrs, &n_attrs, notes, elems, texts);
    if (rc == PD_CMD_OK)
        check_op(s, reg, op, attrs, n_attrs);
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
    for (int32_t k = 0; rc == PD_CMD_OK && k < c.n_specs; ++k)
        rc = check_spec_target(&c.specs[k], reg, module);
    check_state s = {c.json, 0, 0, stdout, c.specs, c.n_specs};
    pd_cmd_strv notes = {0};
    if (rc == PD_CMD_OK) {
        if (c.json)
            fprintf(stdout, "{\n  \"rows\": [");
        else
            printf("%-20s %-9s %-14s %-4s %s\n", "op", "dtype", "check", "ok?", "detail");
        for (int32_t i = 0; rc == PD_CMD_OK && i < pd_module_op_count(module); ++i) {
            const pd_op *op = pd_module_op(module, i);
            if (pd_op_get_kind(op) == PD_OP_FORWARD && (!only || op == only))
                rc = check_one(&s, reg, op, &c, &notes);
        }
    }
    if (rc == PD_CMD_OK) {
        if (c.json) {
            fprintf(stdout, "\n  ],\n  \"notes\": [");
            for (int32_t k = 0; k < notes.n; ++k) {
                fprintf(stdout, "%s", k ? ", " : "");
                json_str(stdout, notes.v[k]);
            }
            fprintf(stdout, "],\n  \"failed\": %d,\n  \"ok\": %s\n}\n", s.failed,
                    s.failed ? "false" : "true");
        } else {
            for (int32_t k = 0; k < notes.n; ++k)
                printf("note: %s\n", notes.v[k]);
            printf("%d check%s, %d failed\n", s.rows, s.rows == 1 ? "" : "s", s.failed);
        }
        rc = s.failed ? PD_CMD_FAILED : PD_CMD_OK;
    }
    pd_cmd_strv_free(&notes);
    pd_registry_destroy(reg);
    pd_cmd_load_args_free(&c.load);
    pd_cmd_strv_free(&c.attrs);
    return rc == CHECK_HELP_SHOWN ? PD_CMD_OK : rc;
}
