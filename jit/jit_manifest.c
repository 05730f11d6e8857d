/*
 * jit_manifest.c - the record of a module's last good build, and the warm-path check.
 *
 * The manifest sits in the build directory and is written last, by atomic rename, after the
 * library it names is in place: whatever moment a build is killed at, a manifest either
 * names a complete library of a finished build or does not exist. It holds
 *
 *     pdext-jit-manifest 1
 *     key <16 hex>                       hash of flags, tools, SDK version, sources, CPU
 *     library lib<name>-<16 hex>.so      the link result, renamed to its content address
 *     library-id <size> <mtime_ns> <ctime_ns> <inode>   the library as published
 *     version <lang> <compiler identity>  C++/CUDA: `--version`'s first line; C: the
 *                                        compiler's path, size and mtime (no process)
 *     warning <line repeated to the log on every load>
 *     input <size> <mtime_ns> <hash> <path>   one per source and included header
 *
 * A load is warm when the key matches and every input is unchanged: same size and mtime, or
 * (when the stat moved, e.g. after `touch` or a checkout) the same content hash. So a warm
 * load costs a file read and a few stat calls, and starts no process.
 *
 * Trust and integrity. The manifest and the library are used only when they are regular
 * files (never symbolic links), owned by the user and not writable by group or others; and
 * the library only when it is the file that was published: dlopen maps a file, and a
 * library cut short (a full disk, a copy interrupted, a stray `truncate`) is not an error
 * to it but a SIGBUS in the host when a page past the end is touched. One lstat of the
 * library (which the warm path needs anyway, to know that it exists) is compared with
 * library-id: size, mtime, ctime and inode all unchanged means the bytes are those that were
 * published. That is safe enough because the only way around it is a write that keeps the
 * size and both times: ctime cannot be set from user space (utimensat sets mtime and, in
 * doing so, moves ctime), a replacement by rename brings another inode, and an in-place
 * write moves mtime and ctime. What is left (a raw write to the block device, a clock set
 * back to the very nanosecond) needs the powers the directory check keeps out anyway. When
 * any of the four moved, but the size did not (a `cp -p` back, a restore from a backup, a
 * chmod and back), the library is read and its content hash compared with the one in its
 * name (it is content-addressed): it is used if they agree, rebuilt otherwise. Between the
 * check and dlopen only the user's own processes can change the file (its directory is
 * private), and publication never rewrites a published file in place.
 */
#include "jit_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MANIFEST_MAGIC "pdext-jit-manifest 1"

void pd__manifest_free(pd__manifest *m)
{
    free(m->library);
    pd__strv_free(&m->warnings);
    pd__strv_free(&m->versions);
    for (int32_t i = 0; i < m->n_inputs; ++i)
        free(m->inputs[i].path);
    free(m->inputs);
    memset(m, 0, sizeof *m);
}

char *pd__manifest_path(const pd__plan *p)
{
    pd__sb sb = {0};
    pd__sb_addf(&sb, "%s/manifest-%s", p->build_dir,
                p->kind == PD_JIT_STATIC
                    ? "static"
                    : (p->kind == PD_JIT_ONNXRUNTIME ? "onnxruntime" : "shared"));
    return sb.oom ? NULL : sb.s;
}

