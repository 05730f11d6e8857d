/*
 * gradcheck_cli_test.c - `pdext check` end to end, run as a subprocess: it passes on the
 * examples (relu built as a library, relu and concat as sources through the JIT), fails on a
 * deliberately wrong backward naming the element, skips gradcheck for an op without a grad op,
 * reports in JSON, asks for an attr it cannot guess, passes a clear refusal of a bad input,
 * keeps in-place inputs dense in the strided row and takes input shapes per op; and `pdext new`,
 * whose scaffold passes `pdext check` as written and which never overwrites. Each test uses its own
 * temporary directory and PDEXT_CACHE_DIR.
 */
#include "pd_test.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

static char out_store[1 << 16], err_store[1 << 14];
static const char *out_buf = out_store; /* stdout of the last command */
static const char *err_buf = err_store; /* its stderr */

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(buf, 1, cap - 1, fp) : 0;
    buf[n] = '\0';
    if (fp)
        fclose(fp);
}

/* Runs `pdext ARGS` in `dir` with its cache there; returns the exit status, the output in
 * out_buf / err_buf. */
static int pdext_in(const char *dir, const char *args)
{
    char cmd[4096], path[128];
    snprintf(cmd, sizeof cmd,
             "cd %s && PDEXT_CACHE_DIR=%s/cache '%s' %s >%s/out 2>%s/err </dev/null", dir, dir,
             PDEXT_CMD, args, dir, dir);
    int status = system(cmd);
    snprintf(path, sizeof path, "%s/out", dir);
    slurp(path, out_store, sizeof out_store);
    snprintf(path, sizeof path, "%s/err", dir);
    slurp(path, err_store, sizeof err_store);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        pd_test_fail(__FILE__, __LINE__, "could not remove %s", dir);
}

/* Runs `pdext check ARGS` in a fresh directory. */
static int check(const char *fmt, ...) PD_PRINTF(1, 2);
static int check(const char *fmt, ...)
{
    char args[2048], full[2100], dir[64] = "/tmp/pdext_check_test.XXXXXX";
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    if (!mkdtemp(dir))
        return -1;
    snprintf(full, sizeof full, "check %s", args);
    int rc = pdext_in(dir, full);
    remove_dir(dir);
    return rc;
}

#define EXPECT_CHECK(want, ...)                                                                   \
    do {                                                                                          \
        int rc_ = check(__VA_ARGS__);                                                             \
        PD__TEST_CHECK((void)0, rc_ == (want), "pdext check exited %d, expected %d\n%s\n%s", rc_, \
                       (want), out_buf, err_buf);                                                 \
    } while (0)

PD_TEST(CheckCli, PassesOnTheReluExampleLibrary)
{
    EXPECT_CHECK(0, "'%s'", pd_test_path("cli_relu.so"));
    PD_EXPECT_CONTAINS(out_buf, "takes float32 float64; refuses float16");
    PD_EXPECT_CONTAINS(out_buf, "float32   gradcheck      ok");
    PD_EXPECT_CONTAINS(out_buf, "float64   strided        ok");
    PD_EXPECT_CONTAINS(out_buf, "float64   deterministic  ok");
    PD_EXPECT_CONTAINS(out_buf, "9 checks, 0 failed");
}

PD_TEST(CheckCli, PassesOnTheExampleSourcesThroughTheJit)
{
    EXPECT_CHECK(0, "'%s/relu/relu.c'", PDEXT_EXAMPLES);
    EXPECT_CHECK(0, "'%s/concat/concat.c' --attr axis=1", PDEXT_EXAMPLES);
    PD_EXPECT_CONTAINS(out_buf, "custom_concat        int64     shapes+infer   ok");
    PD_EXPECT_CONTAINS(out_buf, "int64     gradcheck      skip not differentiable");
}

/* An in-place op that declares no strided inputs only ever gets dense ones (the runner
 * refuses a strided view it would write): its strided row is skipped, saying why, where it
 * failed and made the whole check fail. */
