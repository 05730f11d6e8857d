/*
 * jit_publish.c - the build directory around a Ninja run: the inputs' hashes before the
 * build and their record after it, publication of the result under its content address
 * (then the manifest, last), removal of superseded libraries, and starting clean when an
 * earlier build's files may be what makes a build fail.
 *
 * Everything here runs on the cold path, under the build directory's .lock (jit_lock.c).
 */
#include "jit_internal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Inputs modified this close to the build's start (or later) may have changed while the
 * compiler read them; their hash is not trusted (one extra rebuild at worst). File times
 * come from a coarse clock that can lag the real-time clock by a tick. */
#define RACY_WINDOW_NS 10000000LL

/* --- inputs ------------------------------------------------------------------------------- */

/* Records every input with the hash it had before the build when its stat has not moved
 * since; files touched during the build get a hash that never matches (rebuild next time). */
pd_status pd__inputs_record(const pd__plan *p, const pd__manifest *before, int64_t start_ns,
                            pd__manifest *m)
{
    pd__strv paths = {0};
    pd_status s = pd__depfiles_collect(p, &paths);
    for (int32_t i = 0; s == PD_OK && i < paths.n; ++i) {
        pd__file_stat st;
        if (!pd__stat_file(paths.v[i], &st)) {
            s = pd__fail(PD_ERR_BUILD, "%s: module '%s': input '%s' vanished during the build",
                         p->who, p->name, paths.v[i]);
            break;
        }
        const pd__input *pre = pd__manifest_find(before, paths.v[i]);
        uint64_t hash = 0;
        if (pre && pre->st.size == st.size && pre->st.mtime_ns == st.mtime_ns) {
            hash = pre->hash;
        } else if (st.mtime_ns >= start_ns - RACY_WINDOW_NS || !pd__hash_file(paths.v[i], &hash)) {
            st.size = -1; /* racy: never matches */
            hash = 0;
        }
        s = pd__manifest_add_input(m, paths.v[i], &st, hash);
    }
    pd__strv_free(&paths);
    return s;
}

/* Hashes of the inputs as they are before the build: the sources and the headers of the
 * previous build (the new depfiles will name almost the same set). */
pd_status pd__inputs_hash_before(const pd__plan *p, const pd__manifest *old, pd__manifest *pre)
{
    for (int32_t i = 0; i < p->sources.n + (old ? old->n_inputs : 0); ++i) {
        const char *path = i < p->sources.n ? p->sources.v[i] : old->inputs[i - p->sources.n].path;
        pd__file_stat st;
        uint64_t h;
        if (pd__manifest_find(pre, path) || !pd__stat_file(path, &st))
            continue;
        const pd__input *known = old ? pd__manifest_find(old, path) : NULL;
        if (known && known->st.size == st.size && known->st.mtime_ns == st.mtime_ns)
            h = known->hash; /* unchanged since the last build: no need to read it */
        else if (!pd__hash_file(path, &h))
            continue;
        pd_status s = pd__manifest_add_input(pre, path, &st, h);
        if (s != PD_OK)
            return s;
    }
    return PD_OK;
}

/* --- publishing --------------------------------------------------------------------------- */

/* Removes libraries of this kind other than `keep` and `previous` (a process that read the
 * previous manifest a moment ago may still be about to open that one), and leftover
 * temporary files. */
static void remove_old_libraries(const pd__plan *p, const char *keep, const char *previous)
{
    DIR *d = opendir(p->build_dir);
    if (d == NULL)
        return;
    char prefix[256], suffix[8];
    snprintf(prefix, sizeof prefix, "lib%s-", p->name);
    snprintf(suffix, sizeof suffix, ".%s", pd__plan_output_ext(p));
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        size_t n = strlen(e->d_name), ns = strlen(suffix);
        if (strstr(e->d_name, ".tmp.") != NULL && e->d_name[0] != '.') {
            /* a temporary file of a writer killed before its rename (we hold the lock, so
             * no writer is at work now) */
            unlinkat(dirfd(d), e->d_name, 0);
            continue;
        }
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || n != strlen(prefix) + 16 + ns ||
            strcmp(e->d_name + n - ns, suffix) != 0 || strcmp(e->d_name, keep) == 0 ||
            (previous && strcmp(e->d_name, previous) == 0))
            continue;
        unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

/* Moves the fresh build result to its content-addressed name (rename: atomic, and no copy).
 * The next build makes out/lib<name>.<ext> anew, as it must for anything that changed; the
 * published file is never the linker's output file, so no linker can overwrite it in place
 * while a process has it mapped. A file already under that name is replaced, not trusted:
 * it may be the damaged copy that this build is repairing (a process that has the old one
 * mapped keeps its inode). */
static pd_status move_into_place(const pd__plan *p, const char *built, const char *final)
{
    if (chmod(built, p->kind == PD_JIT_STATIC ? 0600 : 0700) != 0 || rename(built, final) != 0)
        return pd__fail(PD_ERR_IO, "%s: module '%s': cannot publish '%s' as '%s': %s", p->who,
                        p->name, built, final, strerror(errno));
    return PD_OK;
}

