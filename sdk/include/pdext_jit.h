/*
 * pdext_jit.h - the JIT build helper: op sources in, a loaded module (or a deployable
 * library) out.
 *
 * pd_jit_load writes a build.ninja into the module's build directory (default
 * $PDEXT_CACHE_DIR/<name>, else ${XDG_CACHE_HOME:-$HOME/.cache}/pdext/<name>), lets Ninja
 * compile each source with cc / c++ / nvcc (by extension: .c; .cc .cpp .cxx; .cu) into one
 * shared library under a content-addressed name, and loads it with pd_module_load. Sources
 * are files or text (pd_jit_source, as torch's load_inline): a text is written once into the
 * build directory under a name holding its content hash, so the same text is a warm load
 * and a changed text a rebuild.
 *
 * pd_jit_build runs the same plan ahead of time into a named file: a shared module, or a
 * static bundle (PD_JIT_STATIC: the objects, plus a registration object, `ld -r`-linked
 * into one relocatable object whose hidden symbols `objcopy` makes local, in an archive;
 * NAME.h and NAME.pc are written beside it, see pdext_bundle.h). Both test-load what they
 * built and fail with the loader's message rather than hand out a library it would refuse.
 *
 * The cache key covers the sources, every header they include (from depfiles), the flags, the
 * SDK version, the compilers' identities and, for host-specific code generation, the CPU. A
 * warm load of an unchanged module runs no subprocess at all. Builds are safe against
 * concurrent processes (kernel-released file locks) and against being killed at any moment
 * (results are published by atomic rename).
 *
 * Default flags (the flags in pd_jit_options come after them and so win):
 *   C      -O3 -march=native -fPIC -fvisibility=hidden -std=gnu11
 *   C++    -O3 -march=native -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -std=c++20
 *   CUDA   -O3 -std=c++20 -Xcompiler=-fPIC,-fvisibility=hidden,-O3,-march=native and
 *          -gencode for each architecture of PDEXT_CUDA_ARCH
 *   link   -lm (C++ and CUDA modules link with c++, hence libstdc++), CUDA: -lcudart
 * -march=native is left out (code for the compiler's baseline ISA) for static bundles, with
 * opts.portable, and when PDEXT_JIT_PORTABLE=1: what valgrind needs (it cannot decode
 * AVX-512) and what a library for other machines needs. With -march=native the CPU's identity
 * joins the cache key. Static bundles also get -fno-lto after the user's flags: `ld -r` and
 * `objcopy` need machine code (the program that links the bundle may still use -flto).
 * Debugging a module: pass cflags {"-O0", "-g"} (or `pdext ... --cflags "-O0 -g"`) and set
 * PDEXT_JIT_PORTABLE=1 for valgrind; `verbose` logs every compiler command; the build
 * directory (pd_jit_build_dir) keeps build.ninja, the objects and depfiles for inspection.
 *
 * Environment: CC, CXX, NVCC / CUDA_HOME choose compilers; AR, LD, OBJCOPY the binutils of
 * static bundles; PDEXT_COMPILER_LAUNCHER (e.g. ccache or distcc) is put in front of every
 * compile, else CMAKE_C_COMPILER_LAUNCHER / CMAKE_CXX_COMPILER_LAUNCHER /
 * CMAKE_CUDA_COMPILER_LAUNCHER per language (CMake's convention); a launcher does not change
 * the cache key, and one that is not an executable program fails the build naming it;
 * PDEXT_CACHE_DIR moves the cache; PDEXT_CUDA_ARCH overrides the CUDA architecture list: it
 * takes "75;80;90" (or "sm_75,8.6", "native", "all"; default 75;80;86;89;90 plus PTX of the
 * last); PDEXT_INCLUDE_DIR overrides where the SDK headers are found (default: beside the
 * libpdext_jit.so in use, <prefix>/include/pdext, else the configured install or source
 * tree; the same for hosts that link libpdext statically, so both share cache entries);
 * PDEXT_NINJA names the ninja program (default: ninja in PATH); PDEXT_JIT_PORTABLE=1 (see
 * above).
 *
 * Compilers: a C++ or CUDA module built by a C++ compiler of another family or major version
 * than the one that built libpdext gets a warning through the log callback (as Paddle's GCC
 * check does): C++ types crossing into host C++ code follow the C++ ABI of that compiler's
 * standard library. C modules get none: C's ABI is stable across compilers and versions, and
 * modules reach the runtime only through the versioned pd_api table.
 *
 * The cache directory (and the module's directory in it) must be owned by the user and not
 * writable by group or others; otherwise loads are refused (PD_ERR_INVALID_ARGUMENT), since
 * anyone who can write there could plant code. Loading an unchanged module again into the
 * same registry returns the module already loaded.
 *
 * Integrity: the cache never loads a file it cannot vouch for. A library that was truncated,
 * emptied or replaced since it was built, or that is a symbolic link, not owned by the user
 * or writable by group or others (the manifest likewise), is rebuilt, not loaded; a build
 * that fails in a directory holding an earlier build's files (a corrupt depfile, object,
 * .ninja_log or .ninja_deps) is run once more from a clean directory. A symbolic link in
 * place of the .lock or .busy file is refused with an error naming it. PDEXT_LOCK_TIMEOUT
 * (seconds, default 600) bounds the wait for another process building the same module.
 * PDEXT_JIT_VERIFY=0 skips only the comparison of the library with its recorded identity (the
 * ownership and permission checks stay): it exists so that the benchmark can measure what the
 * comparison costs (bench/jit_warm_bench.c); do not set it otherwise.
 */
