/*
 * jit_pch.c - a precompiled header for paddle/extension.h, shared by the modules of a cache.
 * That header (with the C++ standard library it pulls in) is most of what a Paddle-style
 * source makes the compiler read: parsing it is a second or more of every cold build. So
 * the first C++ build that includes it compiles it once (`c++ -x c++-header`) into
 * <cache>/pch/<key>/pd_pch.h.gch, and each C++ source of a module that includes
 * paddle/extension.h is compiled with `-include <that dir>/pd_pch.h -fpch-deps`: the
 * compiler loads the .gch in place of the header's text.
 *
 * The key is the C++ compiler (path, extra words, size and mtime) with the module's complete
 * C++ flags and the SDK's include directory: only a module compiled exactly so uses it (a
 * .gch is valid only for the flags it was made with). A header it read changing (the
 * stamp: the size and mtime of each file its depfile names) makes it built again. It is made
 * under a lock of its own (pch/<key>/lock) and published by rename, so concurrent builds
 * neither see half a file nor make it twice. When anything goes wrong (it does not compile,
 * the cache cannot be written) the module is compiled as it would be without: GCC, given no
 * -Winvalid-pch, silently reads the header's text when a .gch does not fit either. -fpch-deps
 * keeps the module's depfile complete (the headers inside the .gch too), so the manifest
 * still notices a header change.
 *
 * Opt-in (PDEXT_JIT_PCH=1): making the .gch costs more (about 3 s) than it saves one module
 * (under 1 s of a 4-5 s compile at -O3, where code generation, not parsing, dominates), so
 * by default a one-off cold build stays the faster plain compile; bench/paddle_bench.py
 * measures both (paddle_cold_build, paddle_cold_pch_first, paddle_cold_pch_warm).
 */
#include "jit_internal.h"

#include "io/io_internal.h"

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
 * mtimes; 0 when the depfile cannot be read or a header is gone. */
static uint64_t headers_stamp(const pd__plan *p, const char *dep)
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
        if (!pd__stat_file(paths.v[i], &st)) {
            h = 0;
            break;
        }
        h = pd__hash64(paths.v[i], strlen(paths.v[i]), h);
        h = pd__hash64(&st, sizeof st, h);
    }
    pd__strv_free(&paths);
    return h == 0 ? 0 : h | 1;
}

/* Whether dir holds a usable precompiled header: a .gch and a stamp matching its headers. */
static bool pch_fresh(const pd__plan *p, const char *dir)
{
    pd__sb gch = {0}, dep = {0}, stamp = {0};
    pd__sb_addf(&gch, "%s/pd_pch.h.gch", dir);
    pd__sb_addf(&dep, "%s/pd_pch.h.d", dir);
    pd__sb_addf(&stamp, "%s/stamp", dir);
    bool fresh = false;
    char *text = stamp.oom ? NULL : pd__read_file(stamp.s, NULL);
    if (text != NULL && !gch.oom && !dep.oom && access(gch.s, R_OK) == 0) {
        uint64_t want = strtoull(text, NULL, 16), now = headers_stamp(p, dep.s);
        fresh = want != 0 && want == now;
    }
    free(text);
    pd__sb_free(&gch);
    pd__sb_free(&dep);
    pd__sb_free(&stamp);
    return fresh;
}

/* Compiles dir/pd_pch.h into dir/pd_pch.h.gch (temporaries renamed into place), then writes
 * the stamp; PD_OK or the reason it failed (the caller logs it). */
