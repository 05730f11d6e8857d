/*
 * jit_pch.c - a precompiled header for paddle/extension.h, shared by the modules of a cache.
 * That header (with the C++ standard library it pulls in) is most of what a Paddle-style
 * source makes the compiler parse: about a second of every cold build. It is compiled once
 * (`c++ -x c++-header`) into <cache>/pch/<key>/pd_pch.h.gch, and each C++ source of a module
 * that includes paddle/extension.h is compiled with `-include <that dir>/pd_pch.h
 * -fpch-deps`: the compiler loads the .gch in place of the header's text.
 *
 * In the background: making the .gch costs about 3 s, more than it saves one module (under
 * 1 s of a 4-5 s compile at -O3, where code generation dominates), so no build waits for it.
 * The first build that finds none compiles its module without it and then (so that the two
 * compiles do not share the CPU; after a failed build too, since the next attempt wants it)
 * starts the .gch's compile detached (jit_spawn.c: nice 19, a session of its own, reaped by
 * init; its output in pch/<key>/build.log), holding the directory's lock (pch/<key>/lock)
 * until it is done; every later build of the cache with the same compiler and flags uses it.
 * A build that finds the lock held (the .gch is being made) compiles without it and starts
 * nothing, so concurrent builds never make it twice. The job writes temporaries and renames them
 * into place; the next build to hold the lock adopts what it published (checks that no header it
 * read changed since it started, writes the stamp); a compile that failed leaves a `failed` mark,
 * and no new attempt is made while it is newer than every header in the SDK's paddle/. Ctrl-C
 * (pd_jit_interrupt) stops this process's builds, not the cache's job, which can only publish
 * a whole .gch.
 *
 * The key is the C++ compiler (path, extra words, size and mtime) with the module's complete
 * C++ flags and the SDK's include directory: only a module compiled exactly so uses it (a
 * .gch is valid only for the flags it was made with). A header it read changing (the
 * stamp: the size and mtime of each file its depfile names) makes it built again. When
 * anything goes wrong the module is compiled as it would be without: GCC, given no
 * -Winvalid-pch, silently reads the header's text when a .gch does not fit (or is damaged).
 * -fpch-deps keeps the module's depfile complete (the headers inside the .gch too), so the
 * manifest still notices a header change.
 *
 * On by default; PDEXT_JIT_PCH=0 turns it off. bench/paddle_bench.py measures the first build
 * (paddle_cold_build), the next (paddle_cold_warm) and one without (paddle_cold_nopch).
 */
#include "jit_internal.h"

#include "io/io_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* Whether the text of a source includes paddle/extension.h (an #include line naming it). */
static bool includes_paddle_extension(const char *text)
{
    for (const char *c = text; c && (c = strstr(c, "paddle/extension.h")) != NULL; ++c) {
        const char *line = c;
        while (line > text && line[-1] != '\n')
            --line;
        while (*line == ' ' || *line == '\t')
            ++line;
        if (*line == '#' && strstr(line, "include") != NULL && strstr(line, "include") < c)
            return true;
    }
    return false;
}

/* The key of the precompiled header for the plan's C++ compiler and flags. */
static uint64_t pch_key(const pd__plan *p)
{
    pd__sb k = {0};
    pd__sb_addf(&k, "pch1\n%s\n%lld %lld\n", p->cxx.path ? p->cxx.path : "",
                (long long)p->cxx.id.size, (long long)p->cxx.id.mtime_ns);
    for (int32_t i = 0; i < p->cxx.extra.n; ++i)
        pd__sb_addf(&k, "x %s\n", p->cxx.extra.v[i]);
    for (int32_t i = 0; i < p->cxxflags.n; ++i)
        pd__sb_addf(&k, "f %s\n", p->cxxflags.v[i]);
    pd__sb_addf(&k, "i %s\n", p->sdk_include ? p->sdk_include : "");
    uint64_t h = pd__hash64(pd__sb_str(&k), k.len, PD__HASH_SEED);
    pd__sb_free(&k);
    return h;
}

/* The stamp of the headers that the depfile `dep` names: a hash of their paths, sizes and
 * mtimes; 0 when the depfile cannot be read, a header is gone or one changed after
 * `not_after_ns` (INT64_MAX: any time). */
static uint64_t headers_stamp(const pd__plan *p, const char *dep, int64_t not_after_ns)
{
    char *text = pd__read_file(dep, NULL);
    if (text == NULL)
        return 0;
    pd__strv paths = {0};
    pd__depfile_parse(p, text, &paths);
    free(text);
    uint64_t h = paths.oom || paths.n == 0 ? 0 : PD__HASH_SEED;
    for (int32_t i = 0; h != 0 && i < paths.n; ++i) {
        pd__file_stat st;
        if (!pd__stat_file(paths.v[i], &st) || st.mtime_ns > not_after_ns) {
            h = 0;
            break;
        }
        h = pd__hash64(paths.v[i], strlen(paths.v[i]), h);
        h = pd__hash64(&st, sizeof st, h);
    }
    pd__strv_free(&paths);
    return h == 0 ? 0 : h | 1;
}

