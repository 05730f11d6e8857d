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
 *     version <lang> <compiler identity>  C++/CUDA: `--version`'s first line; C: the
 *                                        compiler's path, size and mtime (no process)
 *     warning <line repeated to the log on every load>
 *     input <size> <mtime_ns> <hash> <path>   one per source and included header
 *
 * A load is warm when the key matches and every input is unchanged: same size and mtime, or
 * (when the stat moved, e.g. after `touch` or a checkout) the same content hash. So a warm
 * load costs a file read and a few stat calls, and starts no process.
 */
#include "jit_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
    pd__sb_addf(&sb, "%s/manifest-%s", p->build_dir, p->kind == PD_JIT_STATIC ? "static"
                                                                              : "shared");
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

bool pd__manifest_read(const char *path, pd__manifest *m)
{
    memset(m, 0, sizeof *m);
    char *text = pd__read_file(path, NULL);
    if (text == NULL)
        return false;
    bool ok = strncmp(text, MANIFEST_MAGIC "\n", sizeof MANIFEST_MAGIC) == 0;
    bool has_key = false;
    char *save = NULL;
    for (char *line = ok ? strtok_r(text + sizeof MANIFEST_MAGIC, "\n", &save) : NULL;
         ok && line; line = strtok_r(NULL, "\n", &save)) {
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

bool pd__manifest_fresh(const pd__plan *p, const pd__manifest *m)
{
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
    pd__sb lib = {0};
    pd__sb_addf(&lib, "%s/%s", p->build_dir, m->library);
    pd__file_stat st;
    bool present = !lib.oom && pd__stat_file(lib.s, &st);
    pd__sb_free(&lib);
    return present;
}

pd_status pd__manifest_write(const pd__plan *p, const pd__manifest *m)
{
    pd__sb sb = {0};
    pd__sb_addf(&sb, "%s\nkey %016llx\nlibrary %s\n", MANIFEST_MAGIC,
                (unsigned long long)m->key, m->library);
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
static void parse_depfile(const pd__plan *p, const char *text, pd__strv *paths)
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
        parse_depfile(p, text, paths);
        free(text);
        pd__sb_free(&d);
    }
    return paths->oom ? pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", p->who) : PD_OK;
}
