/*
 * examples_check_test.c - `pdext check` passes on every example of the repository that has
 * ops of its own (relu, concat, the Paddle front's relu with and without its CUDA half and
 * concat, the MindSpore AOT kernel, the training ops), with the options each README gives;
 * and every directory under examples/ is either checked here or named with the reason it has
 * no ops of its own, so that a new example cannot be left out unnoticed. Each run uses its own
 * temporary directory and JIT cache.
 */
#include "pd_test.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char out_store[1 << 16];
static const char *out_buf = out_store; /* stdout and stderr of the last check */

/* Runs `pdext check ARGS` (examples paths relative to examples/) in a fresh directory. */
static int check(const char *args)
{
    char dir[64] = "/tmp/pdext_examples_check.XXXXXX", cmd[4096], path[128];
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(cmd, sizeof cmd,
             "cd '%s' && PDEXT_CACHE_DIR=%s/cache PDEXT_CUDA_ARCH=75 '%s' check %s >%s/out 2>&1 "
             "</dev/null",
             PDEXT_EXAMPLES, dir, PDEXT_CMD, args, dir);
    int status = system(cmd);
    snprintf(path, sizeof path, "%s/out", dir);
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(out_store, 1, sizeof out_store - 1, fp) : 0;
    out_store[n] = '\0';
    if (fp)
        fclose(fp);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        pd_test_fail(__FILE__, __LINE__, "could not remove %s", dir);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

#define EXPECT_CHECK_PASSES(args)                                                              \
    do {                                                                                       \
        int rc_ = check(args);                                                                 \
        PD__TEST_CHECK((void)0, rc_ == 0, "pdext check %s exited %d\n%s", args, rc_, out_buf); \
        PD_EXPECT_CONTAINS(out_buf, " 0 failed");                                              \
    } while (0)

/* Every example directory: how it is checked, or why it has nothing to check. */
static const struct {
    const char *dir;
    const char *why_not; /* NULL: checked by a test below */
} examples[] = {
    {"relu", NULL},
    {"concat", NULL},
    {"paddle", NULL},
    {"aot", NULL},
    {"train", NULL},
    {"host", "a C host of the relu and concat examples' libraries"},
    {"inference", "a program linking the relu and concat examples as a static bundle"},
    {"python", "Python scripts calling the relu and concat examples"},
    {"jax", "a JAX training step through the train and relu examples (pdext.jax)"},
    {"pipeline", "a C host and a Python script running the relu example through an executor"},
    {"torch", "Python scripts registering the relu example with torch.library (run by "
              "tests/python/test_torch_ddp.py)"},
    {"ms_extension", "a MindSpore CustomOpBuilder source: a pybind11 module, no pdext ops; "
                     "tests/python/test_ms_extension*.py build and run it"},
    {"mindspore", "the relu and train examples registered in MindSpore (pdext.mindspore) and "
                  "MindSpore's own AOT relu; tests/python/test_mindspore_register.py runs them"},
};

PD_TEST(ExamplesCheck, EveryExampleDirectoryIsCheckedOrSaysWhyNot)
{
    DIR *d = opendir(PDEXT_EXAMPLES);
    PD_ASSERT(d != NULL);
    int seen = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        bool known = false;
        for (size_t k = 0; k < sizeof examples / sizeof examples[0]; ++k)
            known = known || strcmp(examples[k].dir, e->d_name) == 0;
        if (!known)
            pd_test_fail(__FILE__, __LINE__,
                         "examples/%s is neither checked by examples_check_test.c nor listed "
                         "there with the reason it has no ops of its own",
                         e->d_name);
        ++seen;
    }
    closedir(d);
    PD_EXPECT_EQ(seen, (int)(sizeof examples / sizeof examples[0]));
}

PD_TEST(ExamplesCheck, Relu) { EXPECT_CHECK_PASSES("relu/relu.c"); }

