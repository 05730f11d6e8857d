/*
 * bundle_util.h - the small tools `pdext bundle` (cmd_bundle.c) is built from: string
 * lists, running a program with its output passed through, finding programs on PATH,
 * filling a template, and the SDK's own locations. Private to the command.
 */
#ifndef PD_BUNDLE_UTIL_H
#define PD_BUNDLE_UTIL_H

#include <stdbool.h>
#include <stddef.h>

/* A NULL-terminated, growable list of malloc'd strings (ready to be an argv). Allocation
 * failure is fatal for a command: the helpers print and exit(1). */
typedef struct bu_list {
    char **v;
    int n, cap;
} bu_list;

void bu_add(bu_list *l, const char *s);
void bu_addf(bu_list *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends every whitespace-separated word of `s` (CC="ccache gcc", --cflags "-O2 -g"). */
void bu_add_words(bu_list *l, const char *s);
void bu_add_all(bu_list *l, const bu_list *from);
void bu_free(bu_list *l);

/* malloc'd printf; never NULL. */
char *bu_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Runs argv (argv[0] searched on PATH) with stdin/stdout/stderr inherited, so compiler
 * diagnostics reach the user as the compiler wrote them. With `verbose`, prints the command
 * line first. Returns the exit status, 127 if it could not be started, 128+N for signal N. */
int bu_run(char *const argv[], bool verbose);

/* The resolved path of `word` (a path, or a name looked up on PATH) if it is an executable
 * file; malloc'd, NULL if not found. */
char *bu_which(const char *word);

/* `tpl` with every @KEY@ replaced by its value from keys/values (n pairs); unknown @...@
 * are kept as written. malloc'd. */
char *bu_fill(const char *tpl, const char *const *keys, const char *const *values, int n);

/* Writes `text` to `path` (created or truncated, mode 0644); false with errno on failure. */
bool bu_write_file(const char *path, const char *text);


/* Removes `dir` and the files directly in it (the command's temporary directory). */
void bu_remove_tree(const char *dir);

#endif /* PD_BUNDLE_UTIL_H */
