/*
 * cmd_new.c - `pdext new NAME [--lang c] [--dir DIR]`: writes a ready-to-build op from the
 * scaffold in templates/new (embedded at build time, pd_new_templates.h): DIR/NAME.c (forward
 * and backward kernels, infer functions), DIR/README.md and DIR/check.sh, which runs
 * `pdext check` on it. The scaffold passes `pdext check` as written.
 *
 * Nothing is overwritten: every target is checked before the first is written, and each file
 * is created with O_EXCL, so a file that appears meanwhile is not clobbered either.
 */
#include "pd_new_templates.h"
#include "pdext_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char usage[] =
    "usage: pdext new NAME [--lang c] [--dir DIR]\n"
    "\n"
    "Writes a new op NAME (a C identifier) into DIR (default ./NAME, made if missing):\n"
    "NAME.c with forward and backward kernels and infer functions, README.md, and check.sh,\n"
    "which runs `pdext check NAME.c`. Refuses to overwrite any file.\n";

#define N_FILES 3

/* `tpl` with every @NAME@ replaced by name; malloc'd. */
static char *fill(const char *tpl, const char *name)
{
    static const char key[] = "@NAME@";
    size_t klen = sizeof key - 1, nlen = strlen(name), count = 0;
    for (const char *p = strstr(tpl, key); p; p = strstr(p + klen, key))
        count++;
    char *out = pd_cmd_xmalloc(strlen(tpl) + count * nlen + 1), *w = out;
    for (const char *p = tpl, *q; *p; p = q + klen) {
        q = strstr(p, key);
        if (!q) {
            strcpy(w, p);
            return out;
        }
        memcpy(w, p, (size_t)(q - p));
        w += q - p;
        memcpy(w, name, nlen);
        w += nlen;
        *w = '\0';
    }
    return out;
}

static bool is_identifier(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
        return false;
    for (; *s; ++s)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_'))
            return false;
    return true;
}

/* mkdir -p */
static bool make_dirs(const char *dir)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1;; ++p) {
        char c = *p;
        if (c == '/' || c == '\0') {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return false;
            *p = c;
        }
        if (c == '\0')
            return true;
    }
}

static bool write_new(const char *path, const char *text, mode_t mode)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, mode);
    if (fd < 0)
        return false;
    size_t n = strlen(text);
    bool ok = write(fd, text, n) == (ssize_t)n;
    return close(fd) == 0 && ok;
}

int pd_cmd_new(int argc, char **argv)
{
    const char *name = NULL, *dir = NULL, *lang = "c", *v;
    bool bad = false;
    for (int i = 1; i < argc; ++i) {
        if (pd_cmd_help(argv[i], usage)) {
            return PD_CMD_OK;
        } else if ((v = pd_cmd_option("new", argc, argv, &i, "--dir", NULL, &bad)) != NULL) {
            dir = v;
        } else if (!bad && (v = pd_cmd_option("new", argc, argv, &i, "--lang", NULL, &bad))) {
            lang = v;
        } else if (bad) {
            return PD_CMD_USAGE;
        } else if (argv[i][0] == '-') {
            return pd_cmd_usage_error("new", "unknown option '%s'", argv[i]);
        } else if (name) {
            return pd_cmd_usage_error("new", "one NAME only ('%s' and '%s')", name, argv[i]);
        } else {
            name = argv[i];
        }
    }
    if (!name)
        return pd_cmd_usage_error("new", "missing NAME (the op's name, a C identifier)");
    if (!is_identifier(name) || strlen(name) > 100)
        return pd_cmd_usage_error("new",
                                  "NAME '%s' is not a C identifier of at most 100 characters "
                                  "(letters, digits, '_'; not starting with a digit)",
                                  name);
    if (strcmp(lang, "c") != 0)
        return pd_cmd_usage_error("new",
                                  "--lang %s: this pdext writes C scaffolds only (--lang c); "
                                  "see examples/ for CUDA and the Paddle front",
                                  lang);
    char paths[N_FILES][4096];
    const char *tpls[N_FILES] = {pd_new_tpl_op_c, pd_new_tpl_README_md, pd_new_tpl_check_sh};
    const char *dir_used = dir ? dir : name;
    snprintf(paths[0], sizeof paths[0], "%s/%s.c", dir_used, name);
    snprintf(paths[1], sizeof paths[1], "%s/README.md", dir_used);
    snprintf(paths[2], sizeof paths[2], "%s/check.sh", dir_used);
    for (int f = 0; f < N_FILES; ++f) {
        struct stat sb;
        if (stat(paths[f], &sb) == 0) {
            pd_cmd_error("new",
                         "%s exists; pdext new never overwrites (choose another --dir or NAME)",
                         paths[f]);
            return PD_CMD_FAILED;
        }
    }
    if (!make_dirs(dir_used)) {
        pd_cmd_error("new", "cannot make directory %s: %s", dir_used, strerror(errno));
        return PD_CMD_FAILED;
    }
    for (int f = 0; f < N_FILES; ++f) {
        char *text = fill(tpls[f], name);
        bool ok = write_new(paths[f], text, f == 2 ? 0777 : 0666);
        free(text);
        if (!ok) {
            pd_cmd_error("new", "cannot write %s: %s", paths[f], strerror(errno));
            return PD_CMD_FAILED;
        }
    }
    printf("wrote %s, %s, %s\nnext: pdext check %s\n", paths[0], paths[1], paths[2], paths[0]);
    return PD_CMD_OK;
}
