/* pdext_cli_test.c - the `pdext` command end to end, run as a subprocess on the example
 * sources and on the relu example built as a module: help and version, list, run (forward,
 * grad, vector inputs, attrs, .npz members), build, demo, the second run that compiles
 * nothing, and every failure exiting non-zero with its message on stderr. Each test uses its
 * own temporary directory and PDEXT_CACHE_DIR. */
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

static const char *relu_so(void) { return pd_test_path("cli_relu.so"); }
#define RELU_C PDEXT_EXAMPLES "/relu/relu.c"
#define CONCAT_C PDEXT_EXAMPLES "/concat/concat.c"

static const float x6[6] = {-1, 2, -3, 4, -0.5f, 0.25f};
static const int64_t s23[2] = {2, 3};

/* The one module directory under cache/, or NULL. */
static const char *module_dir(void)
{
    static char path[1024];
    DIR *d = opendir(in_dir("cache"));
    const char *found = NULL;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.') {
            snprintf(path, sizeof path, "%s/cache/%s", dir, e->d_name);
            found = path;
        }
    if (d)
        closedir(d);
    return found;
}

/* --- Help, version, usage ----------------------------------------------------------------- */

PD_TEST(Cli, HelpListsEveryCommand)
{
    EXPECT_PDEXT(0, "--help");
    PD_EXPECT_CONTAINS(out_text, "usage: pdext");
    for (const char *const *c =
             (const char *const[]){"build", "list", "run", "demo", "bundle", NULL};
         *c; ++c)
        PD_EXPECT_CONTAINS(out_text, *c);
    /* each command's options that change what it makes (new's languages were missing) */
    PD_EXPECT_CONTAINS(out_text, "new NAME [--lang c|cuda|paddle|aot] [--dir DIR]");
    EXPECT_PDEXT(0, "run --help");
    PD_EXPECT_CONTAINS(out_text, "--input [NAME=]FILE");
    done();
}

PD_TEST(Cli, VersionShowsSdkVersionAndAbi)
{
    EXPECT_PDEXT(0, "--version");
    PD_EXPECT_CONTAINS(out_text, PD_VERSION_STRING);
    char abi[32];
    snprintf(abi, sizeof abi, "ABI %d.%d", PD_ABI_MAJOR, PD_ABI_MINOR);
    PD_EXPECT_CONTAINS(out_text, abi);
    done();
}

PD_TEST(Cli, UsageErrorsExitTwoWithAMessageOnStderr)
{
    EXPECT_PDEXT(2, "%s", "");
    PD_EXPECT_CONTAINS(err_text, "usage: pdext");
    EXPECT_PDEXT(2, "frobnicate");
    PD_EXPECT_CONTAINS(err_text, "unknown command 'frobnicate'");
    EXPECT_PDEXT(2, "run %s --input X=x.npy", relu_so());
    PD_EXPECT_CONTAINS(err_text, "missing --op");
    EXPECT_PDEXT(2, "run %s --op custom_relu --input =x.npy", relu_so());
    PD_EXPECT_CONTAINS(err_text, "is not [NAME=]FILE");
    EXPECT_PDEXT(2, "run %s --op custom_relu --bogus", relu_so());
    PD_EXPECT_CONTAINS(err_text, "unknown option '--bogus'");
    EXPECT_PDEXT(2, "build %s", RELU_C);
    PD_EXPECT_CONTAINS(err_text, "missing -o");
    PD_EXPECT_EQ(out_text[0], '\0');
    done();
}

/* --- list ---------------------------------------------------------------------------------- */

PD_TEST(Cli, ListShowsTheOpsOfALibraryWithTheirGradOps)
{
    EXPECT_PDEXT(0, "list %s", relu_so());
    PD_EXPECT_CONTAINS(out_text, "2 ops");
    PD_EXPECT_CONTAINS(out_text, "custom_relu\n  inputs:  X\n  outputs: Out\n  attrs:   (none)\n"
                                 "  grad:    custom_relu_grad\n");
    PD_EXPECT_CONTAINS(out_text, "custom_relu_grad  (grad of custom_relu)\n"
                                 "  inputs:  X, Out, Out@GRAD\n  outputs: X@GRAD\n");
    done();
}

