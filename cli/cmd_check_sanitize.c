/*
 * cmd_check_sanitize.c - `pdext check --sanitize`: the same checks on the module rebuilt with
 * AddressSanitizer and UndefinedBehaviorSanitizer, in a child `pdext check` so that a kernel
 * that crashes or trips a sanitizer ends the child, not the command.
 *
 * The child gets the command's arguments without --sanitize, plus the sanitizer flags for the
 * JIT (a different build key, so a build of its own), with the ASan runtime preloaded (pdext
 * itself is not instrumented, and ASan must come first) and both sanitizers set to stop at
 * the first report with an exit status of their own. Before each check the child writes
 * "@case OP DTYPE CHECK" on its stderr; when it dies, the last such line names the case, and
 * the sanitizer's first lines say what happened.
 */
#include "pdext_cmd.h"

#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define SANITIZER_EXIT 86 /* the child's exit status after a sanitizer report */

/* The ASan runtime the compiler links against ("" if the compiler does not say). */
static void asan_runtime(char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *p = popen("${CC:-cc} -print-file-name=libasan.so 2>/dev/null", "r");
    if (p) {
        if (fgets(buf, (int)size, p) == NULL)
            buf[0] = '\0';
        pclose(p);
    }
    buf[strcspn(buf, "\n")] = '\0';
    if (buf[0] != '/')
        buf[0] = '\0';
}

/* Prints what the child's stderr says about the crash: the last case, the first report lines. */
static void report_crash(FILE *err, int status)
{
    char line[1024], last_case[512] = "(before the first check)", report[4][256];
    int n_report = 0;
    while (fgets(line, sizeof line, err)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "@case ", 6) == 0)
            snprintf(last_case, sizeof last_case, "%.500s", line + 6);
        else if (n_report < 4 && (strstr(line, "ERROR: AddressSanitizer") ||
                                  strstr(line, "runtime error") || n_report > 0))
            snprintf(report[n_report++], sizeof report[0], "%.250s", line);
    }
    printf("%-45s FAIL sanitize: the child %s while checking it\n", last_case,
           WIFSIGNALED(status) ? "was killed by a signal" : "stopped at a sanitizer report");
    for (int i = 0; i < n_report; ++i)
        printf("    %s\n", report[i]);
}

int pd_cmd_check_sanitized(int argc, char **argv)
{
    char asan[1024], preload[1100];
    asan_runtime(asan, sizeof asan);
    if (!asan[0]) {
        pd_cmd_error("check", "--sanitize needs the compiler's ASan runtime (cc "
                              "-print-file-name=libasan.so found none)");
        return PD_CMD_FAILED;
    }
    char **args = pd_cmd_xmalloc(sizeof(char *) * (size_t)(argc + 8));
    int n = 0;
    args[n++] = (char *)"pdext";
    for (int i = 0; i < argc; ++i)
        if (strcmp(argv[i], "--sanitize") != 0)
            args[n++] = argv[i];
    args[n++] = (char *)"--cflags";
    args[n++] = (char *)"-fsanitize=address,undefined -fno-omit-frame-pointer -g";
    args[n++] = (char *)"--ldflags";
    args[n++] = (char *)"-fsanitize=address,undefined";
    args[n] = NULL;
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", asan);

    /* the child's environment: ours, with the sanitizer settings in front */
    int n_env = 0;
    while (environ[n_env])
        n_env++;
    char **env = pd_cmd_xmalloc(sizeof(char *) * (size_t)(n_env + 5));
    int k = 0;
    env[k++] = preload;
    env[k++] = (char *)"ASAN_OPTIONS=detect_leaks=0:exitcode=86:abort_on_error=0";
    env[k++] = (char *)"UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1:exitcode=86";
    env[k++] = (char *)"PDEXT_CHECK_CHILD=1";
    for (int i = 0; i < n_env; ++i)
        if (strncmp(environ[i], "LD_PRELOAD=", 11) != 0 &&
            strncmp(environ[i], "ASAN_OPTIONS=", 13) && strncmp(environ[i], "UBSAN_OPTIONS=", 14) &&
            strncmp(environ[i], "PDEXT_CHECK_CHILD=", 18))
            env[k++] = environ[i];
    env[k] = NULL;

    FILE *err = tmpfile();
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (err)
        posix_spawn_file_actions_adddup2(&fa, fileno(err), STDERR_FILENO);
    fflush(stdout);
    pid_t pid;
    int rc = err ? posix_spawn(&pid, "/proc/self/exe", &fa, NULL, args, env) : -1;
    posix_spawn_file_actions_destroy(&fa);
    free(args);
    free(env);
    int status = 0;
    if (rc != 0 || waitpid(pid, &status, 0) < 0) {
        pd_cmd_error("check", "could not start the sanitized check");
        if (err)
            fclose(err);
        return PD_CMD_FAILED;
    }
    rewind(err);
    if (WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == SANITIZER_EXIT)) {
        report_crash(err, status);
        fclose(err);
        return PD_CMD_FAILED;
    }
    /* a normal end: pass its messages on (without the case markers) */
    char line[1024];
    while (fgets(line, sizeof line, err))
        if (strncmp(line, "@case ", 6) != 0)
            fputs(line, stderr);
    fclose(err);
    return WIFEXITED(status) ? WEXITSTATUS(status) : PD_CMD_FAILED;
}