/* Publishes out/lib<name>.<ext> under its content address and records the manifest. */
pd_status pd__library_publish(const pd__plan *p, pd__manifest *m, const char *previous)
{
    pd__sb built = {0}, final = {0}, lib = {0};
    pd__sb_addf(&built, "%s/out/lib%s.%s", p->build_dir, p->name, pd__plan_output_ext(p));
    uint64_t h = 0;
    pd_status s = PD_OK;
    if (built.oom || !pd__hash_file(built.s, &h))
        s = pd__fail(PD_ERR_BUILD, "%s: module '%s': Ninja succeeded but '%s' is unreadable",
                     p->who, p->name, pd__sb_str(&built));
    pd__sb_addf(&lib, "lib%s-%016llx.%s", p->name, (unsigned long long)h, pd__plan_output_ext(p));
    pd__sb_addf(&final, "%s/%s", p->build_dir, pd__sb_str(&lib));
    if (s == PD_OK && (final.oom || lib.oom))
        s = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who);
    if (s == PD_OK)
        s = move_into_place(p, built.s, final.s);
    if (s == PD_OK) {
        m->key = p->key;
        m->library = lib.s;
        lib.s = NULL;
        s = pd__manifest_set_library_id(p, m);
    }
    if (s == PD_OK)
        s = pd__manifest_write(p, m);
    if (s == PD_OK)
        remove_old_libraries(p, m->library, previous);
    pd__sb_free(&built);
    pd__sb_free(&final);
    pd__sb_free(&lib);
    return s;
}

/* --- starting clean ----------------------------------------------------------------------- */

/* Marks a build directory whose earlier build's files were removed by pd__builddir_clean;
 * removed again by the next build that succeeds. */
#define CLEAN_MARK ".clean-start"

/* Removes build_dir/<sub>/ and the files in it (Ninja's output folders are flat). */
static void remove_folder(int dir_fd, const char *sub)
{
    int fd = openat(dir_fd, sub, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            unlinkat(fd, e->d_name, 0);
    if (d)
        closedir(d);
    else if (fd >= 0)
        close(fd);
    if (unlinkat(dir_fd, sub, AT_REMOVEDIR) != 0 && errno == ENOTDIR)
        unlinkat(dir_fd, sub, 0);
}

/* A build that fails in a directory holding an earlier build's files may fail because of
 * them: a depfile, object, .ninja_log or .ninja_deps cut short or garbled (a full disk, a
 * crash, a stray edit) can make Ninja or the linker fail on every run, whatever the sources
 * say. So such a failure is retried once from a clean directory: the object and output
 * folders and Ninja's logs are removed (build.ninja is rewritten before every build, and the
 * manifest and published libraries are kept for the readers that use them). The mark left
 * behind keeps a source error from costing two compilations on every attempt: once clean,
 * the next failures are the sources' own, until a build succeeds. */
bool pd__builddir_clean_helps(const pd__plan *p, bool ninja_error)
{
    int dir = open(p->build_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return false;
    struct stat st;
    bool earlier = fstatat(dir, "obj", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
                   fstatat(dir, "out", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
                   fstatat(dir, ".ninja_log", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
                   fstatat(dir, ".ninja_deps", &st, AT_SYMLINK_NOFOLLOW) == 0;
    bool cleaned = fstatat(dir, CLEAN_MARK, &st, AT_SYMLINK_NOFOLLOW) == 0;
    close(dir);
    return ninja_error || (earlier && !cleaned);
}

void pd__builddir_clean(const pd__plan *p)
{
    int dir = open(p->build_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0)
        return;
    remove_folder(dir, "obj");
    remove_folder(dir, "out");
    unlinkat(dir, ".ninja_log", 0);
    unlinkat(dir, ".ninja_deps", 0);
    int mark = openat(dir, CLEAN_MARK, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (mark >= 0)
        close(mark);
    close(dir);
}

/* True when an input of the last build changed content but now has an mtime older than that
 * build's result (`cp -p` of an older file, a checkout): Ninja decides by mtime and would
 * keep the stale object, so the build must start clean. Inputs whose hash was not trusted
 * (size -1, see pd__inputs_record) are left to Ninja. */
bool pd__inputs_went_back(const pd__manifest *last, const pd__manifest *now)
{
    if (last->lib_id.mtime_ns == 0)
        return false;
    for (int32_t i = 0; i < now->n_inputs; ++i) {
        const pd__input *cur = &now->inputs[i];
        const pd__input *was = pd__manifest_find(last, cur->path);
        if (was && was->st.size >= 0 && cur->hash != was->hash &&
            cur->st.mtime_ns <= last->lib_id.mtime_ns)
            return true;
    }
    return false;
}

void pd__builddir_unmark(const pd__plan *p)
{
    pd__sb mark = {0};
    pd__sb_addf(&mark, "%s/" CLEAN_MARK, p->build_dir);
    if (!mark.oom)
        unlink(mark.s);
    pd__sb_free(&mark);
}
