/* aot_bundle_test.c - MindSpore AOT functions in static bundles: `pdext bundle` with FILE:FUNC
 * arguments builds archives whose generated headers register the functions as ops, and a C
 * host (tests/aot_bundle/host.c) linked against them runs them with no compiler and no
 * dlopen; the command's refusals of bad AOT arguments. Each test uses its own temporary
 * directory and PDEXT_CACHE_DIR. */
#include "pd_test.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_support.h"

#define SRC PD_TEST_SOURCE_DIR
#define CUMSUM PDEXT_EXAMPLES "/aot/scale_cumsum.cc:ScaleCumsum"
#define KERNELS SRC "/tests/ops/aot_kernels.cc"

/* Runs `sh -c cmd` in the test directory; the exit status, output in out_text. */
static int shell(const char *cmd)
{
    char full[8192];
    snprintf(full, sizeof full, "cd %s && ( %s ) >%s/.stdout 2>&1", in_dir(""), cmd, dir);
    int status = system(full);
    slurp(in_dir(".stdout"), out_buf, sizeof out_buf);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* The program is an inference program: linked with the bundles, libpdext_aot and libpdext
 * (no JIT), it runs, and neither it nor any library it loads needs libpdext_jit or zlib
 * (readelf's NEEDED of the program and of libpdext_aot, ldd's whole closure). */
PD_TEST(AotBundle, CHostRegistersAndRunsAotFunctionsOfStaticBundles)
{
    EXPECT_PDEXT(0,
                 "bundle -o libaotnew.a %s/relu/relu.c %s --inputs 1 --attr 'scale: float' "
                 "--attr 'bias: float' --attr 'reverse: bool = false' %s:CustomSplit --inputs 1 "
                 "--outputs 2",
                 PDEXT_EXAMPLES, CUMSUM, KERNELS);
    PD_EXPECT_CONTAINS(out_text, "with 4 ops: CustomSplit, ScaleCumsum, custom_relu");
    EXPECT_PDEXT(0,
                 "bundle -o libaotold.a --cxxflags -D_GLIBCXX_USE_CXX11_ABI=0 "
                 "%s/tests/aot_bundle/affine.cc:CustomAffine --inputs 1 --attr 'scale: float' "
                 "--attr 'offset: int64_t' --attr 'mode: std::string = \"neg\"'",
                 SRC);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "%s %s -I. -I%s/sdk/include %s/tests/aot_bundle/host.c libaotnew.a libaotold.a "
             "%s %s -Wl,-rpath,%s -lstdc++ -lm -o host && ./host",
             PD_AOT_BUNDLE_CC, PD_AOT_BUNDLE_SANITIZE_FLAGS, SRC, SRC, PD_AOT_LIB, PD_CORE_LIB,
             PD_AOT_LIB_DIR);
    int rc = shell(cmd);
    PD_EXPECT_EQ(rc, 0);
    PD_EXPECT_CONTAINS(out_text, "aot bundle host: ok");
    PD_EXPECT_EQ(shell("readelf -d host | grep NEEDED"), 0);
    PD_EXPECT_CONTAINS(out_text, "libpdext_aot.so"); /* the check reads the right table */
    PD_EXPECT(strstr(out_text, "libpdext_jit") == NULL && strstr(out_text, "libz.") == NULL);
    PD_EXPECT_EQ(shell("readelf -d " PD_AOT_LIB " | grep NEEDED"), 0);
    PD_EXPECT_CONTAINS(out_text, "libpdext.so");
    PD_EXPECT(strstr(out_text, "libpdext_jit") == NULL && strstr(out_text, "libz.") == NULL);
    PD_EXPECT_EQ(shell("ldd host"), 0); /* every library the loader maps for the program */
    PD_EXPECT_CONTAINS(out_text, "libpdext_aot.so");
    PD_EXPECT(strstr(out_text, "libpdext_jit") == NULL && strstr(out_text, "libz.") == NULL);
    /* What a program needs is in the bundle's header and .pc. */
    static char pc[1 << 14];
    const char *text = pc;
    slurp(in_dir("aotnew.pc"), pc, sizeof pc);
    PD_EXPECT_CONTAINS(text, "-lpdext_aot");
    PD_EXPECT(strstr(text, "pdext_jit") == NULL);
    done();
}