PD_TEST(Cli, ListShowsTheOpsOfSourcesWithAttrTypesAndVectors)
{
    EXPECT_PDEXT(0, "list %s", CONCAT_C);
    PD_EXPECT_CONTAINS(out_text, "custom_concat\n  inputs:  X (vector)\n  outputs: Out\n"
                                 "  attrs:   axis: int64_t\n  grad:    custom_concat_grad\n");
    PD_EXPECT_CONTAINS(out_text, "outputs: X@GRAD (vector)");
    PD_EXPECT_EQ(err_text[0], '\0'); /* no progress output off a terminal */
    done();
}

/* The command shows the runtime's parse of the declarations (pd_op_*_info): an unknown
 * segment such as "@VECTORS" stays part of the name, and attr defaults are shown. */
PD_TEST(Cli, ListShowsWhatTheRuntimeParsedIncludingDefaults)
{
    EXPECT_PDEXT(0, "list %s", pd_test_path("td_decl_ops.so"));
    PD_EXPECT_CONTAINS(out_text, "td_vectors_name\n  inputs:  X@VECTORS\n  outputs: Out\n");
    PD_EXPECT_CONTAINS(out_text, "attrs:   flag: bool = true, axis: int = -1, scale: float = 0.5f, "
                                 "eps: double = 1e-5, big: int64_t = 4294967296, ");
    PD_EXPECT_CONTAINS(out_text, "tags: std::vector<std::string> = {\"a\", \"b,c\"}, "
                                 "need: int, n: int64_t = 7\n");
    done();
}

PD_TEST(Cli, RunLeavesAttrsWithDefaultsOptional)
{
    save_floats("x.npy", 1, (int64_t[]){1}, (const float[]){0});
    EXPECT_PDEXT(1, "run %s --op td_echo --input X=x.npy", pd_test_path("td_decl_ops.so"));
    PD_EXPECT_CONTAINS(err_text, "missing attr 'need' of td_echo");
    EXPECT_PDEXT(0, "run %s --op td_echo --input X=x.npy --attr need=4 --out out",
                 pd_test_path("td_decl_ops.so"));
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_npy_load(in_dir("out/Out.npy"), &t));
    PD_EXPECT_NEAR(((double *)t.data)[1], -1, 0); /* axis: its default */
    PD_EXPECT_NEAR(((double *)t.data)[14], 4, 0); /* need: given */
    pd_tensor_release(&t);
    done();
}

PD_TEST(Cli, VerboseShowsTheBuildOnStderr)
{
    EXPECT_PDEXT(0, "list -v %s", RELU_C);
    PD_EXPECT(strlen(err_text) > 0);
    PD_EXPECT_CONTAINS(out_text, "custom_relu");
    done();
}

/* --- run ----------------------------------------------------------------------------------- */

PD_TEST(Cli, RunReluOnSourcesWritesOutNpy)
{
    static const float want[6] = {0, 2, 0, 4, 0, 0.25f};
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(0, "run %s --op custom_relu --input X=x.npy --out out/", RELU_C);
    PD_EXPECT_CONTAINS(out_text, "Out  shape=[2, 3]  dtype=float32");
    expect_floats("out/Out.npy", 2, s23, want);
    done();
}

