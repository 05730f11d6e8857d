/*
 * cmd_build.c - `pdext build -o LIB.so SRC...`: the JIT pipeline ahead of time, into a named
 * shared library that was loaded once to check it (pd_jit_build_load). With --static it is
 * `pdext bundle` (cmd_bundle.c): the same static bundle, header and .pc.
 */
#include "pdext_cmd.h"

#include <string.h>

static const char usage[] =
    "usage: pdext build -o LIB.so SRC... [-I DIR] [--cflags FLAGS] [--cxxflags FLAGS]\n"
    "                   [--cuda-flags FLAGS] [--ldflags FLAGS] [--name NAME]\n"
    "                   [--build-dir DIR] [--static] [-v]\n"
    "\n"
    "Compiles the sources with Ninja in the module's cache directory, loads the library once\n"
    "to check it (a failure prints the loader's message and writes nothing) and places it\n"
    "at LIB.so (atomically). --static -o libNAME.a makes a static bundle, exactly as\n"
    "`pdext bundle -o libNAME.a` does (see pdext bundle --help). -v shows Ninja's progress\n"
    "and the compiler commands.\n";

int pd_cmd_build(int argc, char **argv)
{
    pd_cmd_load_args a = {0};
    const char *output = NULL;
    bool is_static = false;
    int rc = PD_CMD_OK;
    for (int i = 1; i < argc && rc == PD_CMD_OK; ++i) {
        if (strcmp(argv[i], "--static") == 0) {
            is_static = true;
        } else {
            rc = pd_cmd_output_and_sources("build", usage, &a, argc, argv, &i, &output);
        }
    }
    if (rc == PD_CMD_HELP_SHOWN) {
        pd_cmd_load_args_free(&a);
        return PD_CMD_OK;
    }
    if (rc == PD_CMD_OK && output == NULL)
        rc = pd_cmd_usage_error("build", "missing -o LIB.so (where to put the library)");
    if (rc == PD_CMD_OK && a.inputs.n == 0)
        rc = pd_cmd_usage_error("build", "no source files given");
    for (int32_t k = 0; rc == PD_CMD_OK && k < a.inputs.n; ++k)
        if (pd_cmd_is_library(a.inputs.v[k]))
            rc = pd_cmd_usage_error("build", "'%s' is a library; build takes sources",
                                    a.inputs.v[k]);
    if (rc == PD_CMD_OK && is_static) {
        rc = pd_cmd_bundle_build("build", &a, output, PD_JIT_STATIC, NULL, NULL);
    } else if (rc == PD_CMD_OK) {
        pd_jit_options o;
        pd_cmd_progress progress;
        pd_cmd_jit_options(&a, &o);
        pd_cmd_progress_init(&progress, a.verbose);
        o.log = pd_cmd_progress_log;
        o.log_user = &progress;
        o.output = output;
        o.output_kind = PD_JIT_SHARED;
        pd_registry *reg = NULL;
        pd_module *m = NULL;
        pd_status st = pd_registry_create(&reg);
        if (st == PD_OK)
            st = pd_jit_build_load(reg, &o, &m);
        pd_cmd_progress_end(&progress);
        if (st != PD_OK) {
            rc = pd_cmd_fail("build");
        } else {
            int32_t n = pd_module_op_count(m);
            printf("built %s: module '%s' with %d op%s: ", output, o.name, (int)n,
                   n == 1 ? "" : "s");
            pd_cmd_print_op_names(stdout, m);
            putchar('\n');
        }
        pd_registry_destroy(reg);
    }
    pd_cmd_load_args_free(&a);
    return rc;
}
