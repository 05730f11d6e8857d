/*
 * pdext_cmd.h - what the files of the `pdext` command share: one entry point per subcommand,
 * the command-line helpers (options, string lists), the module loader common to build, list
 * and run (sources through the JIT, a .so through pd_module_load) and the build progress line.
 *
 * Exit statuses: 0 success, 1 failure (the message is on stderr), 2 usage error.
 */
#ifndef PDEXT_CMD_H
#define PDEXT_CMD_H

#include "pdext.h"
#include "pdext_jit.h"

#include <stdio.h>

#define PD_CMD_OK 0
#define PD_CMD_FAILED 1
#define PD_CMD_USAGE 2
/* Not an exit status: -h/--help was given and the usage printed; the command stops with
 * PD_CMD_OK. */
#define PD_CMD_HELP_SHOWN (-1)

/* Subcommands: argv[0] is the subcommand's name, the options follow. */
int pd_cmd_build(int argc, char **argv);
int pd_cmd_list(int argc, char **argv);
int pd_cmd_run(int argc, char **argv);
int pd_cmd_demo(int argc, char **argv);
int pd_cmd_bundle(int argc, char **argv);
int pd_cmd_check(int argc, char **argv);
/* `pdext check --sanitize` (cmd_check_sanitize.c): the check in a sanitized child. */
int pd_cmd_check_sanitized(int argc, char **argv);
int pd_cmd_new(int argc, char **argv);
/* `pdext explain LIB.so` (cmd_explain.c). */
int pd_cmd_explain(int argc, char **argv);

/* --- cmd_signal.c: Ctrl-C during a build ------------------------------------------------- */

/* SIGINT, SIGTERM and SIGHUP stop the running build (pd_jit_interrupt) instead of ending the
 * command at once; with no build running they act as usual. */
void pd_cmd_signals_install(void);
/* Returns `code`, or, when a signal stopped a build, dies of that signal. */
int pd_cmd_signals_finish(int code);

/* --- cmd_args.c: messages and options ---------------------------------------------------- */

/* "pdext <cmd>: <message>" on stderr ("pdext: <message>" when cmd is NULL). */
void pd_cmd_error(const char *cmd, const char *fmt, ...) PD_PRINTF(2, 3);
/* Prints "pdext <what>: <pd_last_error()>" and returns PD_CMD_FAILED. */
int pd_cmd_fail(const char *what);
/* Prints "pdext <cmd>: <message>" and a hint to --help; returns PD_CMD_USAGE. */
int pd_cmd_usage_error(const char *cmd, const char *fmt, ...) PD_PRINTF(2, 3);

/* A list of malloc'd strings. Allocation failure aborts the command (it is a program, not a
 * library: there is nothing better to do). */
typedef struct pd_cmd_strv {
    char **v;
    int32_t n, cap;
} pd_cmd_strv;

void pd_cmd_strv_add(pd_cmd_strv *sv, const char *s);
/* Adds each whitespace-separated word of `s` ("-O3 -DX=1"). */
void pd_cmd_strv_add_words(pd_cmd_strv *sv, const char *s);
void pd_cmd_strv_free(pd_cmd_strv *sv);
void *pd_cmd_xmalloc(size_t n);
char *pd_cmd_xstrdup(const char *s);

/* True, after printing `usage` to stdout, when `arg` is -h or --help. */
bool pd_cmd_help(const char *arg, const char *usage);

/* Matches argv[*i] against `--long VALUE`, `--long=VALUE` and, when `shrt` is not NULL,
 * `-s VALUE` / `-sVALUE`. Returns the value and advances *i past it, or NULL when argv[*i] is
 * another option. A missing value sets *bad (after printing a usage error for `cmd`). */
const char *pd_cmd_option(const char *cmd, int argc, char **argv, int *i, const char *lng,
                          const char *shrt, bool *bad);

/* --- cmd_load.c: sources or a library into a registry --------------------------------------- */