PD_TEST(Cli, SecondRunOfTheSameSourcesCompilesNothing)
{
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(0, "run %s --op custom_relu --input X=x.npy", RELU_C);
    const char *mod = module_dir();
    PD_ASSERT(mod != NULL);
    char ninja_file[1200];
    snprintf(ninja_file, sizeof ninja_file, "%s/build.ninja", mod);
    struct stat before, after;
    PD_ASSERT(stat(ninja_file, &before) == 0);
    sleep(1); /* make an mtime change visible even on coarse file systems */
    EXPECT_PDEXT(0, "run %s --op custom_relu --input X=x.npy", RELU_C);
    PD_ASSERT(stat(ninja_file, &after) == 0);
    PD_EXPECT(before.st_mtim.tv_sec == after.st_mtim.tv_sec &&
              before.st_mtim.tv_nsec == after.st_mtim.tv_nsec);
    PD_EXPECT_STREQ(module_dir(), mod); /* still the one module directory */
    static const float want[6] = {0, 2, 0, 4, 0, 0.25f};
    expect_floats("Out.npy", 2, s23, want); /* default --out: the current directory */
    done();
}

PD_TEST(Cli, RunsTheGradOpByItsRegisteredName)
{
    static const float out[6] = {0, 2, 0, 4, 0, 0.25f}, g[6] = {1, 2, 3, 4, 5, 6};
    static const float want[6] = {0, 2, 0, 4, 0, 6};
    save_floats("x.npy", 2, s23, x6);
    save_floats("out.npy", 2, s23, out);
    save_floats("g.npy", 2, s23, g);
    EXPECT_PDEXT(0,
                 "run %s --op custom_relu_grad --input X=x.npy --input Out=out.npy "
                 "--input Out@GRAD=g.npy --out res",
                 relu_so());
    PD_EXPECT_CONTAINS(out_text, "X@GRAD  shape=[2, 3]  dtype=float32  -> res/X@GRAD.npy");
    expect_floats("res/X@GRAD.npy", 2, s23, want);
    done();
}

PD_TEST(Cli, RunConcatTakesARepeatedVectorInputAndANegativeAxis)
{
    static const float a[4] = {1, 2, 3, 4}, b[2] = {5, 6};
    static const int64_t sa[2] = {2, 2}, sb[2] = {2, 1};
    static const float want[6] = {1, 2, 5, 3, 4, 6};
    save_floats("a.npy", 2, sa, a);
    pd_tensor tb;
    PD_ASSERT_OK(pd_tensor_empty(&tb, PD_FLOAT32, pd_place_cpu(), 2, sb));
    memcpy(tb.data, b, sizeof b);
    const char *names[1] = {"b"};
    PD_ASSERT_OK(pd_npz_save(in_dir("in.npz"), names, &tb, 1, true));
    pd_tensor_release(&tb);
    EXPECT_PDEXT(0, "run %s --op custom_concat --input X=a.npy --input X=in.npz:b --attr axis=-1",
                 CONCAT_C);
    PD_EXPECT_CONTAINS(out_text, "Out  shape=[2, 3]  dtype=float32");
    expect_floats("Out.npy", 2, s23, want);
    /* The grad op's vector output: one file per item. */
    EXPECT_PDEXT(0,
                 "run %s --op custom_concat_grad --input X=a.npy --input X=in.npz:b "
                 "--input Out@GRAD=Out.npy --attr axis=1 --out g",
                 CONCAT_C);
    expect_floats("g/X@GRAD_0.npy", 2, sa, a);
    expect_floats("g/X@GRAD_1.npy", 2, sb, b);
    done();
}

/* A vector output of 300 items, more than the 256 the command once guessed: the runner sizes
 * it, and every item is written. */