#ifndef PDEXT_JIT_H
#define PDEXT_JIT_H

#include "pdext.h"

PD_EXTERN_C_BEGIN
#pragma GCC visibility push(default)

/* What a build produces. */
typedef enum pd_jit_output_kind {
    PD_JIT_SHARED = 0,     /* a shared library: a loadable module */
    PD_JIT_STATIC = 1,     /* a static bundle libNAME.a with NAME.h and NAME.pc beside it (the
                            * name must then be a C identifier: it names
                            * pd_bundle_register_NAME); what `pdext bundle` makes */
    PD_JIT_ONNXRUNTIME = 2 /* an ONNX Runtime custom-op library: a shared library whose only
                            * exported symbol is RegisterCustomOps (ORT's entry point for
                            * SessionOptions.register_custom_ops_library), registering every
                            * forward op in the domain onnxruntime_domain; libpdext and the ORT
                            * adapter (libpdext_onnxruntime.a, from the directory of libpdext.a)
                            * are linked in statically; `pdext bundle --onnxruntime` */
} pd_jit_output_kind;

/* A source given as text rather than as a file. */
typedef struct pd_jit_source {
    const char *name; /* a file name without '/', whose extension picks the compiler
                       * ("relu.c", "twice.cc", "k.cu"); it appears in compiler messages */
    const char *text; /* the source, NUL-terminated */
} pd_jit_source;

/* Receives the build's progress lines (Ninja's "[3/5] ..." and, when verbose, the commands
 * and compiler output). The library itself never prints. */
typedef void (*pd_jit_log_fn)(void *user, const char *line);

/* Options of one build. Zero-initialize, set struct_size = sizeof(pd_jit_options), then the
 * fields you need; lists are (pointer, count) pairs and may be NULL/0. Append-only. */
typedef struct pd_jit_options {
    uint32_t struct_size;
    const char *name;           /* module name: letters, digits, '_', '-', '.';
                                 * not starting with '.' (it names a directory) */
    const char *const *sources; /* source files (.c .cc .cpp .cxx .cu) */
    int32_t n_sources;
    const char *const *cflags; /* extra flags for C sources */
    int32_t n_cflags;
    const char *const *cxxflags; /* extra flags for C++ sources */
    int32_t n_cxxflags;
    const char *const *cuda_flags; /* extra flags for CUDA sources (nvcc) */
    int32_t n_cuda_flags;
    const char *const *ldflags; /* extra link flags (-L, -l, ...) */
    int32_t n_ldflags;
    const char *const *include_dirs; /* extra -I directories */
    int32_t n_include_dirs;
    const char *build_dir; /* NULL: the default cache directory (see above);
                            * "" is refused */
    bool verbose;          /* log commands and compiler output, not just progress */
    pd_jit_log_fn log;     /* NULL: no progress reporting */
    void *log_user;
    pd_jit_output_kind output_kind;      /* pd_jit_build only; pd_jit_load needs PD_JIT_SHARED */
    const char *output;                  /* pd_jit_build only: where to place the result */
    int32_t lock_timeout_s;              /* how long to wait for another process building the
                                          * same module before failing with an error naming its
                                          * pid: > 0 seconds; 0: PDEXT_LOCK_TIMEOUT, else 600;
                                          * < 0: no limit. After 1 s of waiting the log gets
                                          * "pdext: waiting for pid N building <name> ..." */
    const pd_jit_source *inline_sources; /* sources given as text, compiled after `sources`;
                                          * a module may have either kind or both */
    int32_t n_inline_sources;
    bool portable;           /* no -march=native: code for the baseline ISA (always
                              * so for PD_JIT_STATIC and PD_JIT_ONNXRUNTIME; also with
                              * PDEXT_JIT_PORTABLE=1) */
    bool default_visibility; /* no -fvisibility=hidden: every symbol exported, for libraries
                              * whose entry points are found by name rather than through
                              * the module entry (MindSpore AOT kernels; pd_jit_build_library) */
    /* PD_JIT_ONNXRUNTIME: the ONNX custom-op domain of the ops (NULL: "pdext"); letters,
     * digits, '_', '.', '-' */
    const char *onnxruntime_domain;
} pd_jit_options;

/* Builds (if the cache has no up-to-date library) and loads the module into `reg`; *out gets
 * the module, whose ops pd_module_op_count / pd_module_op list (`out` is required: NULL is
 * refused with PD_ERR_INVALID_ARGUMENT). Loading a changed module again
 * in the same process gives a new library path, so the new code is what runs; its ops replace
 * those of an earlier module of the same name in `reg`. */
