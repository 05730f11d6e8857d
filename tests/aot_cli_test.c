/* aot_cli_test.c - `pdext run FILE:FUNC` and `pdext list FILE:FUNC` on MindSpore AOT
 * functions, run as a subprocess: the example (examples/aot) compiled from source, a prebuilt
 * test library, unnamed inputs binding in order (for pdext ops too), untyped attrs, output
 * shapes and dtypes given on the command line, and the failures. Each test uses its own
 * temporary directory and PDEXT_CACHE_DIR. */
#include "pd_test.h"
#include "pdext_npy.h"

#include <dirent.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* --- Helpers ------------------------------------------------------------------------------ */

static char dir[256]; /* this test's working directory */
static char out_buf[1 << 16], err_buf[1 << 16];
static const char *out_text = out_buf; /* stdout of the last command */
static const char *err_text = err_buf; /* stderr of the last command */

static const char *in_dir(const char *name)
{
    static char buf[4][512];
    static int slot;
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/pdext_aot_cli_test.XXXXXX");
        if (mkdtemp(dir) == NULL)
            abort();
    }
    char *p = buf[slot++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    return p;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

static void done(void)
{
    if (dir[0])
        nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    dir[0] = '\0';
}

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(buf, 1, cap - 1, fp) : 0;
    buf[n] = '\0';
    if (fp)
        fclose(fp);
}

/* Runs `pdext ARGS` in the test directory with its own cache; returns the exit status and
 * leaves the output in out_text / err_text. */
static int pdext(const char *fmt, ...) PD_PRINTF(1, 2);
static int pdext(const char *fmt, ...)
{
    char args[4096], cmd[8192];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    const char *work = in_dir("");
    snprintf(cmd, sizeof cmd,
             "cd %s && PDEXT_CACHE_DIR=%s/cache PDEXT_EXAMPLES_DIR=%s '%s' %s >%s/.stdout "
             "2>%s/.stderr </dev/null",
             work, dir, PDEXT_EXAMPLES, PDEXT_CMD, args, dir, dir);
    int status = system(cmd);
    slurp(in_dir(".stdout"), out_buf, sizeof out_buf);
    slurp(in_dir(".stderr"), err_buf, sizeof err_buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Runs and expects exit status `want`; shows the output otherwise. */
#define EXPECT_PDEXT(want, ...)                                     \
    do {                                                            \
        int pd__rc = pdext(__VA_ARGS__);                            \
        PD__TEST_CHECK((void)0, pd__rc == (want),                   \
                       "pdext exited %d, expected %d\nstdout: %s\n" \
                       "stderr: %s",                                \
                       pd__rc, (want), out_text, err_text);         \
    } while (0)

static void save_floats(const char *name, int32_t ndim, const int64_t *shape, const float *v)
{
    pd_tensor t;
    if (pd_tensor_empty(&t, PD_FLOAT32, pd_place_cpu(), ndim, shape) != PD_OK)
        abort();
    memcpy(t.data, v, pd_nbytes(&t));
    if (pd_npy_save(in_dir(name), &t) != PD_OK)
        abort();
    pd_tensor_release(&t);
}

/* Loads an output and compares it with `want`. */
static void expect_floats(const char *name, int32_t ndim, const int64_t *shape, const float *want)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_npy_load(in_dir(name), &t));
    PD_EXPECT_EQ(t.dtype, PD_FLOAT32);
    PD_EXPECT_EQ(t.ndim, ndim);
    bool same_shape = t.ndim == ndim && memcmp(t.shape, shape, sizeof(int64_t) * (size_t)ndim) == 0;
    PD_EXPECT(same_shape);
    for (int64_t i = 0; same_shape && i < pd_numel(&t); ++i)
        PD_EXPECT_NEAR(((float *)t.data)[i], want[i], 0);
    pd_tensor_release(&t);
}

#define EXAMPLE PDEXT_EXAMPLES "/aot/scale_cumsum.cc"

static const char *kernels(void) { return pd_test_path("aot_kernels_old.so"); }

static const float x4[4] = {1, 2, 3, 4};
static const int64_t s4[1] = {4};

PD_TEST(AotCli, RunsTheExampleFromItsSourceAsTheReadmeShows)
{
    /* scale * cumsum(x) + bias */
    static const float want[4] = {2 * 1 + 0.5f, 2 * 3 + 0.5f, 2 * 6 + 0.5f, 2 * 10 + 0.5f};
    save_floats("x.npy", 1, s4, x4);
    EXPECT_PDEXT(0, "run %s:ScaleCumsum --input x.npy --attr scale=2 --attr bias=0.5 --out out",
                 EXAMPLE);
    PD_EXPECT_CONTAINS(out_text, "out0  shape=[4]  dtype=float32");
    expect_floats("out/out0.npy", 1, s4, want);
    static const float rev[4] = {10, 9, 7, 4}; /* reverse=true, scale 1, bias 0 */
    EXPECT_PDEXT(0,
                 "run %s:ScaleCumsum --input x.npy --attr scale=1 --attr bias=0 --attr "
                 "reverse=true --out out",
                 EXAMPLE);
    expect_floats("out/out0.npy", 1, s4, rev);
    done();
}

PD_TEST(AotCli, ListShowsWhatWasLearnedFromTheLibrary)
{
    EXPECT_PDEXT(0, "list %s:ScaleCumsum", EXAMPLE);
    PD_EXPECT_CONTAINS(out_text, "ScaleCumsum");
    PD_EXPECT_CONTAINS(out_text, "inputs:  in0");
    PD_EXPECT_CONTAINS(out_text, "outputs: out0");
    PD_EXPECT_CONTAINS(out_text, "MindSpore AOT, new std::string ABI");
    PD_EXPECT_CONTAINS(out_text, "Init InferShape");
    EXPECT_PDEXT(0, "list %s:CustomConcat --inputs 2", kernels());
    PD_EXPECT_CONTAINS(out_text, "inputs:  in0, in1");
    PD_EXPECT_CONTAINS(out_text, "old (_GLIBCXX_USE_CXX11_ABI=0)");
    done();
}