PD_TEST(AotBundle, SharedBundleWithAnAotFunctionRunsFromTheCommand)
{
    static const float x4[4] = {1, 2, 3, 4};
    static const int64_t s4[1] = {4};
    static const float want[4] = {2 * 1 + 0.5f, 2 * 3 + 0.5f, 2 * 6 + 0.5f, 2 * 10 + 0.5f};
    EXPECT_PDEXT(0,
                 "bundle --shared -o libcumsum.so %s --inputs 1 --attr 'scale: float' --attr "
                 "'bias: float'",
                 CUMSUM);
    save_floats("x.npy", 1, s4, x4);
    EXPECT_PDEXT(0,
                 "run ./libcumsum.so --op ScaleCumsum --input x.npy --attr scale=2 --attr bias=0.5 "
                 "--out out");
    expect_floats("out/out0.npy", 1, s4, want);
    done();
}

PD_TEST(AotBundle, RefusesAnAotFunctionWithoutItsInputCount)
{
    EXPECT_PDEXT(2, "bundle -o libx.a %s", CUMSUM);
    PD_EXPECT_CONTAINS(err_text, "give its input count (--inputs N after it)");
    done();
}

PD_TEST(AotBundle, RefusesAotOptionsBeforeAnyFunction)
{
    EXPECT_PDEXT(2, "bundle -o libx.a --inputs 1 %s", CUMSUM);
    PD_EXPECT_CONTAINS(err_text, "--inputs describes an AOT function: give it after");
    done();
}

PD_TEST(AotBundle, RefusesBadOutputSpecsAndAttrDeclarations)
{
    EXPECT_PDEXT(2, "bundle -o libx.a %s --inputs 1 --out-shape 4,x", CUMSUM);
    PD_EXPECT_CONTAINS(err_text, "--out-shape '4,x' is not a shape");
    EXPECT_PDEXT(2, "bundle -o libx.a %s --inputs 1 --out-shape 4,99999999999999999999", CUMSUM);
    PD_EXPECT_CONTAINS(err_text, "--out-shape '4,99999999999999999999' is not a shape");
    EXPECT_PDEXT(2, "bundle -o libx.a %s --inputs 1 --out-dtype float33", CUMSUM);
    PD_EXPECT_CONTAINS(err_text, "--out-dtype 'float33' is not a dtype");
    EXPECT_PDEXT(2, "bundle -o libx.a %s --inputs 1 --attr scale", CUMSUM);
    PD_EXPECT_CONTAINS(err_text, "--attr 'scale' (for");
    EXPECT_PDEXT(2, "bundle -o libx.a %s --inputs 99", CUMSUM);
    PD_EXPECT_CONTAINS(err_text, "--inputs '99'");
    done();
}

PD_TEST(AotBundle, FunctionTheSourceDoesNotDefineFailsTheBuildNamingIt)
{
    EXPECT_PDEXT(1, "bundle -o libx.a %s:NoSuchKernel --inputs 1", KERNELS);
    PD_EXPECT_CONTAINS(err_text, "NoSuchKernel");
    done();
}

/* A .cu AOT function in a bundle is a GPU kernel: built with nvcc where it is found, it
 * registers, and a call with CPU tensors fails saying what it runs on. */
PD_TEST(AotBundle, CudaAotFunctionBundlesAsAGpuKernel)
{
    if (system("command -v nvcc >/dev/null 2>&1 || [ -x \"${CUDA_HOME:-/usr/local/cuda}/bin/nvcc\" "
               "]") != 0) {
        printf("nvcc not found: the .cu AOT function is not bundled here\n");
        return;
    }
    setenv("PDEXT_CUDA_ARCH", "75", 1);
    EXPECT_PDEXT(0, "bundle --shared -o libgpuadd.so %s/tests/ops/aot_gpu_add.cu:GpuAdd --inputs 2",
                 SRC);
    static const float x4[4] = {1, 2, 3, 4};
    static const int64_t s4[1] = {4};
    save_floats("a.npy", 1, s4, x4);
    EXPECT_PDEXT(0, "list ./libgpuadd.so");
    PD_EXPECT_CONTAINS(out_text, "GPU kernel: runs on GPU tensors");
    EXPECT_PDEXT(1, "run ./libgpuadd.so --op GpuAdd --input a.npy --input a.npy --out out");
    PD_EXPECT_CONTAINS(err_text, "is a GPU AOT kernel: it runs on gpu tensors");
    done();
}