PD_TEST(Cli, RunWritesEveryItemOfALargeVectorOutput)
{
    enum { ROWS = 300 };
    static float x[ROWS * 2];
    for (int i = 0; i < ROWS * 2; ++i)
        x[i] = (float)i;
    save_floats("x.npy", 2, (int64_t[]){ROWS, 2}, x);
    EXPECT_PDEXT(0, "run '%s/tests/ops/check_rows.c' --op ck_rows --input X=x.npy --out rows",
                 PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(out_text, "Out[299]  shape=[2]  dtype=float32");
    expect_floats("rows/Out_0.npy", 1, (int64_t[]){2}, x);
    expect_floats("rows/Out_299.npy", 1, (int64_t[]){2}, x + 2 * 299);
    PD_EXPECT(access(in_dir("rows/Out_300.npy"), F_OK) != 0);
    done();
}

PD_TEST(Cli, BadAttrValueFailsNamingTheAttrAndItsType)
{
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(1, "run %s --op custom_concat --input X=x.npy --attr axis=one", CONCAT_C);
    PD_EXPECT_CONTAINS(err_text, "bad value 'one' for attr 'axis' of custom_concat: it is int64_t");
    EXPECT_PDEXT(1, "run %s --op custom_concat --input X=x.npy --attr axes=1", CONCAT_C);
    PD_EXPECT_CONTAINS(err_text, "no attr 'axes' (attrs: axis: int64_t)");
    PD_EXPECT(access(in_dir("Out.npy"), F_OK) != 0);
    done();
}

PD_TEST(Cli, UnknownOpFailsListingTheOps)
{
    EXPECT_PDEXT(1, "run %s --op custom_relu6 --input X=x.npy", relu_so());
    PD_EXPECT_CONTAINS(err_text, "no op 'custom_relu6'");
    PD_EXPECT_CONTAINS(err_text, "custom_relu_grad");
    done();
}

PD_TEST(Cli, MissingOrUnknownInputFailsNamingIt)
{
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(1, "run %s --op custom_relu_grad --input X=x.npy --input Out=x.npy", relu_so());
    PD_EXPECT_CONTAINS(err_text, "missing input 'Out@GRAD' of custom_relu_grad");
    EXPECT_PDEXT(1, "run %s --op custom_relu --input Y=x.npy", relu_so());
    PD_EXPECT_CONTAINS(err_text, "no input 'Y' (inputs: X)");
    EXPECT_PDEXT(1, "run %s --op custom_relu --input X=x.npy --input X=x.npy", relu_so());
    PD_EXPECT_CONTAINS(err_text, "not a vector input");
    EXPECT_PDEXT(1, "run %s --op custom_relu --input X=nothere.npy", relu_so());
    PD_EXPECT_CONTAINS(err_text, "input 'X'");
    PD_EXPECT_CONTAINS(err_text, "nothere.npy");
    done();
}

PD_TEST(Cli, OpFailureExitsOneWithTheOpsMessage)
{
    int32_t bad[2] = {1, 2};
    pd_tensor t;
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_INT32, pd_place_cpu(), 1, (int64_t[]){2}));
    memcpy(t.data, bad, sizeof bad);
    PD_ASSERT_OK(pd_npy_save(in_dir("i.npy"), &t));
    pd_tensor_release(&t);
    EXPECT_PDEXT(1, "run %s --op custom_relu --input X=i.npy", relu_so());
    PD_EXPECT_CONTAINS(err_text, "custom_relu");
    PD_EXPECT(access(in_dir("Out.npy"), F_OK) != 0);
    done();
}

/* --- build and demo --------------------------------------------------------------------------- */

PD_TEST(Cli, BuildMakesALibraryThatListAndRunLoad)
{
    EXPECT_PDEXT(0, "build -o librelu.so %s", RELU_C);
    PD_EXPECT(access(in_dir("librelu.so"), R_OK) == 0);
    EXPECT_PDEXT(0, "list librelu.so");
    PD_EXPECT_CONTAINS(out_text, "custom_relu_grad");
    done();
}

PD_TEST(Cli, CompileErrorFailsWithTheCompilersDiagnostics)
{
    FILE *fp = fopen(in_dir("broken.c"), "w");
    PD_ASSERT(fp != NULL);
    fputs("#include \"extension.h\"\nint f(void) { return undeclared_thing; }\n", fp);
    fclose(fp);
    EXPECT_PDEXT(1, "list broken.c");
    PD_EXPECT_CONTAINS(err_text, "broken.c:2");
    done();
}

PD_TEST(Cli, DemoBuildsRunsAndChecksBothExamples)
{
    EXPECT_PDEXT(0, "demo");
    PD_EXPECT_CONTAINS(out_text, "cold load");
    PD_EXPECT_CONTAINS(out_text, "warm load");
    PD_EXPECT_CONTAINS(out_text, "custom_concat_grad");
    PD_EXPECT_CONTAINS(out_text, "demo passed");
    PD_EXPECT(strstr(out_text, "WRONG") == NULL);
    done();
}