pd_status pd_jit_load(pd_registry *reg, const pd_jit_options *opts, pd_module **out);

/* Builds ahead of time into opts->output (required): a shared library or, with
 * PD_JIT_STATIC, a static bundle (and NAME.h, NAME.pc in the same directory). What was built
 * is loaded into a registry of its own first (a bundle: its objects linked as a module), so
 * a result the runtime would refuse (no ops, a bad declaration) fails here with the loader's
 * message and nothing is written. */
pd_status pd_jit_build(const pd_jit_options *opts);

/* pd_jit_build, loading what it built into `reg` instead of a registry of its own; *out gets
 * that module (for a static bundle: its objects linked as a module kept in the build
 * directory), so the caller can list the ops it holds. */
pd_status pd_jit_build_load(pd_registry *reg, const pd_jit_options *opts, pd_module **out);

/* Builds (if the cache has no up-to-date library) the shared library of opts and writes its
 * path in the cache (malloc'd; free it with free()) to *path, without loading it: for
 * libraries that are not pdext modules, e.g. MindSpore AOT kernels (with default_visibility). */
pd_status pd_jit_build_library(const pd_jit_options *opts, char **path);

/* --- MindSpore AOT sources: the JIT front of pdext_aot.h ------------------------------------
 * libpdext_aot loads AOT libraries only, so that it (and a program running AOT ops from a
 * bundle) needs libpdext alone; compiling an AOT source is the JIT's, here. */
struct pd_aot_options; /* pdext_aot.h */

/* Makes a MindSpore AOT spec loadable by pd_aot_load: for "path/file.cc:F" (.cc, .cpp, .cxx,
 * .c; .cu with nvcc) builds the source as MindSpore does (g++ -std=c++17 -shared -fPIC with
 * default visibility and pdext's include directory, then opts->compile_flags) through the
 * JIT's cache (opts->build_dir, else the cache's default; a warm call runs no compiler) and
 * writes "<built library>:F" to *library_spec; a spec that names a library ("lib.so:F") is
 * copied as it is. *library_spec is malloc'd (free it with free()). `opts` may be NULL; only
 * its compile_flags, n_compile_flags and build_dir are read. Fails naming the spec when it is
 * not FILE:FUNC (pd_aot_spec_split) and with the compiler's message when the source does not
 * build. */
pd_status pd_jit_aot_build(const char *spec, const struct pd_aot_options *opts,
                           char **library_spec);

/* The C source that makes MindSpore AOT functions ops of a bundle (pdext_aot_bundle.h),
 * filled from templates/bundle_aot.c.in and templates/bundle_aot_entry.c.in: for each
 * specs[i] "FILE:F" (FILE a source the bundle compiles too) with fns[i] (name, n_inputs,
 * input_names, n_outputs, outputs, attrs; NULL names are in0.., out0..), one
 * pd_aot_bundle_op in the bundle's op table, whose kernel and infer functions are
 * libpdext_aot's. A program linking the bundle runs no compiler and opens no library to get
 * the ops; it links libpdext_aot and libpdext (no JIT). The string ABI of each function comes
 * from `bundle`'s cxxflags (cuda_flags for .cu; -D_GLIBCXX_USE_CXX11_ABI=0 is the old one);
 * `bundle` may be NULL (the new ABI). *source is malloc'd (free it with free()). Fails with
 * PD_ERR_INVALID_ARGUMENT naming the spec and what is wrong. */
pd_status pd_jit_aot_bundle_source(const pd_jit_options *bundle, const char *const *specs,
                                   const struct pd_aot_options *const *fns, int32_t n,
                                   char **source);

/* The build directory pd_jit_load would use for opts (malloc'd; free it with free()). NULL
 * with a message if it cannot be determined (unsafe name, no HOME). */
char *pd_jit_build_dir(const pd_jit_options *opts);

/* The SDK include directory (holding extension.h) that builds compile against, malloc'd (free
 * it with free()): PDEXT_INCLUDE_DIR when set (it must hold the headers), else the headers
 * installed beside the running libpdext, the source tree or the configured install prefix.
 * NULL with a PD_ERR_NOT_FOUND message naming what to set when there is none. */
char *pd_jit_sdk_include_dir(void);

/* Stops the builds in progress in this process (Ctrl-C): async-signal-safe, for a host's
 * SIGINT handler (or any thread). Each build started before the call fails with
 * PD_ERR_BUILD ("... was interrupted ..."), publishes nothing and releases its locks, so the
 * next load builds again; its Ninja and compilers get SIGTERM at once and, when left after
 * 0.5 s, SIGKILL. Builds started after the call run normally. Returns how many loads or
 * builds were in progress: 0 tells a handler that nothing was stopped (so it may end the
 * process as it would have without pdext). */
int pd_jit_interrupt(void);

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_JIT_H */
