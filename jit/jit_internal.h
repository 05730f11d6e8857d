/*
 * jit_internal.h - what the JIT's files share: a growable string, a 64-bit content hash,
 * file-system helpers (safe directories, atomic writes), tool lookup, the subprocess runner,
 * the build plan and the manifest. Private to jit/.
 *
 * The pieces: jit_util.c (strings, hashing, files, the trust check), jit_lock.c (the build
 * directory's locks: waiting with a timeout, orphaned builds), jit_publish.c (inputs' hashes,
 * publication, starting clean), jit_tools.c (finding compilers, ninja,
 * the SDK headers; compiler and CPU identities), jit_spawn.c (running ninja and compilers
 * with captured output), jit_interrupt.c (pd_jit_interrupt: stopping builds on Ctrl-C), jit_plan.c
 * (options -> build plan: sources, tools, launchers, cache key), jit_flags.c (the plan's flag
 * lists), jit_ninja.c (plan -> the files Ninja reads: build.ninja, inline sources, a bundle's
 * registration source and link script), jit_manifest.c (the record of the last good build: warm
 * check, depfiles), jit_load.c (pd_jit_load: warm path, locked cold path, publication, reload),
 * jit_build.c (pd_jit_build: ahead of time into a named file, checked by loading; a static bundle's
 * header and .pc).
 */
#ifndef PD_JIT_INTERNAL_H
#define PD_JIT_INTERNAL_H

#include "io/io_internal.h"
#include "ops/pd_registry_internal.h"
#include "pdext_jit.h"

#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

/* --- jit_util.c: strings ------------------------------------------------------------------ */

/* A growable NUL-terminated string. `oom` sticks once an allocation failed, so builders can
 * append freely and check once at the end. */
typedef struct pd__sb {
    char *s;
    size_t len, cap;
    bool oom;
} pd__sb;

void pd__sb_add(pd__sb *sb, const char *s);
void pd__sb_addn(pd__sb *sb, const char *s, size_t n);
void pd__sb_addf(pd__sb *sb, const char *fmt, ...) PD_PRINTF(2, 3);
/* Appends `s` quoted for /bin/sh (as is when it needs no quoting). */
void pd__sb_add_shell(pd__sb *sb, const char *s);
void pd__sb_free(pd__sb *sb);
/* The string, never NULL ("" when empty). */
const char *pd__sb_str(const pd__sb *sb);

/* A list of malloc'd strings. */
typedef struct pd__strv {
    char **v;
    int32_t n, cap;
    bool oom;
} pd__strv;

void pd__strv_add(pd__strv *sv, const char *s);
void pd__strv_free(pd__strv *sv);
bool pd__strv_has(const pd__strv *sv, const char *s);

/* --- jit_util.c: hashing and files -------------------------------------------------------- */

/* 64-bit FNV-1a, for cache keys and content addresses (not a security boundary: the cache's
 * safety rests on its directory permissions). */
uint64_t pd__hash64(const void *data, size_t n, uint64_t seed);
#define PD__HASH_SEED 0xcbf29ce484222325ULL

/* Size, mtime in ns and content hash of a file; false if it cannot be read. */
typedef struct pd__file_stat {
    int64_t size;
    int64_t mtime_ns;
} pd__file_stat;
bool pd__stat_file(const char *path, pd__file_stat *st);
bool pd__hash_file(const char *path, uint64_t *hash);

/* Reads a whole file (NUL-terminated); NULL with errno on failure. */
char *pd__read_file(const char *path, size_t *len);

/* Files of the build directory that decide what gets loaded (the manifest, the library) are
 * trusted only when they are regular files (not symbolic links), owned by the user and not
 * writable by group or others. The reason `st` fails that, or NULL when it passes. */
const char *pd__untrusted_reason(const struct stat *st);
/* Opens `path` read-only without following a symbolic link and fstat()s it into *st; -1 when
 * it cannot be opened or is not trusted (then *why, if set, says why: "is a symbolic link",
 * "is writable by group or others", ...). */
int pd__open_trusted(const char *path, struct stat *st, const char **why);
/* pd__read_file of a trusted file; NULL (with *why set when it is untrusted) otherwise. */
char *pd__read_trusted_file(const char *path, size_t *len, const char **why);
/* Copies src to dst atomically (temporary + rename). */
pd_status pd__copy_atomic(const char *who, const char *src, const char *dst, mode_t mode);

/* Creates `dir` and its missing parents with mode 0700; `why` (may be NULL) is appended to
 * a failure's message after "; ": what the directory is and what to do. */
