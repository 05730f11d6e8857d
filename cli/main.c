/*
 * main.c - the `pdext` command: global options (--help, --version) and dispatch to one
 * subcommand per file (cmd_build.c, cmd_bundle.c, cmd_list.c, cmd_run.c, cmd_demo.c).
 */
#include "pdext_cmd.h"

#include <string.h>

static const char usage[] =
    "usage: pdext <command> [options]\n"
    "\n"
    "Build, inspect and run custom tensor operators written against extension.h.\n"
    "\n"
    "commands:\n"
    "  build -o LIB.so SRC... [-I DIR] [--cflags FLAGS] [-v]\n"
    "        compile and link sources ahead of time into a loadable op library, checked\n"
    "        by loading it (--static -o libNAME.a: a static bundle, as `pdext bundle`)\n"
    "  list SRC...|LIB.so\n"
    "        every op with its inputs, outputs, attrs (with types) and grad ops\n"
    "  run SRC...|LIB.so --op NAME --input NAME=FILE.npy[|FILE.npz:MEMBER] ...\n"
    "        [--attr NAME=VALUE ...] [--out DIR]\n"
    "        run one op on .npy inputs, write each output as DIR/<output name>.npy\n"
    "  demo [-v]\n"
    "        JIT-build examples/relu and examples/concat, run them forward and backward,\n"
    "        check the results and show cold and warm load times\n"
    "  bundle -o libNAME.a SRC...\n"
    "        a static inference library with NAME.h and NAME.pc, built by the JIT's\n"
    "        pipeline (see pdext bundle --help)\n"
    "  check SRC...|LIB.so [--op NAME] [--attr NAME=VALUE ...] [--json]\n"
    "        is each op right? dtypes, shapes, infer, determinism, strided inputs, gradcheck\n"
    "  explain LIB.so\n"
    "        can this runtime load the library, and if not why; its ABI, SDK, ops and\n"
    "        dtypes, GPU architectures, needed libraries and undefined symbols\n"
    "  new NAME [--lang c|cuda|paddle|aot] [--dir DIR]\n"
    "        write a ready-to-build op (forward, backward, infer, README, check.sh) in C\n"
    "        (the default), C with a CUDA half, Paddle C++ or a MindSpore AOT kernel\n"
    "\n"
    "options of build, list and run when given sources (JIT):\n"
    "  -I DIR              extra include directory (repeatable)\n"
    "  --cflags FLAGS      extra C flags (one argument, split at spaces; repeatable)\n"
    "  --cxxflags FLAGS    extra C++ flags      --cuda-flags FLAGS  extra nvcc flags\n"
    "  --ldflags FLAGS     extra link flags     --name NAME         module name (what the\n"
    "                      library allows: 1-200 letters, digits, '_', '-', '.')\n"
    "  --build-dir DIR     build here instead of the cache ($PDEXT_CACHE_DIR/<name>)\n"
    "  -v, --verbose       show Ninja's progress and the compiler commands on stderr\n"
    "\n"
    "global options:\n"
    "  -h, --help          this text (pdext <command> --help: the command's own)\n"
    "  --version           SDK version and module ABI\n"
    "\n"
    "exit status: 0 success, 1 failure (message on stderr), 2 usage error; Ctrl-C during a\n"
    "build stops its compilers, publishes nothing and ends the command by SIGINT (130).\n";

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(int, char **);
    } commands[] = {
        {"build", pd_cmd_build}, {"list", pd_cmd_list},       {"run", pd_cmd_run},
        {"demo", pd_cmd_demo},   {"bundle", pd_cmd_bundle},   {"check", pd_cmd_check},
        {"new", pd_cmd_new},     {"explain", pd_cmd_explain},
    };
    if (argc < 2) {
        fputs(usage, stderr);
        return PD_CMD_USAGE;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "help") == 0) {
        fputs(usage, stdout);
        return PD_CMD_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("pdext %s (library %s), module ABI %d.%d\n", PD_VERSION_STRING, pd_version(),
               PD_ABI_MAJOR, PD_ABI_MINOR);
        return PD_CMD_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; ++i)
        if (strcmp(cmd, commands[i].name) == 0) {
            pd_cmd_signals_install();
            return pd_cmd_signals_finish(commands[i].fn(argc - 1, argv + 1));
        }
    pd_cmd_error(NULL,
                 "unknown command '%s' (commands: build, list, run, demo, bundle, check, explain, "
                 "new; see "
                 "pdext --help)",
                 cmd);
    return PD_CMD_USAGE;
}