/* What build, list and run take to reach a module. */
typedef struct pd_cmd_load_args {
    pd_cmd_strv inputs;       /* positional: sources, or one shared library */
    pd_cmd_strv include_dirs; /* -I */
    pd_cmd_strv cflags, cxxflags, cuda_flags, ldflags;
    const char *name;      /* --name: module name (default: derived from the sources) */
    const char *build_dir; /* --build-dir */
    bool verbose;          /* -v */
    pd_cmd_strv owned;     /* strings the fields above point into */
} pd_cmd_load_args;

/* Consumes one JIT option at argv[*i] (-I, --cflags, --cxxflags, --cuda-flags, --ldflags,
 * --name, --build-dir, -v). Returns 1 if it did, 0 if argv[*i] is something else, -1 after a
 * usage error. */
int pd_cmd_load_option(const char *cmd, pd_cmd_load_args *a, int argc, char **argv, int *i);
void pd_cmd_load_args_free(pd_cmd_load_args *a);
/* The arguments `pdext build` and `pdext bundle` share, at argv[*i] (after the command's own
 * flags): -h/--help (prints `usage`), -o/--output OUTPUT into *output, the JIT options of
 * pd_cmd_load_option, and a source into a->inputs. Returns PD_CMD_OK, PD_CMD_HELP_SHOWN, or
 * PD_CMD_USAGE after a usage error (an unknown option included). */
int pd_cmd_output_and_sources(const char *cmd, const char *usage, pd_cmd_load_args *a, int argc,
                              char **argv, int *i, const char **output);
/* True when `path` names a shared library (".so" or ".so.N") rather than a source. */
bool pd_cmd_is_library(const char *path);
/* Fills JIT options from the arguments: --name as given (the library checks it), else a
 * name derived from the sources (kept in a->owned). The strings stay owned by `a`. */
void pd_cmd_jit_options(pd_cmd_load_args *a, pd_jit_options *o);
/* The module's op names, sorted, joined by ", ". */
void pd_cmd_print_op_names(FILE *fp, const pd_module *m);
/* Builds a->inputs ahead of time into `output` through the JIT (pd_jit_build_load): a
 * static bundle, a shared library or an ONNX Runtime library (`kind`; `domain`, may be NULL,
 * the latter's custom-op domain); the name is --name or derived from `output` ("libmy-ops.a"
 * -> "my_ops"). Prints what was built; returns an exit status. `pdext bundle` and `pdext build
 * --static`. */
int pd_cmd_bundle_build(const char *cmd, pd_cmd_load_args *a, const char *output,
                        pd_jit_output_kind kind, const char *domain, const char *aot_source);
/* Loads a->inputs into `reg`: one .so through pd_module_load, sources through pd_jit_load
 * with the progress line. Prints the error (naming `cmd`) and returns PD_CMD_FAILED or
 * PD_CMD_USAGE on failure. */
int pd_cmd_load(const char *cmd, pd_registry *reg, pd_cmd_load_args *a, pd_module **out);

/* --- cmd_aot.c: MindSpore AOT functions (FILE:FUNC) ------------------------------------------ */

/* True when `arg` is FILE:FUNC, FILE a library (.so) or a source (.cc .cpp .cxx .c .cu). */
bool pd_cmd_is_aot_spec(const char *arg);
/* What run and list give the adapter besides the spec. */
typedef struct pd_cmd_aot_args {
    const char *name;   /* --op: the op's name (NULL: the function's) */
    int32_t n_inputs;   /* the number of --input options */
    int32_t n_outputs;  /* --outputs N (0: from --out-shape / --out-dtype, at least 1) */
    pd_cmd_strv *attrs; /* NAME=VALUE, untyped (flat lists lose their brackets) */
    pd_cmd_strv *out_shapes, *out_dtypes; /* per output, in order */
    const char *build_dir;                /* --build-dir for a source */
} pd_cmd_aot_args;
/* Registers the AOT function `spec` in reg as one op (*out: its module); prints the error
 * naming `cmd` and returns an exit status. */
int pd_cmd_aot_load(const char *cmd, pd_registry *reg, const char *spec, pd_cmd_aot_args *a,
                    pd_module **out);