/* --- attrs of every type and optional inputs (tests/cli/echo_op.c) ------------------------- */

#define ECHO_ATTRS                                                             \
    "--attr flag=true --attr n=-7 --attr scale=0.5 --attr eps=1e-6 "           \
    "--attr big=1099511627776 --attr name=abc --attr shape=2,3 --attr ws=1.5 " \
    "--attr dims=4,5,6 --attr tags=a,bcd"

static void expect_echo(const double *want)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_npy_load(in_dir("Out.npy"), &t));
    PD_ASSERT(t.dtype == PD_FLOAT64 && pd_numel(&t) == 18);
    for (int i = 0; i < 18; ++i)
        PD_EXPECT_NEAR(((double *)t.data)[i], want[i], 1e-12);
    pd_tensor_release(&t);
}

PD_TEST(Cli, ParsesEveryAttrTypeAndLeavesOutAnOptionalInput)
{
    static const double want[18] = {1,   -7,  0.5, 1e-6, 1099511627776.0,
                                    3,   'a', 2,   3,    1,
                                    1.5, 3,   6,   2,    3,
                                    0,   6,   0};
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(0, "run %s --op cli_echo --input X=x.npy " ECHO_ATTRS,
                 pd_test_path("cli_echo.so"));
    PD_EXPECT_CONTAINS(out_text, "Out  shape=[18]  dtype=float64");
    expect_echo(want);
    done();
}

PD_TEST(Cli, BindsAGivenOptionalInputAndAcceptsZeroOneAndEmptyLists)
{
    static const double want[18] = {0, -7, 0.5, 1e-6, 1099511627776.0, 3, 'a', 2, 3, 0, -1, 3, 6, 2,
                                    3, 1,  6,   2};
    save_floats("x.npy", 2, s23, x6);
    save_floats("y.npy", 1, (int64_t[]){2}, x6);
    EXPECT_PDEXT(0,
                 "run %s --op cli_echo --input X=x.npy --input Y=y.npy " ECHO_ATTRS
                 " --attr flag=0 --attr ws=",
                 pd_test_path("cli_echo.so"));
    expect_echo(want);
    done();
}

PD_TEST(Cli, RefusesAttrValuesThatDoNotFitTheirType)
{
    static const char *const bad[][2] = {{"flag=maybe", "bool"},
                                         {"n=3000000000", "int"},
                                         {"scale=fast", "float"},
                                         {"shape=2,x", "std::vector<int>"},
                                         {"dims=1,,2", "std::vector<int64_t>"}};
    save_floats("x.npy", 2, s23, x6);
    for (int i = 0; i < 5; ++i) {
        EXPECT_PDEXT(1, "run %s --op cli_echo --input X=x.npy " ECHO_ATTRS " --attr %s",
                     pd_test_path("cli_echo.so"), bad[i][0]);
        char needle[128];
        snprintf(needle, sizeof needle, "it is %s", bad[i][1]);
        PD_EXPECT_CONTAINS(err_text, needle);
    }
    done();
}

PD_TEST(Cli, MissingAttrFailsNamingIt)
{
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(1, "run %s --op cli_echo --input X=x.npy --attr flag=1",
                 pd_test_path("cli_echo.so"));
    PD_EXPECT_CONTAINS(err_text,
                       "pdext run: missing attr 'n' of cli_echo: give --attr n=VALUE (int)");
    done();
}

PD_TEST(Cli, MissingAttrIsReportedByTheCommandBeforeRunning)
{
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(1, "run %s --op custom_concat --input X=x.npy", CONCAT_C);
    PD_EXPECT_STREQ(err_text, "pdext run: missing attr 'axis' of custom_concat: give --attr "
                              "axis=VALUE (int64_t)\n");
    PD_EXPECT(access(in_dir("Out.npy"), F_OK) != 0);
    done();
}