pd_status pd__mkdirs(const char *who, const char *dir, const char *why);
/* Refuses a directory not owned by the user or writable by group or others: anyone who can
 * write there could plant a library that we would load. */
pd_status pd__check_private_dir(const char *who, const char *dir);

/* An absolute, normalized form of `path` (the file must exist); malloc'd. */
char *pd__abspath(const char *path);

/* --- jit_lock.c --------------------------------------------------------------------------- */

struct pd__plan;

/* Takes <build_dir>/.lock, waiting for another loader (reported through the log after 1 s,
 * an error naming its pid after the lock timeout), then a fresh hold of .busy for the build
 * to inherit, after killing the orphaned compilers of a loader that died mid-build (only
 * those: see jit_lock.c). Close both descriptors to release. */
pd_status pd__lock_build_dir(const struct pd__plan *p, int *lock_fd, int *busy_fd);
/* The lock timeout for the plan in seconds (< 0: none): opts->lock_timeout_s when set, else
 * PDEXT_LOCK_TIMEOUT (an error naming it when it is not a positive number), else 600. */
pd_status pd__lock_timeout(const struct pd__plan *p, double *seconds);

/* --- jit_tools.c -------------------------------------------------------------------------- */

/* A tool as found: program path (resolved through PATH and symlinks), extra words given with
 * it (CC="ccache gcc -m64"), and its identity (size, mtime) for the cache key. */
typedef struct pd__tool {
    char *path;     /* resolved program; NULL when not found */
    char *spec;     /* what was asked for, for messages ("gcc", "$CC=clang-99") */
    pd__strv extra; /* words after the program */
    pd__file_stat id;
} pd__tool;

void pd__tool_free(pd__tool *t);
/* Looks up `name` (a path or a word to search in PATH); the first word is the program, the
 * rest become `extra`. */
void pd__tool_find(pd__tool *t, const char *spec);
/* Where the SDK headers (extension.h) are, malloc'd into *dir; fails (naming the variable)
 * when PDEXT_INCLUDE_DIR is set to a directory without them, or when they are nowhere. */
pd_status pd__sdk_include_dir(const char *who, char **dir);
/* The absolute paths of libpdext_onnxruntime.a and libpdext.a (in link order) into *out, for
 * an ONNX Runtime library; fails naming where it looked. */
pd_status pd__ort_archives(const char *who, pd__strv *out);
/* nvcc from NVCC, CUDA_HOME/bin, PATH, /usr/local/cuda/bin, in that order. */
void pd__nvcc_find(pd__tool *t);
/* A hash of the CPU model and features (for -march=native builds). */
uint64_t pd__cpu_identity(void);
/* Major version and family ("gcc", "clang") parsed from a `--version` first line. */
int pd__compiler_major(const char *version_line, const char **family);

/* --- jit_spawn.c -------------------------------------------------------------------------- */

/* Called for each output line of the child (without the newline). */
typedef void (*pd__line_fn)(void *user, const char *line);

/* Runs argv[0] (a path) in `dir` with stdout+stderr captured line by line. `keep_fd` (or -1)
 * stays open in the child and everything it starts: the build's ".busy" lock; with it, the
 * child starts a session of its own and writes the session id into keep_fd (see
 * jit_lock.c). The child dies with the calling thread. *exit_code is the exit status, or
 * 128+signal. `gen` is the interrupt generation of the build (pd__interrupt_generation): when
 * pd_jit_interrupt is called while the child runs (or was called before it starts), the
 * child and its session get SIGTERM, 0.5 s later whatever is left SIGKILL, and the result
 * is the plan's "interrupted" error (PD_ERR_BUILD). */
pd_status pd__spawn(const char *who, char *const argv[], const char *dir, int keep_fd,
                    unsigned long gen, pd__line_fn on_line, void *user, int *exit_code);
/* Starts argv in the background, detached (a session of its own, nice 19, reaped by init),
 * in `dir`, with stdout and stderr to log_path and keep_fd (a lock it then holds) inherited;
 * returns once it started, without waiting for it. */
pd_status pd__spawn_detached(const char *who, char *const argv[], const char *dir, int keep_fd,
                             const char *log_path);

/* --- jit_interrupt.c ---------------------------------------------------------------------- */

struct pd__plan;
/* The current generation (a build records it when it starts); a cold build begins and ends:
 * pd_jit_interrupt reports how many are in between. */