pd_status pd__manifest_add_input(pd__manifest *m, const char *path, const pd__file_stat *st,
                                 uint64_t hash)
{
    if (m->n_inputs == m->cap_inputs) {
        int32_t cap = m->cap_inputs ? m->cap_inputs * 2 : 16;
        pd__input *v = realloc(m->inputs, (size_t)cap * sizeof *v);
        if (v == NULL)
            return pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_jit: out of memory");
        m->inputs = v;
        m->cap_inputs = cap;
    }
    pd__input *in = &m->inputs[m->n_inputs];
    in->path = strdup(path);
    if (in->path == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_jit: out of memory");
    in->st = *st;
    in->hash = hash;
    m->n_inputs++;
    return PD_OK;
}

const pd__input *pd__manifest_find(const pd__manifest *m, const char *path)
{
    for (int32_t i = 0; i < m->n_inputs; ++i)
        if (strcmp(m->inputs[i].path, path) == 0)
            return &m->inputs[i];
    return NULL;
}

/* Parses one "input" line's fields; false when malformed. */
static bool parse_input(pd__manifest *m, const char *rest)
{
    long long size, mtime;
    unsigned long long hash;
    int used = 0;
    if (sscanf(rest, "%lld %lld %16llx %n", &size, &mtime, &hash, &used) != 3 || used == 0 ||
        rest[used] != '/')
        return false;
    pd__file_stat st = {size, mtime};
    return pd__manifest_add_input(m, rest + used, &st, hash) == PD_OK;
}

/* Parses a "library-id" line's fields; false when malformed. */
static bool parse_library_id(pd__manifest *m, const char *rest)
{
    long long size, mtime, ctime;
    unsigned long long ino;
    int used = 0;
    if (sscanf(rest, "%lld %lld %lld %llu%n", &size, &mtime, &ctime, &ino, &used) != 4 ||
        rest[used] != '\0' || size <= 0)
        return false;
    m->lib_id = (pd__library_id){size, mtime, ctime, ino};
    return true;
}

bool pd__manifest_read(const char *path, pd__manifest *m, const char **why)
{
    memset(m, 0, sizeof *m);
    const char *fault = NULL;
    char *text = pd__read_trusted_file(path, NULL, &fault);
    if (why)
        *why = fault;
    if (text == NULL)
        return false;
    bool ok = strncmp(text, MANIFEST_MAGIC "\n", sizeof MANIFEST_MAGIC) == 0;
    bool has_key = false;
    char *save = NULL;
    for (char *line = ok ? strtok_r(text + sizeof MANIFEST_MAGIC, "\n", &save) : NULL; ok && line;
         line = strtok_r(NULL, "\n", &save)) {
        char *sp = strchr(line, ' ');
        if (sp == NULL) {
            ok = false;
            break;
        }
        *sp = '\0';
        const char *rest = sp + 1;
        if (strcmp(line, "key") == 0) {
            unsigned long long key;
            ok = sscanf(rest, "%16llx", &key) == 1;
            m->key = key;
            has_key = true;
        } else if (strcmp(line, "library") == 0) {
            free(m->library); /* a repeated line: the last one counts */
            m->library = NULL;
            ok = strchr(rest, '/') == NULL && (m->library = strdup(rest)) != NULL;
        } else if (strcmp(line, "library-id") == 0) {
            ok = parse_library_id(m, rest);
        } else if (strcmp(line, "version") == 0) {
            pd__strv_add(&m->versions, rest);
        } else if (strcmp(line, "warning") == 0) {
            pd__strv_add(&m->warnings, rest);
        } else if (strcmp(line, "input") == 0) {
            ok = parse_input(m, rest);
        } /* unknown lines: written by a newer pdext; ignored */
    }
    free(text);
    ok = ok && has_key && m->library != NULL && !m->warnings.oom && !m->versions.oom;
    if (!ok)
        pd__manifest_free(m);
    return ok;
}

/* True when `library` is a name publish() gives: lib<name>-<16 hex>.<ext>. A (corrupted)
 * manifest naming any other file of the build directory, the manifest itself or a lock file,
 * would make every warm load fail to open it instead of rebuilding. */
static bool library_name_ok(const pd__plan *p, const char *library)
{
    pd__sb prefix = {0};
    pd__sb_addf(&prefix, "lib%s-", p->name);
    size_t n = prefix.len;
    bool ok = !prefix.oom && strncmp(library, prefix.s, n) == 0 &&
              strspn(library + n, "0123456789abcdef") == 16 && library[n + 16] == '.' &&
              strcmp(library + n + 17, pd__plan_output_ext(p)) == 0;
    pd__sb_free(&prefix);
    return ok;
}

static int64_t time_ns(const struct timespec *t)
{
    return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* PDEXT_JIT_VERIFY=0 skips the library's identity comparison (the trust checks stay): the
 * benchmark's baseline for the cost of the comparison, not a setting for real use. */
static bool verify_disabled(void)
{
    const char *v = getenv("PDEXT_JIT_VERIFY");
    return v != NULL && strcmp(v, "0") == 0;
}

/* True when the library named by the manifest is there, trusted and the very file that was
 * published (see the top of this file); otherwise *why says what is wrong with it (NULL
 * when it is simply missing, e.g. removed by a concurrent rebuild). */
static bool library_intact(const pd__plan *p, const pd__manifest *m, const char **why)
{
    *why = NULL;
    pd__sb path = {0};
    pd__sb_addf(&path, "%s/%s", p->build_dir, m->library);
    struct stat st;
    if (path.oom || lstat(path.s, &st) != 0) {
        pd__sb_free(&path);
        return false;
    }
    const pd__library_id *id = &m->lib_id;
    bool same = false;
    if ((*why = pd__untrusted_reason(&st)) != NULL) {
        /* never read */
    } else if (verify_disabled() /* only for measuring what the comparison costs */ ||
               ((int64_t)st.st_size == id->size && time_ns(&st.st_mtim) == id->mtime_ns &&
                time_ns(&st.st_ctim) == id->ctime_ns && (uint64_t)st.st_ino == id->ino)) {
        same = true; /* the warm path: nothing moved */
    } else if (id->size != 0 && (int64_t)st.st_size != id->size) {
        *why = st.st_size == 0 ? "is empty" : "was truncated or replaced (its size changed)";
    } else {
        /* The stat moved but not the size: compare the bytes with the name's hash. */
        size_t len = 0;
        char *data = pd__read_trusted_file(path.s, &len, why);
        unsigned long long named = strtoull(m->library + strlen(p->name) + 4, NULL, 16);
        same = data != NULL && pd__hash64(data, len, PD__HASH_SEED) == named;
        if (!same && *why == NULL)
            *why = "was changed since it was built (its content does not match its hash)";
        free(data);
    }
    pd__sb_free(&path);
    return same;
}

bool pd__manifest_fresh(const pd__plan *p, const pd__manifest *m, const char **why)
{
    const char *fault = NULL;
    if (why)
        *why = NULL;
    if (m->key != p->key || m->n_inputs == 0 || !library_name_ok(p, m->library))
        return false;
    for (int32_t i = 0; i < m->n_inputs; ++i) {
        const pd__input *in = &m->inputs[i];
        pd__file_stat st;
        if (!pd__stat_file(in->path, &st))
            return false;
        if (st.size == in->st.size && st.mtime_ns == in->st.mtime_ns)
            continue;
        uint64_t h;
        if (st.size != in->st.size || !pd__hash_file(in->path, &h) || h != in->hash)
            return false;
    }
    bool intact = library_intact(p, m, &fault);
    if (why)
        *why = fault;
    return intact;
}

pd_status pd__manifest_set_library_id(const pd__plan *p, pd__manifest *m)
{
    pd__sb path = {0};
    pd__sb_addf(&path, "%s/%s", p->build_dir, m->library);
    struct stat st;
    pd_status s = PD_OK;
    if (path.oom)
        s = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who);
    else if (lstat(path.s, &st) != 0)
        s = pd__fail(PD_ERR_IO,
                     "%s: module '%s': the library '%s' vanished as it was "
                     "published: %s",
                     p->who, p->name, path.s, strerror(errno));
    else
        m->lib_id = (pd__library_id){(int64_t)st.st_size, time_ns(&st.st_mtim),
                                     time_ns(&st.st_ctim), (uint64_t)st.st_ino};
    pd__sb_free(&path);
    return s;
}

pd_status pd__manifest_write(const pd__plan *p, const pd__manifest *m)
{
    pd__sb sb = {0};
    pd__sb_addf(&sb, "%s\nkey %016llx\nlibrary %s\n", MANIFEST_MAGIC, (unsigned long long)m->key,
                m->library);
    if (m->lib_id.size > 0)
        pd__sb_addf(&sb, "library-id %lld %lld %lld %llu\n", (long long)m->lib_id.size,
                    (long long)m->lib_id.mtime_ns, (long long)m->lib_id.ctime_ns,
                    (unsigned long long)m->lib_id.ino);
    for (int32_t i = 0; i < m->versions.n; ++i)
        pd__sb_addf(&sb, "version %s\n", m->versions.v[i]);
    for (int32_t i = 0; i < m->warnings.n; ++i)
        pd__sb_addf(&sb, "warning %s\n", m->warnings.v[i]);
    for (int32_t i = 0; i < m->n_inputs; ++i) {
        const pd__input *in = &m->inputs[i];
        pd__sb_addf(&sb, "input %lld %lld %016llx %s\n", (long long)in->st.size,
                    (long long)in->st.mtime_ns, (unsigned long long)in->hash, in->path);
    }
    char *path = pd__manifest_path(p);
    pd_status s = (sb.oom || path == NULL)
                      ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who)
                      : pd__write_atomic(p->who, path, sb.s, sb.len, 0600);
    free(path);
    pd__sb_free(&sb);
    return s;
}

