/*
 * cmd_list.c - `pdext list SRC...|LIB.so`: what a module offers. For each op (forward ops
 * first, then grad and double grad ops, each group in table order): its registered name,
 * inputs and outputs (vector / optional marked), attrs with their Paddle type spellings and
 * defaults, and the grad ops registered for it. Everything comes from the runtime's parse of
 * the declarations (pd_op_*_info), never re-parsed here.
 */
#include "pdext_cmd.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pdext list SRC...|LIB.so [JIT options: -I DIR --cflags FLAGS ... -v]\n"
    "       pdext list FILE:FUNC [--inputs N]\n"
    "\n"
    "Loads the module (JIT-building sources if needed) and lists every op with its inputs,\n"
    "outputs, attrs (with types) and grad ops. For a MindSpore AOT function (lib.so:Func,\n"
    "add.cc:Func) it shows what pdext learned: its library, string ABI, and whether Init,\n"
    "InferShape and InferType were found (registered with N inputs, default 1).\n";

/* "X (vector)" for "X@VECTOR", "Y (optional)" for "Y@OPTIONAL", "Out@GRAD" as is. */
static void print_arg(const pd_arg_info *info)
{
    printf("%s%s%s", info->name, info->is_vector ? " (vector)" : "",
           info->is_optional ? " (optional)" : "");
}

static void print_args(const char *label, const pd_op *op, int32_t n,
                       pd_status (*get)(const pd_op *, int32_t, pd_arg_info *))
{
    printf("  %-8s ", label);
    if (n == 0)
        printf("(none)");
    for (int32_t i = 0; i < n; ++i) {
        pd_arg_info info;
        if (get(op, i, &info) != PD_OK)
            continue;
        if (i)
            printf(", ");
        print_arg(&info);
    }
    printf("\n");
}

static void print_op(const pd_op *op)
{
    const pd_op_def *def = pd_op_definition(op);
    pd_op_kind kind = pd_op_get_kind(op);
    printf("%s", pd_op_name(op));
    if (kind != PD_OP_FORWARD)
        printf("  (%s of %s)", kind == PD_OP_GRAD ? "grad" : "double grad", def->name);
    printf("\n");
    print_args("inputs:", op, pd_op_input_count(op), pd_op_input_info);
    print_args("outputs:", op, pd_op_output_count(op), pd_op_output_info);
    printf("  %-8s ", "attrs:");
    int32_t n_attrs = pd_op_attr_count(op);
    if (n_attrs == 0)
        printf("(none)");
    for (int32_t i = 0; i < n_attrs; ++i) {
        pd_attr_info info;
        if (pd_op_attr_info(op, i, &info) != PD_OK)
            continue;
        printf("%s%s: %s", i ? ", " : "", info.name, pd_attr_type_name(info.type));
        if (info.has_default)
            printf(" = %s", info.default_text);
    }
    printf("\n");
    pd_cmd_aot_print_info(op);
    printf("  %-8s ", "grad:");
    const pd_op *g = pd_op_grad(op);
    if (g == NULL)
        printf("(none)");
    for (int k = 0; g != NULL; g = pd_op_grad(g), ++k)
        printf("%s%s", k ? ", " : "", pd_op_name(g));
    printf("\n");
}

int pd_cmd_list(int argc, char **argv)
{
    pd_cmd_load_args a = {0};
    int rc = PD_CMD_OK;
    int32_t n_inputs = 1;
    for (int i = 1; i < argc && rc == PD_CMD_OK; ++i) {
        int took;
        bool bad = false;
        const char *v;
        if (pd_cmd_help(argv[i], usage)) {
            pd_cmd_load_args_free(&a);
            return PD_CMD_OK;
        } else if ((v = pd_cmd_option("list", argc, argv, &i, "--inputs", NULL, &bad)) != NULL) {
            n_inputs = atoi(v);
            if (n_inputs < 0 || n_inputs > PD_MAX_INPUTS)
                rc = pd_cmd_usage_error("list", "--inputs '%s' is not 0 to %d", v, PD_MAX_INPUTS);
        } else if (bad || (took = pd_cmd_load_option("list", &a, argc, argv, &i)) < 0) {
            rc = PD_CMD_USAGE;
        } else if (took == 0 && argv[i][0] == '-') {
            rc = pd_cmd_usage_error("list", "unknown option '%s'", argv[i]);
        } else if (took == 0) {
            pd_cmd_strv_add(&a.inputs, argv[i]);
        }
    }
    pd_registry *reg = NULL;
    pd_module *module = NULL;
    if (rc == PD_CMD_OK && pd_registry_create(&reg) != PD_OK)
        rc = pd_cmd_fail("list");
    if (rc == PD_CMD_OK && a.inputs.n == 1 && pd_cmd_is_aot_spec(a.inputs.v[0])) {
        pd_cmd_strv none = {0};
        pd_cmd_aot_args aot = {NULL, n_inputs, 0, &none, &none, &none, a.build_dir};
        rc = pd_cmd_aot_load("list", reg, a.inputs.v[0], &aot, &module);
    } else if (rc == PD_CMD_OK)
        rc = pd_cmd_load("list", reg, &a, &module);
    if (rc == PD_CMD_OK) {
        printf("%s: %d op%s\n", pd_module_path(module), (int)pd_module_op_count(module),
               pd_module_op_count(module) == 1 ? "" : "s");
        /* Forward ops first, then grad and double grad ops, each group in table order. */
        for (int kind = PD_OP_FORWARD; kind <= PD_OP_DOUBLE_GRAD; ++kind)
            for (int32_t i = 0; i < pd_module_op_count(module); ++i)
                if ((int)pd_op_get_kind(pd_module_op(module, i)) == kind)
                    print_op(pd_module_op(module, i));
    }
    pd_registry_destroy(reg);
    pd_cmd_load_args_free(&a);
    return rc;
}
