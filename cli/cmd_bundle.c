/*
 * cmd_bundle.c - `pdext bundle` (and `pdext build --static`): op sources in, a deployable op
 * library out, through the JIT's plan (pd_jit_build_load with PD_JIT_STATIC, PD_JIT_SHARED or
 * PD_JIT_ONNXRUNTIME). This file only reads the command line and prints the result: how sources
 * are compiled, linked, checked and packed (`ld -r`, `objcopy`, `ar`, NAME.h, NAME.pc) is the
 * JIT's (jit/jit_ninja.c, jit/jit_build.c), so a bundle is built exactly like a JIT module,
 * in the module's cache directory.
 */
#include "pdext_cmd.h"

#include <stdlib.h>
#include <string.h>

static const char usage[] =
    "usage: pdext bundle -o OUTPUT [--shared | --static | --onnxruntime [--domain NAME]]\n"
    "                    [--name NAME] [-I DIR] [-D DEF]\n"
    "                    [--cflags FLAGS] [--cxxflags FLAGS] [--cuda-flags FLAGS]\n"
    "                    [--ldflags FLAGS] [--build-dir DIR] [-v] SRC...\n"
    "                    [FILE:FUNC --inputs N [--outputs N] [--out-shape S] [--out-dtype T]\n"
    "                     [--attr DECL] [--op NAME]]...\n"
    "\n"
    "Compiles op sources (.c; .cc .cpp .cxx; .cu) ahead of time into an inference library,\n"
    "with the JIT's pipeline and cache ($PDEXT_CACHE_DIR/NAME, or --build-dir).\n"
    "\n"
    "  -o OUTPUT        libNAME.a: a static bundle (default); with --shared, a shared\n"
    "                   library loadable with pd_module_load / `pdext run`\n"
    "  --shared         build a shared library instead of a static bundle (--static,\n"
    "                   the default; `pdext build --static` is the same as this command)\n"
    "  --onnxruntime    build an ONNX Runtime custom-op library (-o libNAME.so): its one\n"
    "                   exported symbol is RegisterCustomOps, for\n"
    "                   SessionOptions.register_custom_ops_library; every forward op becomes\n"
    "                   an ONNX op of its name in the domain (inputs, outputs and attrs as\n"
    "                   declared; shapes from its inference); libpdext is linked in\n"
    "  --domain NAME    the ONNX domain of an --onnxruntime library's ops (default: pdext)\n"
    "  --name NAME      the bundle's name, a C identifier (default: OUTPUT without its\n"
    "                   directory, 'lib' prefix and extension; '-' and '.' become '_')\n"
    "  -I DIR, -D DEF   include directory / macro for every source\n"
    "  --cflags, --cxxflags, --cuda-flags FLAGS\n"
    "                   extra flags for C / C++ / CUDA sources (words split on spaces;\n"
    "                   repeatable). Defaults: the JIT's (-O3 -fPIC -fvisibility=hidden), with\n"
    "                   no -march: add --cflags -march=... to tune for the deployment CPU.\n"
    "                   -fno-lto is added last: a bundle holds machine code (programs may\n"
    "                   still use -flto)\n"
    "  --ldflags FLAGS  extra flags when linking (a --shared bundle; the check library)\n"
    "  --build-dir DIR  build there instead of the cache directory\n"
    "  -v               print every command run\n"
    "\n"
    "  FILE:FUNC        a MindSpore AOT function (pdext_aot.h) in source FILE (.cc .cpp .c\n"
    "                   .cu), carried by the bundle as op FUNC (or --op NAME): the program\n"
    "                   registers it with the bundle, with no compiler and no dlopen, and\n"
    "                   links libpdext_aot and libpdext (shared); an --onnxruntime\n"
    "                   library carries the adapter inside. The options after it\n"
    "                   describe it: --inputs N (required), --outputs N, --out-shape 4,5 and\n"
    "                   --out-dtype float32 per output (else FUNCInferShape / FUNCInferType,\n"
    "                   else input 0's), --attr 'scale: float' per attr (read with\n"
    "                   MindSpore's coercions). Old-ABI kernels: --cxxflags\n"
    "                   -D_GLIBCXX_USE_CXX11_ABI=0\n"
    "\n"
    "Before anything is written, the ops are loaded once to check them: a bundle without ops\n"
    "or with ops the runtime refuses fails here, with the loader's message.\n"
    "A static bundle libNAME.a comes with NAME.h, which declares the one call a program makes,\n"
    "pd_bundle_register_NAME(reg, &module), and NAME.pc for pkg-config; both name every\n"
    "library the program needs. Link the archive with libpdext (static or shared) in any\n"
    "order; no --whole-archive is needed.\n"
    "Environment: CC, CXX, NVCC / CUDA_HOME, LD, OBJCOPY, AR choose the tools;\n"
    "PDEXT_COMPILER_LAUNCHER (or CMAKE_<LANG>_COMPILER_LAUNCHER) puts ccache in front.\n";

/* "dir/libmy-ops.v1.a" -> "my_ops" (malloc'd). */
static char *name_from_output(const char *output)
{
    const char *base = strrchr(output, '/') ? strrchr(output, '/') + 1 : output;
    if (strncmp(base, "lib", 3) == 0 && base[3] != '\0' && base[3] != '.')
        base += 3;
    char *name = pd_cmd_xstrdup(base);
    name[strcspn(name, ".")] = '\0';
    for (char *p = name; *p; ++p)
        if (*p == '-')
            *p = '_';
    return name;
}

