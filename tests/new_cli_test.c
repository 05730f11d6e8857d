/*
 * new_cli_test.c - `pdext new NAME --lang c|cuda|paddle|aot`: each scaffold's check.sh (which
 * runs `pdext check` on it) passes as written, the CUDA scaffold's CPU half checks alone and
 * both halves build and check where nvcc is found, and no language overwrites a file. Each
 * test runs the built command in its own temporary directory and JIT cache.
 */
#include "pd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char out_store[1 << 16];
static const char *out_buf = out_store; /* stdout and stderr of the last command */

static void slurp(const char *path)
{
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(out_store, 1, sizeof out_store - 1, fp) : 0;
    out_store[n] = '\0';
    if (fp)
        fclose(fp);
}

/* Runs `sh -c CMD` in dir with PDEXT, a private cache and one CUDA architecture; the exit
 * status, with the output in out_buf. */
static int run_in(const char *dir, const char *cmd)
{
    char full[4096], path[128];
    snprintf(full, sizeof full,
             "cd %s && export PDEXT='%s' PDEXT_CACHE_DIR=%s/cache PDEXT_CUDA_ARCH=75 && "
             "( %s ) >%s/out 2>&1 </dev/null",
             dir, PDEXT_CMD, dir, cmd, dir);
    int status = system(full);
    snprintf(path, sizeof path, "%s/out", dir);
    slurp(path);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static char *fresh_dir(char *buf, size_t cap)
{
    snprintf(buf, cap, "/tmp/pdext_new_test.XXXXXX");
    return mkdtemp(buf);
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        pd_test_fail(__FILE__, __LINE__, "could not remove %s", dir);
}

/* nvcc as the JIT finds it (NVCC, CUDA_HOME, PATH, /usr/local/cuda), or not. */
static bool have_nvcc(void)
{
    return system("for n in \"$NVCC\" \"${CUDA_HOME:+$CUDA_HOME/bin/nvcc}\" "
                  "\"$(command -v nvcc)\" /usr/local/cuda/bin/nvcc; do [ -n \"$n\" ] && "
                  "[ -x \"$n\" ] && exit 0; done; exit 1") == 0;
}

#define EXPECT_RUN(dir, want, cmd)                                                          \
    do {                                                                                    \
        int rc_ = run_in(dir, cmd);                                                         \
        PD__TEST_CHECK((void)0, rc_ == (want), "'%s' exited %d, expected %d\n%s", cmd, rc_, \
                       (want), out_buf);                                                    \
    } while (0)

PD_TEST(NewCli, PaddleScaffoldPassesCheckAsWritten)
{
    char dir[64];
    PD_ASSERT(fresh_dir(dir, sizeof dir) != NULL);
    EXPECT_RUN(dir, 0, "$PDEXT new sq --lang paddle");
    PD_EXPECT_CONTAINS(out_buf, "wrote sq/sq.cc, sq/README.md, sq/check.sh");
    EXPECT_RUN(dir, 0, "./sq/check.sh");
    PD_EXPECT_CONTAINS(out_buf, "sq                   float64   gradcheck      ok");
    PD_EXPECT_CONTAINS(out_buf, " 0 failed");
    remove_dir(dir);
}

PD_TEST(NewCli, AotScaffoldPassesCheckAsWritten)
{
    char dir[64];
    PD_ASSERT(fresh_dir(dir, sizeof dir) != NULL);
    EXPECT_RUN(dir, 0, "$PDEXT new Square --lang aot");
    PD_EXPECT_CONTAINS(out_buf, "wrote Square/Square.cc, Square/README.md, Square/check.sh");
    EXPECT_RUN(dir, 0, "./Square/check.sh");
    PD_EXPECT_CONTAINS(out_buf, "takes float32 float64");
    PD_EXPECT_CONTAINS(out_buf, "Square               float32   shapes");
    PD_EXPECT_CONTAINS(out_buf, " 0 failed");
    /* The file runs as the README shows, and as MindSpore would call it. */
    EXPECT_RUN(dir, 0, "$PDEXT list Square/Square.cc:Square");
    PD_EXPECT_CONTAINS(out_buf, "Init InferShape");
    remove_dir(dir);
}

PD_TEST(NewCli, CudaScaffoldsCpuHalfPassesCheckAlone)
{
    char dir[64];
    PD_ASSERT(fresh_dir(dir, sizeof dir) != NULL);
    EXPECT_RUN(dir, 0, "$PDEXT new sq --lang cuda");
    PD_EXPECT_CONTAINS(out_buf, "wrote sq/sq.c, sq/sq.cu, sq/README.md, sq/check.sh");
    EXPECT_RUN(dir, 0, "$PDEXT check sq/sq.c");
    PD_EXPECT_CONTAINS(out_buf, "sq                   float64   gradcheck      ok");
    PD_EXPECT_CONTAINS(out_buf, " 0 failed");
    remove_dir(dir);
}

PD_TEST(NewCli, CudaScaffoldBuildsWithNvccAndPassesCheckOnTheCpu)
{
    if (!have_nvcc()) {
        printf("nvcc not found: the CUDA half of the scaffold is not built here\n");
        return;
    }
    char dir[64];
    PD_ASSERT(fresh_dir(dir, sizeof dir) != NULL);
    EXPECT_RUN(dir, 0, "$PDEXT new sq --lang cuda");
    EXPECT_RUN(dir, 0, "./sq/check.sh"); /* sq.c and sq.cu, nvcc compiling the latter */
    PD_EXPECT_CONTAINS(out_buf, "sq                   float32   gradcheck      ok");
    PD_EXPECT_CONTAINS(out_buf, " 0 failed");
    remove_dir(dir);
}

PD_TEST(NewCli, NoLanguageOverwritesAFile)
{
    static const char *const langs[] = {"c", "cuda", "paddle", "aot"};
    char dir[64];
    PD_ASSERT(fresh_dir(dir, sizeof dir) != NULL);
    for (int k = 0; k < 4; ++k) {
        char cmd[256];
        snprintf(cmd, sizeof cmd, "$PDEXT new op_%s --lang %s --dir d_%s", langs[k], langs[k],
                 langs[k]);
        EXPECT_RUN(dir, 0, cmd);
        EXPECT_RUN(dir, 1, cmd);
        PD_EXPECT_CONTAINS(out_buf, "exists; pdext new never overwrites");
    }
    /* Another op into a scaffold's directory: its README.md is there already. */
    EXPECT_RUN(dir, 1, "$PDEXT new other --lang aot --dir d_c");
    PD_EXPECT_CONTAINS(out_buf, "d_c/README.md exists");
    remove_dir(dir);
}