PD_TEST(Cli, BuildSaysWhichOpsTheLoadedLibraryHolds)
{
    EXPECT_PDEXT(0, "build -o librelu.so --name relu_cli %s", RELU_C);
    PD_EXPECT_CONTAINS(out_text, "built librelu.so: module 'relu_cli' with 2 ops: custom_relu, "
                                 "custom_relu_grad");
    done();
}

PD_TEST(Cli, BuildOfSourcesWithoutOpsFailsWithTheLoadersMessageAndWritesNothing)
{
    FILE *fp = fopen(in_dir("noops.c"), "w");
    PD_ASSERT(fp != NULL);
    fputs("#include \"extension.h\"\nint cli_no_ops_here(void) { return 1; }\n", fp);
    fclose(fp);
    EXPECT_PDEXT(1, "build -o libnoops.so noops.c");
    PD_EXPECT_CONTAINS(err_text, "pdext build: pd_jit_build_load: module 'noops-");
    PD_EXPECT_CONTAINS(err_text, "was built but does not load, so nothing was written");
    PD_EXPECT_CONTAINS(err_text, "contains no ops");
    PD_EXPECT(!pd_test_contains(out_text, "built"));
    PD_EXPECT(access(in_dir("libnoops.so"), F_OK) != 0);
    done();
}

PD_TEST(Cli, EmptyBuildDirIsAUsageError)
{
    EXPECT_PDEXT(2, "build -o librelu.so --build-dir '' %s", RELU_C);
    PD_EXPECT_CONTAINS(err_text, "pdext build: --build-dir needs a directory, not an empty string");
    EXPECT_PDEXT(2, "list --build-dir= %s", RELU_C);
    PD_EXPECT_CONTAINS(err_text, "pdext list: --build-dir needs a directory");
    done();
}

PD_TEST(Cli, NameIsTakenAsGivenUpToTheLibrarysLimit)
{
    char name[202];
    memset(name, 'n', 200);
    name[200] = '\0';
    EXPECT_PDEXT(0, "build -o liblong.so --name %s %s", name, RELU_C);
    PD_EXPECT_CONTAINS(out_text, name); /* not cut */
    strcat(name, "n");                  /* 201: one more than the library allows */
    EXPECT_PDEXT(1, "build -o liblong.so --name %s %s", name, RELU_C);
    PD_EXPECT_CONTAINS(err_text, "is not a safe file name: use 1 to 200 letters");
    done();
}

PD_TEST(Cli, BuildStaticMakesTheSameBundleAsTheBundleCommand)
{
    EXPECT_PDEXT(0, "build --static -o libsame.a %s", RELU_C);
    PD_EXPECT_CONTAINS(out_text, "libsame.a: static bundle 'same' with 2 ops");
    PD_EXPECT_CONTAINS(out_text, "pd_bundle_register_same(reg, &module)");
    PD_EXPECT(access(in_dir("same.h"), R_OK) == 0);
    PD_EXPECT(access(in_dir("same.pc"), R_OK) == 0);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "nm -g --defined-only %s | grep -q ' T pd_bundle_info_same$'",
             in_dir("libsame.a"));
    PD_EXPECT_EQ(system(cmd), 0);
    EXPECT_PDEXT(0, "build --help");
    PD_EXPECT_CONTAINS(out_text, "exactly as\n`pdext bundle -o libNAME.a` does");
    done();
}