int pd_cmd_bundle_build(const char *cmd, pd_cmd_load_args *a, const char *output,
                        pd_jit_output_kind kind, const char *domain, const char *aot_source)
{
    static const char *const kinds[] = {"shared", "static", "ONNX Runtime"};
    char *derived = a->name ? NULL : name_from_output(output);
    pd_jit_options o;
    pd_cmd_progress progress;
    pd_cmd_jit_options(a, &o);
    o.name = a->name ? a->name : derived;
    o.output = output;
    o.output_kind = kind;
    o.onnxruntime_domain = domain;
    o.portable = true; /* a library for other machines */
    pd_jit_source aot = {"pd_aot_functions.c", aot_source};
    if (aot_source) {
        o.inline_sources = &aot;
        o.n_inline_sources = 1;
    }
    pd_cmd_progress_init(&progress, a->verbose);
    o.log = pd_cmd_progress_log;
    o.log_user = &progress;
    pd_registry *reg = NULL;
    pd_module *m = NULL;
    pd_status st = pd_registry_create(&reg);
    if (st == PD_OK)
        st = pd_jit_build_load(reg, &o, &m);
    pd_cmd_progress_end(&progress);
    int rc = PD_CMD_OK;
    if (st != PD_OK) {
        rc = pd_cmd_fail(cmd);
    } else {
        int32_t n = pd_module_op_count(m);
        printf("%s: %s bundle '%s' with %d op%s: ", output, kinds[kind], o.name, (int)n,
               n == 1 ? "" : "s");
        pd_cmd_print_op_names(stdout, m);
        putchar('\n');
        if (kind == PD_JIT_ONNXRUNTIME)
            printf("  ONNX domain '%s' (forward ops); load it with "
                   "SessionOptions.register_custom_ops_library\n",
                   domain ? domain : "pdext");
        if (kind == PD_JIT_STATIC) {
            const char *slash = strrchr(output, '/');
            int dir_len = slash ? (int)(slash - output) : 1;
            const char *dir = slash ? output : ".";
            printf("  register them with pd_bundle_register_%s(reg, &module) from %.*s/%s.h\n"
                   "  (pkg-config file: %.*s/%s.pc)\n",
                   o.name, dir_len, dir, o.name, dir_len, dir, o.name);
        }
    }
    pd_registry_destroy(reg);
    free(derived);
    return rc;
}

int pd_cmd_bundle(int argc, char **argv)
{
    pd_cmd_load_args a = {0};
    pd_cmd_bundle_aot *aot = pd_cmd_xmalloc(sizeof *aot);
    aot->n = 0;
    const char *output = NULL, *domain = NULL;
    pd_jit_output_kind kind = PD_JIT_STATIC;
    bool bad = false;
    int rc = PD_CMD_OK, took;
    for (int i = 1; i < argc && rc == PD_CMD_OK; ++i) {
        const char *v;
        if ((took = pd_cmd_bundle_aot_arg(aot, argc, argv, &i)) != 0) {
            rc = took < 0 ? PD_CMD_USAGE : PD_CMD_OK;
        } else if (strcmp(argv[i], "--shared") == 0) {
            kind = PD_JIT_SHARED;
        } else if (strcmp(argv[i], "--static") == 0) {
            kind = PD_JIT_STATIC;
        } else if (strcmp(argv[i], "--onnxruntime") == 0) {
            kind = PD_JIT_ONNXRUNTIME;
        } else if ((v = pd_cmd_option("bundle", argc, argv, &i, "--domain", NULL, &bad)) != NULL) {
            domain = v;
        } else if ((v = pd_cmd_option("bundle", argc, argv, &i, "--define", "-D", &bad)) != NULL) {
            char *def = pd_cmd_xmalloc(strlen(v) + 3);
            snprintf(def, strlen(v) + 3, "-D%s", v);
            pd_cmd_strv_add(&a.cflags, def);
            pd_cmd_strv_add(&a.cxxflags, def);
            pd_cmd_strv_add(&a.cuda_flags, def);
            free(def);
        } else if (bad) {
            rc = PD_CMD_USAGE;
        } else {
            rc = pd_cmd_output_and_sources("bundle", usage, &a, argc, argv, &i, &output);
        }
    }
    if (rc == PD_CMD_HELP_SHOWN) {
        pd_cmd_load_args_free(&a);
        pd_cmd_bundle_aot_free(aot);
        free(aot);
        return PD_CMD_OK;
    }
    if (rc == PD_CMD_OK && (output == NULL || *output == '\0'))
        rc = pd_cmd_usage_error("bundle", "no output: give -o libNAME.a (or -o libNAME.so "
                                          "--shared)");
    if (rc == PD_CMD_OK && a.inputs.n == 0 && aot->n == 0)
        rc = pd_cmd_usage_error("bundle", "no sources: give the op sources to bundle (.c .cc "
                                          ".cpp .cxx .cu) or AOT functions (add.cc:CustomAdd)");
    if (rc == PD_CMD_OK && domain != NULL && kind != PD_JIT_ONNXRUNTIME)
        rc = pd_cmd_usage_error("bundle", "--domain names the ONNX domain of an --onnxruntime "
                                          "library; add --onnxruntime");
    char *aot_source = NULL;
    if (rc == PD_CMD_OK && aot->n > 0)
        aot_source = pd_cmd_bundle_aot_source(aot, &a, kind == PD_JIT_ONNXRUNTIME, &rc);
    if (rc == PD_CMD_OK)
        rc = pd_cmd_bundle_build("bundle", &a, output, kind, domain, aot_source);
    free(aot_source);
    pd_cmd_load_args_free(&a);
    pd_cmd_bundle_aot_free(aot);
    free(aot);
    return rc;
}