PD_TEST(ExamplesCheck, Concat) { EXPECT_CHECK_PASSES("concat/concat.c --attr axis=1"); }

PD_TEST(ExamplesCheck, PaddleRelu)
{
    EXPECT_CHECK_PASSES("paddle/custom_relu_op.cc");
    PD_EXPECT_CONTAINS(out_buf, "gradcheck x2   ok");
}

/* Both halves, as the README builds them for a GPU: nvcc compiles the .cu; checks run on the
 * CPU. */
PD_TEST(ExamplesCheck, PaddleReluWithItsCudaHalf)
{
    if (system("command -v nvcc >/dev/null 2>&1 || [ -x \"${CUDA_HOME:-/usr/local/cuda}/bin/nvcc\" "
               "]") != 0) {
        printf("nvcc not found: the CUDA half is not built here\n");
        return;
    }
    EXPECT_CHECK_PASSES("paddle/custom_relu_op.cc paddle/custom_relu_op.cu --cxxflags "
                        "-DPADDLE_WITH_CUDA --cuda-flags -DPADDLE_WITH_CUDA");
}

PD_TEST(ExamplesCheck, PaddleConcat)
{
    EXPECT_CHECK_PASSES("paddle/custom_concat_op.cc --attr axis=1");
}

PD_TEST(ExamplesCheck, MindSporeAotKernel)
{
    EXPECT_CHECK_PASSES("aot/scale_cumsum.cc:ScaleCumsum --attr scale=2 --attr bias=0.5");
    PD_EXPECT_CONTAINS(out_buf, "gradcheck      skip no grad op");
}

PD_TEST(ExamplesCheck, TrainingOps)
{
    EXPECT_CHECK_PASSES("train/train_ops.c --ldflags -lm --input X=4,3 --input W=3,5 --input B=5 "
                        "--input Logits=4,3 --input Label=4:int64");
}

/* README.md's "Is my op right?" block, run as printed from a copy of the repository's layout
 * (examples/ linked in): every `pdext ...` and `./...` line must exit 0. */
PD_TEST(ExamplesCheck, ReadmeSectionRunsAsPrinted)
{
    FILE *fp = fopen(PD_TEST_SOURCE_DIR "/README.md", "r");
    PD_ASSERT(fp != NULL);
    char line[1024];
    bool in_section = false, in_block = false;
    int ran = 0;
    char dir[64] = "/tmp/pdext_readme_check.XXXXXX";
    PD_ASSERT(mkdtemp(dir) != NULL);
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "ln -s '%s' '%s/examples'", PDEXT_EXAMPLES, dir);
    PD_ASSERT(system(cmd) == 0);
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\n")] = '\0';
        if (strncmp(line, "## ", 3) == 0)
            in_section = strcmp(line, "## Is my op right?") == 0;
        else if (in_section && strncmp(line, "```", 3) == 0)
            in_block = !in_block;
        else if (in_section && in_block &&
                 (strncmp(line, "pdext ", 6) == 0 || strncmp(line, "./", 2) == 0)) {
            snprintf(cmd, sizeof cmd,
                     "cd %s && export PDEXT='%s' PDEXT_CACHE_DIR=%s/cache && pdext() { "
                     "\"$PDEXT\" \"$@\"; } && %s >%s/out 2>&1 </dev/null",
                     dir, PDEXT_CMD, dir, line, dir);
            int status = system(cmd);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                snprintf(cmd, sizeof cmd, "%s/out", dir);
                FILE *o = fopen(cmd, "rb");
                size_t n = o ? fread(out_store, 1, sizeof out_store - 1, o) : 0;
                out_store[n] = '\0';
                if (o)
                    fclose(o);
                pd_test_fail(__FILE__, __LINE__, "README line failed: %s\n%s", line, out_buf);
            }
            ++ran;
        }
    }
    fclose(fp);
    PD_EXPECT(ran >= 6);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    PD_EXPECT_EQ(system(cmd), 0);
}