PD_TEST(Cli, BuildPassesIncludeDirsAndCflagsToTheCompiler)
{
    FILE *fp = fopen(in_dir("flagged.c"), "w");
    PD_ASSERT(fp != NULL);
    fputs("#include \"extension.h\"\n#include \"cli_extra.h\"\n#ifndef CLI_FLAG\n"
          "#error CLI_FLAG is not defined\n#endif\n"
          "static void k(pd_kernel_ctx *ctx) { (void)ctx; }\n"
          "PD_BUILD_OP(cli_flagged, .inputs = {\"X\"}, .outputs = {\"Out\"}, .kernel = k);\n",
          fp);
    fclose(fp);
    PD_ASSERT(mkdir(in_dir("inc"), 0700) == 0);
    fp = fopen(in_dir("inc/cli_extra.h"), "w");
    PD_ASSERT(fp != NULL);
    fclose(fp);
    EXPECT_PDEXT(1, "build -o libflagged.so flagged.c -I inc");
    PD_EXPECT_CONTAINS(err_text, "CLI_FLAG is not defined");
    EXPECT_PDEXT(0, "build -o libflagged.so flagged.c -I inc --cflags '-DCLI_FLAG=1 -Wall'");
    EXPECT_PDEXT(0, "list libflagged.so");
    PD_EXPECT_CONTAINS(out_text, "cli_flagged");
    done();
}

/* --- messages for inputs of the wrong kind ------------------------------------------------- */

static void write_file(const char *name, const char *text, size_t n)
{
    FILE *fp = fopen(in_dir(name), "wb");
    if (fp == NULL || fwrite(text, 1, n, fp) != n)
        abort();
    fclose(fp);
}

PD_TEST(Cli, NpzWithoutAMemberAsksForOneListingTheMembers)
{
    pd_tensor t[2];
    PD_ASSERT_OK(pd_tensor_empty(&t[0], PD_FLOAT32, pd_place_cpu(), 2, s23));
    PD_ASSERT_OK(pd_tensor_empty(&t[1], PD_FLOAT32, pd_place_cpu(), 1, s23));
    memcpy(t[0].data, x6, sizeof x6);
    memcpy(t[1].data, x6, 2 * sizeof(float));
    const char *names[2] = {"x", "y"};
    PD_ASSERT_OK(pd_npz_save(in_dir("a.npz"), names, t, 2, false));
    pd_tensor_release(&t[0]);
    pd_tensor_release(&t[1]);
    EXPECT_PDEXT(1, "run %s --op custom_relu --input X=a.npz", relu_so());
    PD_EXPECT_STREQ(err_text, "pdext run: input 'X': a.npz is an .npz archive; name a member: "
                              "X=a.npz:MEMBER (members: x, y)\n");
    /* Known by its zip magic under another name too. */
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s'", in_dir("a.npz"), in_dir("arrays.bin"));
    PD_ASSERT(system(cmd) == 0);
    EXPECT_PDEXT(1, "run %s --op custom_relu --input X=arrays.bin", relu_so());
    PD_EXPECT_CONTAINS(err_text, "arrays.bin is an .npz archive; name a member: "
                                 "X=arrays.bin:MEMBER (members: x, y)");
    /* An .npz that is no archive: the archive reader's own message. */
    write_file("bad.npz", "not a zip", 9);
    EXPECT_PDEXT(1, "run %s --op custom_relu --input X=bad.npz", relu_so());
    PD_EXPECT_CONTAINS(err_text, "pdext run: input 'X': ");
    PD_EXPECT_CONTAINS(err_text, "bad.npz");
    PD_EXPECT(strstr(err_text, "NUMPY magic") == NULL);
    /* With the member named, it runs. */
    EXPECT_PDEXT(0, "run %s --op custom_relu --input X=a.npz:x", relu_so());
    static const float want[6] = {0, 2, 0, 4, 0, 0.25f};
    expect_floats("Out.npy", 2, s23, want);
    done();
}

