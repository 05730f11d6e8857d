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

#include "cli_support.h"

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
    /* A number with no int64_t value is refused, never converted (undefined behaviour that
     * gave INT64_MIN). */
    static const char *const huge[] = {"1e30", "9223372036854775808", "nan", "inf", "-1e19"};
    for (size_t i = 0; i < sizeof huge / sizeof *huge; ++i) {
        EXPECT_PDEXT(1, "run %s:CustomSum --input x.npy --attr axis=%s --attr keep_dim=True",
                     kernels(), huge[i]);
        PD_EXPECT_CONTAINS(err_text, "attr 'axis'");
        PD_EXPECT_CONTAINS(err_text, "cannot be read as int64_t (outside -2^63 .. 2^63-1)");
    }
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