/* Adds the dependencies of one make-style depfile ("out.o: a.c b.h \\\n c.h") to paths.
 * Escapes: "\ " is a space in a name, "$$" a dollar; relative names are under build_dir. */
void pd__depfile_parse(const pd__plan *p, const char *text, pd__strv *paths)
{
    const char *c = text;
    while (*c && !(*c == ':' && (c[1] == ' ' || c[1] == '\t' || c[1] == '\n' || c[1] == '\r' ||
                                 c[1] == '\\' || c[1] == '\0')))
        ++c;
    if (*c == '\0')
        return;
    ++c;
    pd__sb word = {0};
    for (;;) {
        bool end = *c == '\0';
        if (!end && *c == '\\' && (c[1] == '\n' || (c[1] == '\r' && c[2] == '\n'))) {
            c += c[1] == '\n' ? 2 : 3;
            continue;
        }
        if (!end && *c == '\\' && c[1] == ' ') {
            pd__sb_addn(&word, " ", 1);
            c += 2;
            continue;
        }
        if (!end && *c == '$' && c[1] == '$') {
            pd__sb_addn(&word, "$", 1);
            c += 2;
            continue;
        }
        if (end || *c == ' ' || *c == '\t' || *c == '\n' || *c == '\r') {
            if (word.len > 0) {
                pd__sb full = {0};
                if (word.s[0] == '/')
                    pd__sb_add(&full, word.s);
                else
                    pd__sb_addf(&full, "%s/%s", p->build_dir, word.s);
                char *abs = full.oom ? NULL : pd__abspath(full.s);
                if (abs && !pd__strv_has(paths, abs))
                    pd__strv_add(paths, abs);
                free(abs);
                pd__sb_free(&full);
                word.len = 0;
            }
            if (end)
                break;
            ++c;
            continue;
        }
        pd__sb_addn(&word, c, 1);
        ++c;
    }
    if (word.oom)
        paths->oom = true;
    pd__sb_free(&word);
}

pd_status pd__depfiles_collect(const pd__plan *p, pd__strv *paths)
{
    for (int32_t i = 0; i < p->sources.n; ++i) {
        if (!pd__strv_has(paths, p->sources.v[i]))
            pd__strv_add(paths, p->sources.v[i]);
        char *dep = pd__plan_depfile(p, i);
        pd__sb d = {0};
        pd__sb_addf(&d, "%s/%s", p->build_dir, dep ? dep : "");
        free(dep);
        char *text = d.oom ? NULL : pd__read_file(d.s, NULL);
        if (text == NULL) {
            pd_status s = pd__fail(PD_ERR_BUILD,
                                   "%s: module '%s': the compiler wrote no depfile '%s' (%s)",
                                   p->who, p->name, pd__sb_str(&d), strerror(errno));
            pd__sb_free(&d);
            return s;
        }
        pd__depfile_parse(p, text, paths);
        free(text);
        pd__sb_free(&d);
    }
    return paths->oom ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who) : PD_OK;
}