/* dir/name, or NULL when out of memory (the caller frees it). */
static char *in_dir(const char *dir, const char *name)
{
    pd__sb b = {0};
    pd__sb_addf(&b, "%s/%s", dir, name);
    if (b.oom) {
        pd__sb_free(&b);
        return NULL;
    }
    return b.s;
}

/* The file's mtime in ns, or -1 when it cannot be read. */
static int64_t mtime_of(const char *dir, const char *name)
{
    char *path = in_dir(dir, name);
    pd__file_stat st;
    bool ok = path != NULL && pd__stat_file(path, &st);
    free(path);
    return ok ? st.mtime_ns : -1;
}

/* Whether dir holds a usable precompiled header: a .gch and a stamp matching its headers.
 * With `adopt` (the caller holds the lock), a .gch the background job published without a
 * stamp is taken when no header it read changed after the job started (when it wrote
 * pd_pch.h), and its stamp written. */
static bool pch_fresh(const pd__plan *p, const char *dir, bool adopt)
{
    char *gch = in_dir(dir, "pd_pch.h.gch"), *dep = in_dir(dir, "pd_pch.h.d");
    char *stamp = in_dir(dir, "stamp");
    bool fresh = false;
    if (gch != NULL && dep != NULL && stamp != NULL && access(gch, R_OK) == 0) {
        char *text = pd__read_file(stamp, NULL);
        if (text != NULL) {
            uint64_t want = strtoull(text, NULL, 16);
            fresh = want != 0 && want == headers_stamp(p, dep, INT64_MAX);
        } else if (adopt && errno == ENOENT) {
            int64_t started = mtime_of(dir, "pd_pch.h");
            uint64_t h = started < 0 ? 0 : headers_stamp(p, dep, started);
            char line[32];
            snprintf(line, sizeof line, "%016llx\n", (unsigned long long)h);
            fresh = h != 0 && pd__write_atomic(p->who, stamp, line, strlen(line), 0600) == PD_OK;
            if (fresh)
                pd__jit_log(p, "pdext: precompiled paddle/extension.h in %s", dir);
        }
        free(text);
    }
    free(gch);
    free(dep);
    free(stamp);
    return fresh;
}

/* Whether a failed attempt at this .gch is newer than every header of the SDK's paddle/
 * (so that trying again would fail again). */
static bool pch_failed_before(const pd__plan *p, const char *dir)
{
    int64_t failed = mtime_of(dir, "failed");
    if (failed < 0)
        return false;
    char *sub = in_dir(p->sdk_include ? p->sdk_include : "", "paddle");
    DIR *d = sub ? opendir(sub) : NULL;
    bool newer = d != NULL;
    for (struct dirent *e; newer && (e = readdir(d)) != NULL;)
        newer = e->d_name[0] == '.' || mtime_of(sub, e->d_name) < failed;
    if (d != NULL)
        closedir(d);
    free(sub);
    return newer;
}

/* The background job: runs the compiler (the words after its own four) and, when it succeeds,
 * renames the depfile and then the .gch into place; else removes them, and marks `failed`
 * when the compiler refused (not when it was killed: that is no reason not to try again). */
static const char job_script[] =
    "g=$1 d=$2 G=$3 D=$4; shift 4\n"
    "\"$@\"; rc=$?\n"
    "if [ $rc -eq 0 ] && mv -f \"$d\" \"$D\" && mv -f \"$g\" \"$G\"; then exit 0; fi\n"
    "rm -f \"$g\" \"$d\"\n"
    "if [ $rc -ne 0 ] && [ $rc -lt 128 ]; then : > failed; fi\n"
    "echo \"pdext: precompiling paddle/extension.h failed (exit $rc)\"\n"
    "exit 1\n";

/* Under the lock (fd): clears what an older .gch left, writes dir/pd_pch.h and starts the job
 * that compiles it, which inherits the lock; PD_OK or the reason it could not start. */