/* --- cmd_bundle_aot.c: MindSpore AOT functions in `pdext bundle` ---------------------------- */

#define PD_CMD_MAX_AOT 64
/* One FILE:FUNC of `pdext bundle` and the options after it. */
typedef struct pd_cmd_aot_fn {
    const char *spec; /* FILE:FUNC */
    const char *op;   /* --op NAME (NULL: FUNC) */
    int32_t n_inputs; /* --inputs N (-1: not given) */
    int32_t n_outputs;
    pd_cmd_strv out_shapes, out_dtypes, attrs; /* attrs: declarations "scale: float" */
} pd_cmd_aot_fn;
typedef struct pd_cmd_bundle_aot {
    pd_cmd_aot_fn fns[PD_CMD_MAX_AOT];
    int32_t n;
} pd_cmd_bundle_aot;
/* Consumes a FILE:FUNC or one of its options at argv[*i]: 1 if it did, 0 if argv[*i] is
 * something else, -1 after a usage error. */
int pd_cmd_bundle_aot_arg(pd_cmd_bundle_aot *b, int argc, char **argv, int *i);
/* The bundle's generated source for its AOT functions (malloc'd); adds their sources to
 * a->inputs and libpdext_aot to a->ldflags (for an ONNX Runtime library, `ort`, only as
 * needed: the library takes the adapter from libpdext_onnxruntime.a, and libpdext_aot serves
 * just the check of its objects). NULL with *rc set after a usage error. */
char *pd_cmd_bundle_aot_source(const pd_cmd_bundle_aot *b, pd_cmd_load_args *a, bool ort, int *rc);
void pd_cmd_bundle_aot_free(pd_cmd_bundle_aot *b);

/* The AOT facts of op (library, function, ABI, Init / InferShape / InferType), if it is one. */
void pd_cmd_aot_print_info(const pd_op *op);

/* --- cmd_attr.c: --attr values -------------------------------------------------------------- */

/* Parses `value` as an attr of `type` named `name` into *a (which points into `value`, and
 * into *elems / *text for vectors: malloc'd, the caller frees both). False if the text does
 * not fit the type. */
bool pd_cmd_parse_attr(pd_attr *a, const char *name, pd_attr_type type, const char *value,
                       void **elems, char **text);
/* What a value of `type` looks like, for messages ("true, false, 1 or 0"). */
const char *pd_cmd_attr_syntax(pd_attr_type type);

/* --- cmd_progress.c: the build's log lines ---------------------------------------------------- */

/* With verbose every line goes to stderr; otherwise, on a terminal, the latest progress line
 * rewrites one status line (\r), and off a terminal nothing is shown. */
typedef struct pd_cmd_progress {
    bool verbose;
    bool tty;
    bool shown; /* a status line is on screen and must be cleared */
} pd_cmd_progress;

void pd_cmd_progress_init(pd_cmd_progress *p, bool verbose);
/* A pd_jit_log_fn; user is a pd_cmd_progress. */
void pd_cmd_progress_log(void *user, const char *line);
/* Clears the status line, if any. */
void pd_cmd_progress_end(pd_cmd_progress *p);

/* --- cmd_args.c: dims and directories ------------------------------------------------------- */

/* "4,5" (or "" for a scalar) in the first `len` bytes of text into *ndim and shape[]; false
 * if it is not one: a negative dim, one past int64, more than PD_MAX_DIMS, a stray character. */
bool pd_cmd_parse_dims(const char *text, size_t len, int32_t *ndim, int64_t *shape);
/* mkdir -p: false (errno set) if a directory on the way cannot be made. */
bool pd_cmd_make_dirs(const char *dir);

/* --- cmd_print.c: showing tensors ------------------------------------------------------------ */

/* "[2, 3]" into buf. */
const char *pd_cmd_shape_str(const pd_tensor *t, char *buf, size_t cap);
/* Up to `max` elements as numbers ("-1 0 2.5 ..."), for the demo and messages. */
void pd_cmd_print_values(FILE *fp, const pd_tensor *t, int64_t max);

#endif /* PDEXT_CMD_H */