unsigned long pd__interrupt_generation(void);
void pd__interrupt_begin(void);
void pd__interrupt_end(void);
/* pd_jit_interrupt was called since generation `since`. */
bool pd__interrupted(unsigned long since);
/* The error of an interrupted build of the plan. */
pd_status pd__interrupt_fail(const struct pd__plan *p);
/* The table of running children that pd_jit_interrupt signals: take a slot before fork (-1
 * when full), set the pid after it, free it after waitpid. */
int pd__interrupt_slot_take(void);
void pd__interrupt_slot_set(int slot, pid_t pid, bool session);
void pd__interrupt_slot_free(int slot);
/* SIGKILL to every process of session `sid`, waiting (up to 0.5 s) until they are gone. */
void pd__session_kill(pid_t sid);
/* The session of process `pid` (field 6 of /proc/<pid>/stat), or 0; *zombie tells a process
 * that has exited but is not reaped yet (jit_lock.c). */
long pd__process_session(long pid, bool *zombie);

/* --- jit_plan.c --------------------------------------------------------------------------- */

typedef enum pd__lang { PD__LANG_C = 0, PD__LANG_CXX = 1, PD__LANG_CUDA = 2 } pd__lang;

/* Everything a build needs, resolved from the options and the environment. */
typedef struct pd__plan {
    const char *who;            /* "pd_jit_load" / "pd_jit_build", for messages */
    const pd_jit_options *opts; /* = &options */
    pd_jit_options options;     /* the caller's, zero past its struct_size */
    char *name;
    char *build_dir;        /* absolute */
    bool default_dir;       /* build_dir is under the cache root (check the root too) */
    char *cache_root;       /* the cache root when default_dir */
    const char *dir_origin; /* where build_dir came from, for messages: "build_dir",
                             * "PDEXT_CACHE_DIR", "XDG_CACHE_HOME" or "HOME" */
    char *home;             /* $HOME (absolute) when the cache root is under it */
    pd__strv sources;       /* absolute paths: the files, then the inline sources' files */
    int32_t n_file_sources; /* sources.v[n_file_sources + i] holds inline source i */
    bool uses[3];           /* per pd__lang */
    pd__tool cc, cxx, nvcc, ninja, ar, ld, objcopy;
    char *launcher[3];              /* per pd__lang: the compiler launcher, or NULL */
    const char *launcher_origin[3]; /* the variable it came from */
    char *sdk_include;              /* SDK headers */
    pd__strv cflags, cxxflags, cuda_flags, ldflags; /* complete flag lists */
    bool portable;                                  /* no -march=native */
    bool default_visibility; /* symbols keep default visibility (pd_jit_options) */
    bool native;             /* host-specific code generation: the CPU joins the key */
    char cuda_gpus[128];     /* -arch=native: the visible GPUs ("sm_90;sm_80"), in the key */
    uint64_t key;            /* hash of everything above that decides the result */
    pd_jit_output_kind kind;
    bool link_stubs;      /* link obj/pd_missing.o, the stubs of jit_stubs.c (set after a link) */
    char *pch;            /* the precompiled paddle/extension.h (jit_pch.c), or NULL */
    pd__strv pch_sources; /* the sources compiled with it */
    char *pch_todo;       /* the directory whose header to make after the build, or NULL */
    /* PD_JIT_ONNXRUNTIME: the custom-op domain, and the archives linked in after the objects
     * (absolute: libpdext_onnxruntime.a, libpdext.a) with their identities for the key */
    const char *ort_domain;
    pd__strv ort_archives;
    pd__file_stat ort_archive_id[2];
    unsigned long interrupt_gen; /* pd__interrupt_begin's generation for this build */
} pd__plan;

/* Hands a formatted line to the plan's log callback, if any. */
void pd__jit_log(const pd__plan *p, const char *fmt, ...) PD_PRINTF(2, 3);

/* Validates the name and resolves build_dir (and cache_root) only. */
pd_status pd__plan_dir(pd__plan *p, const char *who, const pd_jit_options *opts);
/* Validates the options (name, sources) and resolves the plan; nothing is created. */
pd_status pd__plan_init(pd__plan *p, const char *who, const pd_jit_options *opts,
                        pd_jit_output_kind kind);
void pd__plan_free(pd__plan *p);
/* Checks that ninja, the compilers, the launchers and (static bundles) the binutils exist
 * (cold path only). */
pd_status pd__plan_check_tools(pd__plan *p);
/* "so", "a" or (an ONNX Runtime library) "ort.so": the extension of what Ninja makes,
 * build_dir/out/lib<name>.<ext>. */