static pd_status pch_build(const pd__plan *p, const char *dir)
{
    pd__sb hdr = {0}, gch = {0}, gtmp = {0}, dep = {0}, dtmp = {0}, stamp = {0};
    pd__sb_addf(&hdr, "%s/pd_pch.h", dir);
    pd__sb_addf(&gch, "%s/pd_pch.h.gch", dir);
    pd__sb_addf(&gtmp, "%s/pd_pch.h.gch.%ld.tmp", dir, (long)getpid());
    pd__sb_addf(&dep, "%s/pd_pch.h.d", dir);
    pd__sb_addf(&dtmp, "%s/pd_pch.h.d.%ld.tmp", dir, (long)getpid());
    pd__sb_addf(&stamp, "%s/stamp", dir);
    static const char header[] =
        "// pd_pch.h - written by the pdext JIT (jit/jit_pch.c): the header precompiled into\n"
        "// pd_pch.h.gch beside it, which C++ modules including paddle/extension.h load.\n"
        "#include \"paddle/extension.h\"\n";
    pd_status s = hdr.oom || gch.oom || gtmp.oom || dep.oom || dtmp.oom || stamp.oom
                      ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who)
                      : pd__write_atomic(p->who, hdr.s, header, strlen(header), 0600);
    int32_t n = 0, cap = p->cxx.extra.n + p->cxxflags.n + 16;
    char **argv = s == PD_OK ? calloc((size_t)cap, sizeof *argv) : NULL;
    if (s == PD_OK && argv == NULL)
        s = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who);
    if (s == PD_OK && argv != NULL) { /* (argv is set whenever s is PD_OK) */
        argv[n++] = p->cxx.path;
        for (int32_t i = 0; i < p->cxx.extra.n; ++i)
            argv[n++] = p->cxx.extra.v[i];
        argv[n++] = (char *)"-pipe";
        argv[n++] = (char *)"-MMD";
        argv[n++] = (char *)"-MF";
        argv[n++] = dtmp.s;
        for (int32_t i = 0; i < p->cxxflags.n; ++i)
            argv[n++] = p->cxxflags.v[i];
        argv[n++] = (char *)"-x";
        argv[n++] = (char *)"c++-header";
        argv[n++] = hdr.s;
        argv[n++] = (char *)"-o";
        argv[n++] = gtmp.s;
        argv[n] = NULL;
        int code = 0;
        s = pd__spawn(p->who, argv, dir, -1, p->interrupt_gen, NULL, NULL, &code);
        if (s == PD_OK && code != 0)
            s = pd__fail(PD_ERR_BUILD, "%s: precompiling paddle/extension.h failed (exit %d)",
                         p->who, code);
    }
    free(argv);
    /* the depfile first (the stamp is made from it), the .gch, the stamp last: a reader
     * that sees the stamp sees the files it stands for */
    if (s == PD_OK && (rename(dtmp.s, dep.s) != 0 || rename(gtmp.s, gch.s) != 0))
        s = pd__fail(PD_ERR_BUILD, "%s: publishing the precompiled header in %s: %s", p->who, dir,
                     strerror(errno));
    uint64_t h = s == PD_OK ? headers_stamp(p, dep.s) : 0;
    if (s == PD_OK && h == 0)
        s = pd__fail(PD_ERR_BUILD, "%s: the precompiled header's depfile names no headers", p->who);
    if (s == PD_OK) {
        char text[32];
        snprintf(text, sizeof text, "%016llx\n", (unsigned long long)h);
        s = pd__write_atomic(p->who, stamp.s, text, strlen(text), 0600);
    }
    if (s != PD_OK) {
        unlink(gtmp.s);
        unlink(dtmp.s);
    }
    pd__sb_free(&hdr);
    pd__sb_free(&gch);
    pd__sb_free(&gtmp);
    pd__sb_free(&dep);
    pd__sb_free(&dtmp);
    pd__sb_free(&stamp);
    return s;
}

/* Whether the plan can use a precompiled header at all; fills p->pch_sources. */
static bool pch_wanted(pd__plan *p)
{
    const char *on = getenv("PDEXT_JIT_PCH");
    if (on == NULL || strcmp(on, "1") != 0 || !p->default_dir || p->cache_root == NULL ||
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

void pd__pch_prepare(pd__plan *p)
{
    free(p->pch);
    p->pch = NULL;
    pd__strv_free(&p->pch_sources);
    if (!pch_wanted(p)) {
        pd__strv_free(&p->pch_sources);
        return;
    }
    pd__sb dir = {0}, lock = {0};
    pd__sb_addf(&dir, "%s/pch/%016llx", p->cache_root, (unsigned long long)pch_key(p));
    pd__sb_addf(&lock, "%s/lock", pd__sb_str(&dir));
    bool ok = !dir.oom && !lock.oom && pch_fresh(p, dir.s);
    if (!ok && !dir.oom && !lock.oom && pd__mkdirs(p->who, dir.s, NULL) == PD_OK) {
        int fd = open(lock.s, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0 && flock(fd, LOCK_EX) == 0) {
            ok = pch_fresh(p, dir.s); /* made by another build while we waited */
            if (!ok) {
                pd_status s = pch_build(p, dir.s);
                ok = s == PD_OK;
                if (ok)
                    pd__jit_log(p, "pdext: precompiled paddle/extension.h into %s", dir.s);
                else
                    pd__jit_log(p,
                                "pdext: module '%s': could not precompile paddle/extension.h "
                                "(compiling without it): %s",
                                p->name, pd_last_error());
            }
        }
        if (fd >= 0)
            close(fd); /* releases the lock */
    }
    if (ok) {
        pd__sb hdr = {0};
        pd__sb_addf(&hdr, "%s/pd_pch.h", dir.s);
        p->pch = hdr.oom ? NULL : hdr.s;
    }
    if (p->pch == NULL)
        pd__strv_free(&p->pch_sources);
    pd__sb_free(&lock);
    pd__sb_free(&dir);
}

bool pd__pch_used_by(const pd__plan *p, int32_t i)
{
    return p->pch != NULL && pd__strv_has(&p->pch_sources, p->sources.v[i]);
}