PD_TEST(Cli, OutThatIsAFileIsRefusedBeforeAnythingIsBuilt)
{
    save_floats("x.npy", 2, s23, x6);
    write_file("taken.npy", "keep", 4);
    EXPECT_PDEXT(1, "run %s --op custom_relu --input X=x.npy --out taken.npy", RELU_C);
    PD_EXPECT_STREQ(err_text, "pdext run: --out 'taken.npy' is a file, not a directory\n");
    PD_EXPECT(module_dir() == NULL); /* refused before compiling */
    EXPECT_PDEXT(1, "run %s --op custom_relu --input X=x.npy --out taken.npy/", relu_so());
    PD_EXPECT_CONTAINS(err_text, "--out 'taken.npy/' is a file, not a directory");
    EXPECT_PDEXT(1, "run %s --op custom_relu --input X=x.npy --out taken.npy/sub", relu_so());
    PD_EXPECT_CONTAINS(err_text, "--out 'taken.npy/sub': 'taken.npy' is a file, not a directory");
    char kept[8];
    FILE *fp = fopen(in_dir("taken.npy"), "rb");
    PD_ASSERT(fp != NULL);
    size_t n = fread(kept, 1, sizeof kept, fp);
    fclose(fp);
    PD_EXPECT(n == 4 && memcmp(kept, "keep", 4) == 0);
    done();
}

PD_TEST(Cli, MissingOutDirectoryIsMadeWithItsParents)
{
    static const float want[6] = {0, 2, 0, 4, 0, 0.25f};
    save_floats("x.npy", 2, s23, x6);
    EXPECT_PDEXT(0, "run %s --op custom_relu --input X=x.npy --out a/b/c", relu_so());
    PD_EXPECT_CONTAINS(out_text, "-> a/b/c/Out.npy");
    expect_floats("a/b/c/Out.npy", 2, s23, want);
    done();
}

PD_TEST(Cli, StaticArchiveIsRefusedPointingAtBundles)
{
    write_file("libops.a", "!<arch>\n", 8);
    EXPECT_PDEXT(2, "list libops.a");
    PD_EXPECT_STREQ(err_text, "pdext list: libops.a is a static archive (a bundle?): list and "
                              "run take op sources or a shared library (.so); link a bundle "
                              "into a program instead (see pdext bundle --help)\n");
    /* By its magic, whatever its name. */
    write_file("ops.lib", "!<arch>\n", 8);
    EXPECT_PDEXT(2, "run ops.lib --op custom_relu --input X=x.npy");
    PD_EXPECT_CONTAINS(err_text, "pdext run: ops.lib is a static archive (a bundle?)");
    PD_EXPECT(module_dir() == NULL);
    done();
}

/* A C++ compiler that says it is g++ 1.2.3 (unlike whatever built libpdext) and compiles
 * with the real one. */
static void write_fake_cxx(void)
{
    static const char script[] =
        "#!/bin/sh\n"
        "case \"$*\" in *--version*) echo 'g++ (Fake) 1.2.3'; exit 0;; esac\n"
        "exec c++ \"$@\"\n";
    write_file("fake-c++", script, sizeof script - 1);
    PD_ASSERT(chmod(in_dir("fake-c++"), 0755) == 0);
}

PD_TEST(Cli, CompilerMismatchWarningIsShownWithoutVerbose)
{
    static const char op[] = "#include \"extension.h\"\n"
                             "static void k(pd_kernel_ctx *ctx) { (void)ctx; }\n"
                             "PD_BUILD_OP(cli_cxx_op, .inputs = {\"X\"}, .outputs = {\"Out\"}, "
                             ".kernel = k);\n";
    write_file("op.cc", op, sizeof op - 1);
    write_fake_cxx();
    PD_ASSERT(setenv("CXX", in_dir("fake-c++"), 1) == 0);
    for (int load = 0; load < 2; ++load) { /* the build, then the load from the cache */
        EXPECT_PDEXT(0, "list op.cc");
        PD_EXPECT_CONTAINS(out_text, "cli_cxx_op");
        PD_EXPECT(strncmp(err_text, "pdext: warning: module '", 24) == 0);
        PD_EXPECT_CONTAINS(err_text, "(g++ (Fake) 1.2.3), but libpdext was built with");
        size_t n = strlen(err_text);
        PD_EXPECT(n > 0 && err_text[n - 1] == '\n');
        PD_EXPECT(strchr(err_text, '\r') == NULL); /* no progress line off a terminal */
    }
    unsetenv("CXX");
    done();
}
