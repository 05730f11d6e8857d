/*
 * explain_cli_test.c - `pdext explain LIB.so`, run as a subprocess: a good module (loads, its
 * ABI, SDK and compiler, its ops with the dtypes a run takes, no GPU code, every undefined
 * symbol provided), one built against another ABI major (does not load, and says why, with
 * the ABI it was built for), one calling a function no library provides (does not load; the
 * symbol is named), and a library with CUDA code for sm_80 (its architectures read from the
 * fat binary; skipped, saying so, where there is no nvcc).
 */
#include "pd_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static char out_store[1 << 16], err_store[1 << 14]; /* the last command's output */
static const char *out_buf = out_store;

static void slurp(const char *path, char *buf, size_t cap)
{
    FILE *fp = fopen(path, "rb");
    size_t n = fp ? fread(buf, 1, cap - 1, fp) : 0;
    buf[n] = '\0';
    if (fp)
        fclose(fp);
}

/* Runs a shell command with its output in out_buf / err_buf; the exit status. */
static int sh(const char *dir, const char *cmd)
{
    char full[8192], path[256];
    snprintf(full, sizeof full, "cd %s && ( %s ) >%s/out 2>%s/err </dev/null", dir, cmd, dir, dir);
    int status = system(full);
    snprintf(path, sizeof path, "%s/out", dir);
    slurp(path, out_store, sizeof out_store);
    snprintf(path, sizeof path, "%s/err", dir);
    slurp(path, err_store, sizeof err_store);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static int explain(const char *dir, const char *lib)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' explain '%s'", PDEXT_CMD, lib);
    return sh(dir, cmd);
}

static char *temp_dir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/pdext_explain_test.XXXXXX");
    return mkdtemp(dir);
}

static void remove_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        pd_test_fail(__FILE__, __LINE__, "could not remove %s", dir);
}

PD_TEST(ExplainCli, DescribesAModuleThatLoads)
{
    char *dir = temp_dir();
    PD_ASSERT(dir != NULL);
    int rc = explain(dir, pd_test_path("cli_relu.so"));
    PD_EXPECT(rc == 0);
    PD_EXPECT_CONTAINS(out_buf, "loads here   yes\n");
    char abi[128];
    snprintf(abi, sizeof abi, "module ABI   %d.%d (this runtime: %d.%d", PD_ABI_MAJOR, PD_ABI_MINOR,
             PD_ABI_MAJOR, PD_ABI_MINOR);
    PD_EXPECT_CONTAINS(out_buf, abi);
    PD_EXPECT_CONTAINS(out_buf, "built by     pdext SDK " PD_VERSION_STRING);
    PD_EXPECT_CONTAINS(out_buf, "custom_relu              forward     dtypes: float32 float64\n");
    PD_EXPECT_CONTAINS(out_buf, "custom_relu_grad         grad");
    PD_EXPECT_CONTAINS(out_buf, "GPU code     none");
    PD_EXPECT_CONTAINS(out_buf, "; all provided here");
    remove_dir(dir);
}

PD_TEST(ExplainCli, SaysWhyAModuleOfAnotherAbiDoesNotLoad)
{
    char *dir = temp_dir();
    PD_ASSERT(dir != NULL);
    PD_EXPECT(explain(dir, pd_test_path("tm_abi_other_major.so")) == 1);
    char want[256];
    snprintf(want, sizeof want, "loads here   no: pd_module_load: ");
    PD_EXPECT_CONTAINS(out_buf, want);
    snprintf(want, sizeof want, "was built against pdext ABI %d.0", PD_ABI_MAJOR + 1);
    PD_EXPECT_CONTAINS(out_buf, want);
    snprintf(want, sizeof want, "module ABI   %d.0 (this runtime: %d.%d", PD_ABI_MAJOR + 1,
             PD_ABI_MAJOR, PD_ABI_MINOR);
    PD_EXPECT_CONTAINS(out_buf, want);
    PD_EXPECT_CONTAINS(out_buf, "built by     pdext SDK 9.9.9, test");
    remove_dir(dir);
}

PD_TEST(ExplainCli, NamesAnUndefinedSymbolNothingProvides)
{
    char *dir = temp_dir();
    PD_ASSERT(dir != NULL);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "printf '%%s\\n' '#include \"extension.h\"' 'void pd_test_nowhere(void);' "
             "'static void k(pd_kernel_ctx *ctx) { (void)ctx; pd_test_nowhere(); }' "
             "'PD_BUILD_OP(ex_missing, .inputs = {\"X\"}, .outputs = {\"Out\"}, .kernel = k);' "
             "> m.c && cc -shared -fPIC -I'%s/sdk/include' -o libm.so m.c",
             PD_TEST_SOURCE_DIR);
    PD__TEST_CHECK(return, sh(dir, cmd) == 0, "cc failed: %s", err_store);
    PD_EXPECT(explain(dir, "libm.so") == 1);
    PD_EXPECT_CONTAINS(out_buf, "loads here   no: ");
    PD_EXPECT_CONTAINS(out_buf, "pd_test_nowhere");
    PD_EXPECT_CONTAINS(out_buf, "missing here: pd_test_nowhere\n");
    remove_dir(dir);
}

PD_TEST(ExplainCli, ListsTheGpuArchitecturesOfCudaCode)
{
    const char *nvcc = "/usr/local/cuda/bin/nvcc";
    if (access(nvcc, X_OK) != 0) {
        printf("skipped: no nvcc at %s to build CUDA code\n", nvcc);
        return;
    }
    char *dir = temp_dir();
    PD_ASSERT(dir != NULL);
    char cmd[4096];
    snprintf(cmd, sizeof cmd,
             "printf '%%s\\n' '__global__ void twice(float *x) { x[threadIdx.x] *= 2; }' > k.cu "
             "&& %s -shared -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 "
             "-gencode arch=compute_90,code=compute_90 -o libk.so k.cu",
             nvcc);
    PD__TEST_CHECK(return, sh(dir, cmd) == 0, "nvcc failed: %s", err_store);
    explain(dir, "libk.so");
    PD_EXPECT_CONTAINS(out_buf, "GPU code     sm_80 (SASS), compute_90 (PTX)\n");
    PD_EXPECT_CONTAINS(out_buf, "module ABI   none: no pdext_module_info");
    remove_dir(dir);
}