PD_TEST(AotCli, PrebuiltLibraryTakesInputsInOrderAndUntypedAttrs)
{
    static const float b4[4] = {10, 20, 30, 40};
    save_floats("a.npy", 1, s4, x4);
    save_floats("b.npy", 1, s4, b4);
    EXPECT_PDEXT(0, "run %s:CustomAdd --input a.npy --input b.npy --out out", kernels());
    static const float sum[4] = {11, 22, 33, 44};
    expect_floats("out/out0.npy", 1, s4, sum);
    /* scale=2 declared int64 by its text, read by Attr<float>; offset=1.0 the other way */
    EXPECT_PDEXT(0,
                 "run %s:CustomAffine --input a.npy --attr scale=2 --attr offset=1.0 --attr "
                 "mode=neg --out out",
                 kernels());
    static const float aff[4] = {-3, -5, -7, -9};
    expect_floats("out/out0.npy", 1, s4, aff);
    done();
}

PD_TEST(AotCli, OutShapeAndDtypeGiveTheOutput)
{
    static const float b4[4] = {1, 1, 1, 1};
    static const int64_t s22[2] = {2, 2};
    save_floats("a.npy", 1, s4, x4);
    save_floats("b.npy", 1, s4, b4);
    EXPECT_PDEXT(0,
                 "run %s:CustomAdd --input a.npy --input b.npy --out-shape 2,2 --out-dtype "
                 "float32 --out out",
                 kernels());
    PD_EXPECT_CONTAINS(out_text, "out0  shape=[2, 2]  dtype=float32");
    static const float want[4] = {2, 3, 4, 5};
    expect_floats("out/out0.npy", 2, s22, want);
    EXPECT_PDEXT(2, "run %s:CustomAdd --input a.npy --out-dtype float33", kernels());
    PD_EXPECT_CONTAINS(err_text, "float33");
    done();
}

PD_TEST(AotCli, KernelErrorCodeAndMissingFunctionFailWithTheirMessages)
{
    save_floats("a.npy", 1, s4, x4);
    EXPECT_PDEXT(1, "run %s:CustomFails --input a.npy", kernels());
    PD_EXPECT_CONTAINS(err_text, "returned error code 7");
    EXPECT_PDEXT(1, "run %s:CustomAd --input a.npy", kernels());
    PD_EXPECT_CONTAINS(err_text, "similar exported names: CustomAdd");
    EXPECT_PDEXT(1, "run %s:ScaleCumsum --input a.npy --attr scale=2", EXAMPLE);
    PD_EXPECT_CONTAINS(err_text, "attr 'bias'");
    done();
}

/* The output's shape comes from an InferShape that reads attrs (keep_dim given in Python's
 * spelling, as MindSpore users write it); Init keeps them as kernel data. */
PD_TEST(AotCli, InferShapeReadsTheAttrsGivenOnTheCommandLine)
{
    static const float x6[6] = {1, 2, 3, 4, 5, 6};
    static const int64_t s23[2] = {2, 3}, s21[2] = {2, 1}, s3[1] = {3};
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(0, "run %s:CustomSum --input x.npy --attr axis=1 --attr keep_dim=True --out out",
                 kernels());
    static const float rows[2] = {6, 15};
    expect_floats("out/out0.npy", 2, s21, rows);
    EXPECT_PDEXT(0, "run %s:CustomSum --input x.npy --attr axis=0 --attr keep_dim=false --out out",
                 kernels());
    static const float cols[3] = {5, 7, 9};
    expect_floats("out/out0.npy", 1, s3, cols);
    done();
}

/* --input FILE without a name binds the next unbound input of a pdext op too. */
PD_TEST(AotCli, UnnamedInputBindsTheNextInputOfAPdextOp)
{
    static const float x6[6] = {-1, 2, -3, 4, -0.5f, 0.25f};
    static const int64_t s23[2] = {2, 3};
    static const float want[6] = {0, 2, 0, 4, 0, 0.25f};
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(0, "run %s --op custom_relu --input x.npy --out out", pd_test_path("cli_relu.so"));
    expect_floats("out/Out.npy", 2, s23, want);
    EXPECT_PDEXT(1, "run %s --op custom_relu --input x.npy --input x.npy --out out",
                 pd_test_path("cli_relu.so"));
    PD_EXPECT_CONTAINS(err_text, "bound already");
    done();
}

/* examples/aot/host.c, built as its README shows, prints scale * cumsum(1, 1, 1, 1) + bias. */
PD_TEST(AotCli, ExampleHostRunsTheKernelThroughTheHostApi)
{
    char cmd[4096];
    const char *work = in_dir("");
    snprintf(cmd, sizeof cmd,
             "cd %s && PDEXT_CACHE_DIR=%s/cache '%s' '%s' >%s/.stdout 2>%s/.stderr", work, dir,
             AOT_EXAMPLE_HOST, EXAMPLE, dir, dir);
    int status = system(cmd);
    slurp(in_dir(".stdout"), out_buf, sizeof out_buf);
    slurp(in_dir(".stderr"), err_buf, sizeof err_buf);
    PD_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    PD_EXPECT_CONTAINS(out_text, "2.5 4.5 6.5 8.5");
    PD_EXPECT_STREQ(err_text, "");
    done();
}