static pd_status pch_start(const pd__plan *p, const char *dir, int fd)
{
    /* the stamp first: a reader without the lock trusts nothing without it */
    static const char *const names[] = {"stamp",  "pd_pch.h.gch",     "pd_pch.h.d",
                                        "failed", "pd_pch.h.gch.tmp", "pd_pch.h.d.tmp"};
    char *path[6] = {0};
    char *hdr = in_dir(dir, "pd_pch.h"), *log = in_dir(dir, "build.log");
    bool oom = hdr == NULL || log == NULL;
    for (int i = 0; i < 6; ++i) {
        path[i] = in_dir(dir, names[i]);
        oom = oom || path[i] == NULL;
        if (path[i] != NULL && i < 4)
            unlink(path[i]);
    }
    static const char header[] =
        "// pd_pch.h - written by the pdext JIT (jit/jit_pch.c): the header precompiled into\n"
        "// pd_pch.h.gch beside it, which C++ modules including paddle/extension.h load.\n"
        "#include \"paddle/extension.h\"\n";
    pd_status s = oom ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who)
                      : pd__write_atomic(p->who, hdr, header, strlen(header), 0600);
    int32_t n = 0, cap = p->cxx.extra.n + p->cxxflags.n + 24;
    char **argv = s == PD_OK ? calloc((size_t)cap, sizeof *argv) : NULL;
    if (s == PD_OK && argv == NULL)
        s = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who);
    if (s == PD_OK && argv != NULL) { /* (argv is set whenever s is PD_OK) */
        argv[n++] = (char *)"/bin/sh";
        argv[n++] = (char *)"-c";
        argv[n++] = (char *)job_script;
        argv[n++] = (char *)"pdext-pch";
        argv[n++] = path[4];
        argv[n++] = path[5];
        argv[n++] = path[1];
        argv[n++] = path[2];
        argv[n++] = p->cxx.path;
        for (int32_t i = 0; i < p->cxx.extra.n; ++i)
            argv[n++] = p->cxx.extra.v[i];
        argv[n++] = (char *)"-pipe";
        argv[n++] = (char *)"-MMD";
        argv[n++] = (char *)"-MF";
        argv[n++] = path[5];
        for (int32_t i = 0; i < p->cxxflags.n; ++i)
            argv[n++] = p->cxxflags.v[i];
        argv[n++] = (char *)"-x";
        argv[n++] = (char *)"c++-header";
        argv[n++] = hdr;
        argv[n++] = (char *)"-o";
        argv[n++] = path[4];
        argv[n] = NULL;
        s = pd__spawn_detached(p->who, argv, dir, fd, log);
    }
    free(argv);
    free(hdr);
    free(log);
    for (int i = 0; i < 6; ++i)
        free(path[i]);
    return s;
}

/* Whether the plan can use a precompiled header at all; fills p->pch_sources. */
static bool pch_wanted(pd__plan *p)
{
    const char *on = getenv("PDEXT_JIT_PCH");
    if ((on != NULL && strcmp(on, "0") == 0) || !p->default_dir || p->cache_root == NULL ||
        !p->uses[PD__LANG_CXX] || p->launcher[PD__LANG_CXX] != NULL || p->cxx.path == NULL)
        return false;
    for (int32_t i = 0; i < p->sources.n; ++i) {
        const char *ext = strrchr(p->sources.v[i], '.');
        if (ext == NULL || !strcmp(ext, ".c") || !strcmp(ext, ".cu"))
            continue;
        char *text = pd__read_file(p->sources.v[i], NULL);
        if (text != NULL && includes_paddle_extension(text))
            pd__strv_add(&p->pch_sources, p->sources.v[i]);
        free(text);
    }
    return p->pch_sources.n > 0 && !p->pch_sources.oom;
}

/* Whether dir's .gch is usable, adopting one the job just published (under the lock, which
 * is busy while a job runs: then false at once); with `start`, when there is none, starts
 * the job that makes it, which holds the lock on. */
static bool pch_take_or_start(pd__plan *p, const char *dir, bool start)
{
    char *lock = in_dir(dir, "lock");
    int fd = lock != NULL ? open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
    free(lock);
    if (fd < 0)
        return false;
    bool ok = false;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        ok = pch_fresh(p, dir, true);
        if (!ok && start && !pch_failed_before(p, dir)) {
            if (pch_start(p, dir, fd) == PD_OK)
                pd__jit_log(p,
                            "pdext: module '%s': precompiling paddle/extension.h in the "
                            "background into %s (for later builds)",
                            p->name, dir);
            else
                pd__jit_log(p, "pdext: module '%s': could not precompile paddle/extension.h: %s",
                            p->name, pd_last_error());
        }
    }
    close(fd); /* our hold on the lock; a job started holds it on */
    return ok;
}

void pd__pch_prepare(pd__plan *p)
{
    free(p->pch);
    p->pch = NULL;
    free(p->pch_todo);
    p->pch_todo = NULL;
    pd__strv_free(&p->pch_sources);
    if (!pch_wanted(p)) {
        pd__strv_free(&p->pch_sources);
        return;
    }
    pd__sb dir = {0};
    pd__sb_addf(&dir, "%s/pch/%016llx", p->cache_root, (unsigned long long)pch_key(p));
    bool ok = !dir.oom && pch_fresh(p, dir.s, false);
    if (!ok && !dir.oom && pd__mkdirs(p->who, dir.s, NULL) == PD_OK) {
        ok = pch_take_or_start(p, dir.s, false);
        if (!ok)
            p->pch_todo = strdup(dir.s); /* NULL when out of memory: not made */
    }
    if (ok)
        p->pch = in_dir(dir.s, "pd_pch.h");
    if (p->pch == NULL)
        pd__strv_free(&p->pch_sources);
    pd__sb_free(&dir);
}

void pd__pch_after_build(pd__plan *p)
{
    if (p->pch_todo != NULL && !pd__interrupted(p->interrupt_gen))
        pch_take_or_start(p, p->pch_todo, true);
    free(p->pch_todo);
    p->pch_todo = NULL;
}

bool pd__pch_used_by(const pd__plan *p, int32_t i)
{
    return p->pch != NULL && pd__strv_has(&p->pch_sources, p->sources.v[i]);
}