const char *pd__plan_output_ext(const pd__plan *p);
/* Object file of source i, relative to build_dir ("obj/relu.c-1a2b3c4d.o"; its depfile is
 * the same plus ".d"); malloc'd, NULL when out of memory. Two sources of the same base name
 * get different objects (a hash of the path is part of the name). */
char *pd__plan_object(const pd__plan *p, int32_t i);
/* True when one compiler run turns the single C or C++ source into the shared library (no
 * object file in between: no second compiler driver, as `cc -shared foo.c` does). */
bool pd__plan_links_directly(const pd__plan *p);
/* The depfile naming the headers that source i includes, relative to build_dir: the shared
 * library's ("out/lib<name>.so.d") when it links directly, else its object's plus ".d";
 * malloc'd, NULL when out of memory. */
char *pd__plan_depfile(const pd__plan *p, int32_t i);
/* The check library of a static bundle, relative to build_dir: its objects linked as a
 * module, which pd_jit_build loads to validate the bundle ("out/lib<name>.check.so"). */
void pd__plan_check_library(const pd__plan *p, pd__sb *out);
/* `path` made absolute against the current directory (it need not exist); malloc'd. */
char *pd__plan_absolute(const char *path);

/* --- jit_flags.c -------------------------------------------------------------------------- */

/* The compute capabilities of the GPUs visible to this process ("sm_90;sm_80"), asked of
 * the CUDA driver (libcuda.so.1 through dlopen) once per process; "" without a driver or a
 * device. */
const char *pd__cuda_visible_gpus(void);
/* Fills the plan's cflags, cxxflags, cuda_flags and ldflags (defaults, include directories,
 * the user's flags, CUDA architectures and runtime, -lm) and sets p->native. */
void pd__plan_flags(pd__plan *p, const pd_jit_options *opts);
/* The extra libraries a program linking the plan's static bundle needs after it, as
 * " -l..." words (" -lstdc++" for C++ and CUDA, the CUDA runtime, " -lm"). */
void pd__plan_bundle_libs(const pd__plan *p, pd__sb *out);

/* --- jit_ninja.c -------------------------------------------------------------------------- */

/* Writes what Ninja reads into the build directory: the inline sources (once per content),
 * a static bundle's registration source and link script, and build.ninja (from
 * templates/build.ninja.in), each atomically. */
pd_status pd__plan_write_files(const pd__plan *p);
/* The text of build.ninja for the plan. */
pd_status pd__plan_ninja_file(const pd__plan *p, pd__sb *out);
/* Fills `tpl` into `out`: each @KEY@ (capitals, digits, '_') is replaced by what `fill`
 * appends for it; a key that `fill` does not know (it returns false) is kept as written. */
typedef bool (*pd__template_fn)(pd__sb *out, const void *user, const char *key, size_t n);
void pd__template_fill(pd__sb *out, const char *tpl, pd__template_fn fill, const void *user);
/* The embedded templates (templates/build.ninja.in, templates/bundle_*.in). */
extern const char *const pd__tpl_ninja;
extern const char *const pd__tpl_bundle_register;
extern const char *const pd__tpl_bundle_link;
extern const char *const pd__tpl_bundle_header;
extern const char *const pd__tpl_bundle_pc;
extern const char *const pd__tpl_bundle_ort;
extern const char *const pd__tpl_bundle_ort_map;
/* A bundle's MindSpore AOT functions (jit_aot_bundle.c): the file and one entry per function. */
extern const char *const pd__tpl_bundle_aot;
extern const char *const pd__tpl_bundle_aot_entry;

/* --- jit_pch.c ----------------------------------------------------------------------------- */

/* Before a cold build (unless PDEXT_JIT_PCH=0): when C++ sources of the plan include
 * paddle/extension.h and the cache holds its precompiled header for the plan's compiler and
 * flags, sets p->pch and p->pch_sources; when it holds none, notes (p->pch_todo) that it is
 * to be made. */
void pd__pch_prepare(pd__plan *p);
/* After the cold build (failed or not, unless interrupted): starts making the noted header
 * in the background for later builds, unless a job is making it already. */
void pd__pch_after_build(pd__plan *p);
/* Whether source i is compiled with the precompiled header. */
bool pd__pch_used_by(const pd__plan *p, int32_t i);

/* --- jit_stubs.c -------------------------------------------------------------------------- */

/* After a shared C++ module linked: writes missing/pd_missing.cc with a stub for each C++
 * function the library calls that nothing defines, and sets *needed (then the build links
 * again with p->link_stubs). */
