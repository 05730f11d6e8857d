/*
 * cmd_new.c - `pdext new NAME [--lang c|cuda|paddle|aot] [--dir DIR]`: writes a ready-to-build
 * op from the scaffolds in templates/new (embedded at build time, pd_new_templates.h): the
 * source (c: NAME.c with forward and backward kernels and infer functions; cuda: the same with
 * its GPU kernels in NAME.cu, chosen by the input's place; paddle: NAME.cc against
 * paddle/extension.h; aot: NAME.cc, a MindSpore AOT function with Init and InferShape),
 * DIR/README.md and DIR/check.sh, which runs `pdext check` on it. Every scaffold passes
 * `pdext check` as written.
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
    "usage: pdext new NAME [--lang c|cuda|paddle|aot] [--dir DIR]\n"
    "\n"
    "Writes a new op NAME (a C identifier) into DIR (default ./NAME, made if missing): its\n"
    "source, README.md, and check.sh, which runs `pdext check` on it. Refuses to overwrite\n"
    "any file. --lang picks the source:\n"
    "  c       NAME.c: forward and backward kernels and infer functions (extension.h; default)\n"
    "  cuda    NAME.c with the CPU kernels and NAME.cu with the GPU ones, chosen by the\n"
    "          input's place (check.sh checks NAME.c alone where there is no nvcc)\n"
    "  paddle  NAME.cc written against paddle/extension.h, as Paddle's guide writes ops\n"
    "  aot     NAME.cc: a MindSpore AOT function with Init and InferShape (pdext_aot.h)\n";

#define MAX_FILES 4

/* One language's scaffold: each file's template and path in DIR ("%s" is NAME). */
typedef struct new_lang {
    const char *lang;
    int n_files;
    struct {
        const char *tpl;
        const char *path;
    } files[MAX_FILES];
} new_lang;

static const new_lang langs[] = {
    {"c",
     3,
     {{pd_new_tpl_op_c, "%s.c"},
      {pd_new_tpl_README_md, "README.md"},
      {pd_new_tpl_check_sh, "check.sh"}}},
    {"cuda",
     4,
     {{pd_new_tpl_cuda_op_c, "%s.c"},
      {pd_new_tpl_cuda_op_cu, "%s.cu"},
      {pd_new_tpl_cuda_README_md, "README.md"},
      {pd_new_tpl_cuda_check_sh, "check.sh"}}},
    {"paddle",
     3,
     {{pd_new_tpl_paddle_op_cc, "%s.cc"},
      {pd_new_tpl_paddle_README_md, "README.md"},
      {pd_new_tpl_paddle_check_sh, "check.sh"}}},
    {"aot",
     3,
     {{pd_new_tpl_aot_op_cc, "%s.cc"},
      {pd_new_tpl_aot_README_md, "README.md"},
      {pd_new_tpl_aot_check_sh, "check.sh"}}},
};

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
    if (!pd_name_is_identifier(name) || strlen(name) > 100)
        return pd_cmd_usage_error("new",
                                  "NAME '%s' is not a C identifier of at most 100 characters "
                                  "(letters, digits, '_'; not starting with a digit)",
                                  name);
    const new_lang *l = NULL;
    for (size_t k = 0; k < sizeof langs / sizeof langs[0]; ++k)
        if (strcmp(lang, langs[k].lang) == 0)
            l = &langs[k];
    if (l == NULL)
        return pd_cmd_usage_error("new", "--lang %s: expected c, cuda, paddle or aot", lang);
    char paths[MAX_FILES][4096];
    const char *dir_used = dir ? dir : name;
    for (int f = 0; f < l->n_files; ++f) {
        char file[256];
        snprintf(file, sizeof file, l->files[f].path, name);
        snprintf(paths[f], sizeof paths[f], "%s/%s", dir_used, file);
    }
    for (int f = 0; f < l->n_files; ++f) {
        struct stat sb;
        if (stat(paths[f], &sb) == 0) {
            pd_cmd_error("new",
                         "%s exists; pdext new never overwrites (choose another --dir or NAME)",
                         paths[f]);
            return PD_CMD_FAILED;
        }
    }
    if (!pd_cmd_make_dirs(dir_used)) {
        pd_cmd_error("new", "cannot make directory %s: %s", dir_used, strerror(errno));
        return PD_CMD_FAILED;
    }
    for (int f = 0; f < l->n_files; ++f) {
        char *text = fill(l->files[f].tpl, name);
        bool script = strcmp(l->files[f].path, "check.sh") == 0;
        bool ok = write_new(paths[f], text, script ? 0777 : 0666);
        free(text);
        if (!ok) {
            pd_cmd_error("new", "cannot write %s: %s", paths[f], strerror(errno));
            return PD_CMD_FAILED;
        }
    }
    printf("wrote");
    for (int f = 0; f < l->n_files; ++f)
        printf("%s %s", f ? "," : "", paths[f]);
    printf("\nnext: %s/check.sh (runs pdext check)\n", dir_used);
    return PD_CMD_OK;
}