PD_TEST(CheckCli, AnInPlaceOpWithoutStridedInputsSkipsTheStridedRow)
{
    EXPECT_CHECK(0, "'%s/tests/ops/check_inplace.c'", PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(out_buf, "float32   strided        skip in-place input 'X' is not "
                                "declared strided");
    PD_EXPECT_CONTAINS(out_buf, ", 0 failed");
}

/* A clear refusal of an input the op cannot take (top-2 of a [1, 1] input) is right: the
 * "bad input" row passes it, quoting the op's reason; the shapes row lists what ran. */
PD_TEST(CheckCli, AClearRefusalPassesTheBadInputRow)
{
    EXPECT_CHECK(0, "'%s/tests/ops/check_refuse.c' --op ck_topk", PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(out_buf, "ck_topk              float64   shapes+infer   ok   [3, 4], "
                                "[0, 4], [64, 300]\n");
    PD_EXPECT_CONTAINS(out_buf, "ck_topk              float64   bad input      ok   one element "
                                "[1, 1] refused: ck_topk: k (2) must be in [1, 1]");
    PD_EXPECT_CONTAINS(out_buf, ", 0 failed");
}

/* A refusal that does not say why (PD_THROW with no message) is still a failure. */
PD_TEST(CheckCli, ARefusalWithoutAReasonFails)
{
    EXPECT_CHECK(1, "'%s/tests/ops/check_refuse.c' --op ck_vague", PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(out_buf, "ck_vague             float32   shapes+infer   FAIL one element "
                                "[1, 1]: ck_vague: An error occurred.");
}

/* An in-place op whose other input can be strided: the in-place input stays dense, the other
 * gets a transposed view, and the row compares them. */
PD_TEST(CheckCli, AnInPlaceOpGetsADenseInPlaceInputInTheStridedRow)
{
    EXPECT_CHECK(0, "'%s/tests/ops/check_refuse.c' --op ck_axpy_inplace", PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(out_buf, "float32   strided        ok   transposed inputs agree (in-place "
                                "input 'X' kept dense: not declared strided)");
}

/* A vector output with more items than any guessed room (64 rows of the [64, 300] shape; check
 * once offered 16): the runner sizes it, and every shape row passes. */
PD_TEST(CheckCli, AVectorOutputOfManyItemsPasses)
{
    EXPECT_CHECK(0, "'%s/tests/ops/check_rows.c'", PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(out_buf,
                       "ck_rows              float64   shapes+infer   ok   [3, 4], [1, 1], "
                       "[0, 4], [64, 300]\n");
    PD_EXPECT_CONTAINS(out_buf, ", 0 failed");
}

/* --input OP.NAME=SHAPE gives one op of a multi-op module its shapes; the module's other ops
 * keep the default ones. A name that is no op or input of the module is refused. */
PD_TEST(CheckCli, InputShapesPerOp)
{
    EXPECT_CHECK(1, "'%s/tests/ops/check_refuse.c'", PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(out_buf, "ck_matvec            -         dtypes         FAIL");
    EXPECT_CHECK(1,
                 "'%s/tests/ops/check_refuse.c' --input ck_matvec.A=3,5 "
                 "--input ck_matvec.V=5",
                 PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(out_buf, "ck_matvec            float64   shapes+infer   ok   the given "
                                "shapes");
    PD_EXPECT_CONTAINS(out_buf, "ck_topk              float64   shapes+infer   ok   [3, 4], ");
    PD_EXPECT_CONTAINS(out_buf, "ck_axpy_inplace      float64   shapes+infer   ok   [3, 4], ");
    PD_EXPECT_CONTAINS(out_buf, ", 2 failed"); /* ck_vague's two dtypes, alone */
    EXPECT_CHECK(2, "'%s/tests/ops/check_refuse.c' --input ck_matvek.A=3,5", PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(err_buf, "--input ck_matvek.A: no forward op 'ck_matvek'");
    PD_EXPECT_CONTAINS(err_buf, "ck_matvec");
    EXPECT_CHECK(2, "'%s/tests/ops/check_refuse.c' --input ck_matvec.B=3,5", PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(err_buf, "op 'ck_matvec' has no input 'B' (its inputs: A, V)");
}

PD_TEST(CheckCli, GuessesZeroForAnIntAttrWithoutDefaultAndSaysSo)
{
    EXPECT_CHECK(0, "'%s/concat/concat.c'", PDEXT_EXAMPLES);
    PD_EXPECT_CONTAINS(out_buf, "note: custom_concat: attr axis = 0 (no default");
}

PD_TEST(CheckCli, FailsOnAWrongBackwardNamingTheElement)
{
    EXPECT_CHECK(1, "'%s' --op tp_bad_square", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(out_buf, "gradcheck      FAIL WRONG tp_bad_square X[");
    PD_EXPECT_CONTAINS(out_buf, "rel err 0.5");
    PD_EXPECT_CONTAINS(out_buf, "failed");
}

PD_TEST(CheckCli, FailsOnAWrongDoubleGradNamingTheGradOp)
{
    EXPECT_CHECK(1, "'%s' --op tp_bad_dd", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(out_buf, "gradcheck x2   FAIL WRONG tp_bad_dd_grad X[");
}

PD_TEST(CheckCli, SkipsGradcheckForAnOpWithoutAGradOp)
{
    EXPECT_CHECK(0, "'%s' --op tp_nograd", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(out_buf, "gradcheck      skip no grad op");
}

PD_TEST(CheckCli, JsonHasEveryRowAndTheVerdict)
{
    EXPECT_CHECK(1, "'%s' --op tp_bad_square --json", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(out_buf, "\"check\": \"gradcheck\", \"status\": \"fail\"");
    PD_EXPECT_CONTAINS(out_buf, "\"check\": \"strided\", \"status\": \"ok\"");
    PD_EXPECT_CONTAINS(out_buf, "\"ok\": false");
}

PD_TEST(CheckCli, AsksForAnAttrItCannotGuessNamingItsType)
{
    EXPECT_CHECK(2, "'%s'", pd_test_path("cli_echo.so"));
    PD_EXPECT_CONTAINS(err_buf, "op 'cli_echo' needs attr 'flag' (bool), which has no default; "
                                "pass --attr flag=VALUE");
}

PD_TEST(CheckCli, RefusesAnUnknownOpAndABadAttrValue)
{
    EXPECT_CHECK(1, "'%s' --op nope", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(err_buf, "no forward op 'nope'");
    EXPECT_CHECK(2, "'%s' --op tp_scale --attr scale=abc", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(err_buf, "--attr scale=abc: float attr 'scale' takes");
    EXPECT_CHECK(2, "%s", "--json");
    PD_EXPECT_CONTAINS(err_buf, "no sources or library given");
}

PD_TEST(NewCli, ScaffoldPassesCheckAsWritten)
{
    char dir[64] = "/tmp/pdext_new_test.XXXXXX";
    PD_ASSERT(mkdtemp(dir) != NULL);
    PD_EXPECT_EQ(pdext_in(dir, "new my_op"), 0);
    PD_EXPECT_CONTAINS(out_buf, "wrote my_op/my_op.c, my_op/README.md, my_op/check.sh");
    PD_EXPECT_EQ(pdext_in(dir, "check my_op/my_op.c"), 0);
    PD_EXPECT_CONTAINS(out_buf, "my_op                float64   gradcheck      ok");
    PD_EXPECT_CONTAINS(out_buf, "9 checks, 0 failed");
    char script[256];
    snprintf(script, sizeof script, "PDEXT='%s' ./my_op/check.sh --op my_op", PDEXT_CMD);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cd %s && PDEXT_CACHE_DIR=%s/cache %s >/dev/null 2>&1", dir, dir,
             script);
    PD_EXPECT_EQ(system(cmd), 0);
    remove_dir(dir);
}

PD_TEST(NewCli, RefusesToOverwriteAndTakesADir)
{
    char dir[64] = "/tmp/pdext_new_test.XXXXXX";
    PD_ASSERT(mkdtemp(dir) != NULL);
    PD_EXPECT_EQ(pdext_in(dir, "new twice --dir ops/here"), 0);
    PD_EXPECT_CONTAINS(out_buf, "ops/here/twice.c");
    PD_EXPECT_EQ(pdext_in(dir, "new twice --dir ops/here"), 1);
    PD_EXPECT_CONTAINS(err_buf, "ops/here/twice.c exists; pdext new never overwrites");
    remove_dir(dir);
}

PD_TEST(NewCli, RejectsANameThatIsNotACIdentifierAndOtherLanguages)
{
    char dir[64] = "/tmp/pdext_new_test.XXXXXX";
    PD_ASSERT(mkdtemp(dir) != NULL);
    PD_EXPECT_EQ(pdext_in(dir, "new 9lives"), 2);
    PD_EXPECT_CONTAINS(err_buf, "NAME '9lives' is not a C identifier");
    PD_EXPECT_EQ(pdext_in(dir, "new ok_name --lang rust"), 2);
    PD_EXPECT_CONTAINS(err_buf, "--lang rust: expected c, cuda, paddle or aot");
    PD_EXPECT_EQ(pdext_in(dir, "new"), 2);
    PD_EXPECT_CONTAINS(err_buf, "missing NAME");
    remove_dir(dir);
}

PD_TEST(CheckCli, PassesOnTheTrainExampleWithTheShapesGivenByInput)
{
    EXPECT_CHECK(0,
                 "'%s/train/train_ops.c' --ldflags -lm --input X=4,3 --input W=3,5 --input B=5 "
                 "--input Logits=4,3 --input Label=4:int64",
                 PDEXT_EXAMPLES);
    PD_EXPECT_CONTAINS(out_buf, "train_linear         float64   gradcheck      ok");
    PD_EXPECT_CONTAINS(out_buf, "input 'Label' is int64, not differentiable");
    PD_EXPECT_CONTAINS(out_buf, "18 checks, 0 failed");
}

PD_TEST(CheckCli, InputGivesOneInputItsOwnDtype)
{
    EXPECT_CHECK(0, "'%s' --op tp_shift --input N=3,4:int32", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(out_buf, "tp_shift             float64   gradcheck      ok");
    PD_EXPECT_CONTAINS(out_buf, "input 'N' is int32, not differentiable");
}

PD_TEST(CheckCli, RefusesAMalformedInputSpec)
{
    EXPECT_CHECK(2, "'%s' --input X=4,x", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(err_buf, "--input 'X=4,x' is not [OP.]NAME=D0,D1,...[:DTYPE]");
    EXPECT_CHECK(2, "'%s' --input X=4:float99", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(err_buf, "--input 'X=4:float99'");
    EXPECT_CHECK(2, "'%s' --input X=4,99999999999999999999", pd_test_path("tp_tape_ops.so"));
    PD_EXPECT_CONTAINS(err_buf, "--input 'X=4,99999999999999999999' is not [OP.]NAME=D0,D1");
}

PD_TEST(CheckCli, SanitizeNamesTheCaseAKernelTripsASanitizerInAndDoesNotCrash)
{
    EXPECT_CHECK(0, "'%s/tests/tape_ub_op.c'", PD_TEST_SOURCE_DIR);
    EXPECT_CHECK(1, "'%s/tests/tape_ub_op.c' --sanitize", PD_TEST_SOURCE_DIR);
    PD_EXPECT_CONTAINS(out_buf, "tp_ub                float32   shapes+infer");
    PD_EXPECT_CONTAINS(out_buf, "FAIL sanitize");
    PD_EXPECT_CONTAINS(out_buf, "runtime error: signed integer overflow");
}

PD_TEST(CheckCli, SanitizePassesOnTheReluExampleAndRefusesALibrary)
{
    EXPECT_CHECK(0, "'%s/relu/relu.c' --sanitize", PDEXT_EXAMPLES);
    PD_EXPECT_CONTAINS(out_buf, "9 checks, 0 failed");
    EXPECT_CHECK(2, "'%s' --sanitize", pd_test_path("cli_relu.so"));
    PD_EXPECT_CONTAINS(err_buf, "--sanitize rebuilds the module from its sources");
}