pd_status pd__stubs_write(const pd__plan *p, bool *needed);

/* --- jit_manifest.c ----------------------------------------------------------------------- */

/* One input of a build (source or header) as it was when built. */
typedef struct pd__input {
    char *path;
    pd__file_stat st;
    uint64_t hash;
} pd__input;

/* What the library's inode looked like when it was published: the warm path's integrity
 * check (see jit_manifest.c). */
typedef struct pd__library_id {
    int64_t size, mtime_ns, ctime_ns;
    uint64_t ino;
} pd__library_id;

typedef struct pd__manifest {
    uint64_t key;
    char *library;         /* file name inside the build dir */
    pd__library_id lib_id; /* all zero when the manifest has no "library-id" line */
    pd__strv warnings;     /* compiler warnings to repeat on each load */
    pd__strv versions;     /* "<lang> <compiler identity>" (see check_compilers) */
    pd__input *inputs;
    int32_t n_inputs, cap_inputs;
} pd__manifest;

void pd__manifest_free(pd__manifest *m);
/* Path of the manifest for the plan's output kind (malloc'd). */
char *pd__manifest_path(const pd__plan *p);
/* Reads the manifest; false when it is missing, malformed or untrusted (*why, if not NULL,
 * then names an untrusted file's fault, else NULL). */
bool pd__manifest_read(const char *path, pd__manifest *m, const char **why);
/* True when the manifest describes a library that is still right for the plan: same key,
 * every input unchanged (stat, then content hash when the stat moved), library present,
 * trusted and intact. When the library is the reason for false, *why (if not NULL) says
 * what is wrong with it ("was truncated or replaced", "is a symbolic link", ...). */
bool pd__manifest_fresh(const pd__plan *p, const pd__manifest *m, const char **why);
/* Records the published library's identity (lstat of build_dir/m->library) in m->lib_id. */
pd_status pd__manifest_set_library_id(const pd__plan *p, pd__manifest *m);
pd_status pd__manifest_add_input(pd__manifest *m, const char *path, const pd__file_stat *st,
                                 uint64_t hash);
const pd__input *pd__manifest_find(const pd__manifest *m, const char *path);
pd_status pd__manifest_write(const pd__plan *p, const pd__manifest *m);
/* Adds the inputs named by every object's depfile in build_dir (sources and headers). */
/* Adds the dependencies of one make-style depfile's text to paths (absolute; relative names
 * are under the build directory). */
void pd__depfile_parse(const pd__plan *p, const char *text, pd__strv *paths);
pd_status pd__depfiles_collect(const pd__plan *p, pd__strv *paths);

/* --- jit_publish.c ------------------------------------------------------------------------ */

/* Hashes of the inputs as they are before the build (the sources and the previous build's
 * headers; unchanged ones keep the hash `old` recorded) into `pre`. */
pd_status pd__inputs_hash_before(const pd__plan *p, const pd__manifest *old, pd__manifest *pre);
/* Records in `m` every input the depfiles name, with its hash from `before` when its stat
 * has not moved; inputs touched since start_ns get a record that never matches. */
pd_status pd__inputs_record(const pd__plan *p, const pd__manifest *before, int64_t start_ns,
                            pd__manifest *m);
/* True when an input of the build `last` changed content (per `now`) but is older than that
 * build's library: Ninja, which goes by mtime, would miss it. */
bool pd__inputs_went_back(const pd__manifest *last, const pd__manifest *now);
/* Publishes out/lib<name>.<ext> under its content address, records its identity and writes
 * the manifest; then removes libraries other than it and `previous`. */
pd_status pd__library_publish(const pd__plan *p, pd__manifest *m, const char *previous);
/* Whether a failed build should be run again from a clean directory (see jit_publish.c). */
bool pd__builddir_clean_helps(const pd__plan *p, bool ninja_error);
/* Removes the earlier build's objects, outputs and Ninja logs, and marks the directory. */
void pd__builddir_clean(const pd__plan *p);
/* Removes the mark once a build succeeded. */
void pd__builddir_unmark(const pd__plan *p);
/* --- jit_load.c: shared by pd_jit_load and pd_jit_build ------------------------------------ */

/* Resolves the plan and makes sure the cache holds an up-to-date result for it; *m names
 * it (empty on failure). The caller frees the plan with pd__plan_free in any case. */
pd_status pd__jit_ensure_built(pd__plan *p, const char *who, const pd_jit_options *opts,
                               pd_jit_output_kind kind, pd__manifest *m);

#endif /* PD_JIT_INTERNAL_H */
