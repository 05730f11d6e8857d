// jit_cuda_test.cc - the JIT with CUDA sources: a .cu file compiles through nvcc into the
// same library as a .c file, extension.h compiles under nvcc with -Wall -Wextra -Werror, and
// the module loads and runs its CPU path (no GPU needed: this is the compile test). Written
// in C++ gtest for GTEST_SKIP() on machines without nvcc.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>

#include "nvcc_find.h"
#include "pdext_jit.h"

namespace {

using pd_test::find_nvcc;

class JitCuda : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (find_nvcc().empty())
            GTEST_SKIP() << "nvcc not found (NVCC, CUDA_HOME, PATH, /usr/local/cuda/bin): "
                            "CUDA compile test skipped";
        char dir[] = "/tmp/pdext-jit-cuda-XXXXXX";
        ASSERT_NE(mkdtemp(dir), nullptr);
        root_ = dir;
        setenv("PDEXT_CACHE_DIR", (root_ + "/cache").c_str(), 1);
        setenv("PDEXT_INCLUDE_DIR", PD_TEST_SOURCE_DIR "/sdk/include", 1);
        setenv("PDEXT_CUDA_ARCH", "75", 1); // one architecture keeps the test fast
        ASSERT_EQ(pd_registry_create(&reg_), PD_OK);
    }
    void TearDown() override
    {
        pd_registry_destroy(reg_);
        if (!root_.empty() && system(("/bin/rm -rf '" + root_ + "'").c_str()) != 0)
            ADD_FAILURE() << "could not remove " << root_;
    }
    std::string root_;
    pd_registry *reg_ = nullptr;
};

TEST_F(JitCuda, CudaAndCSourcesBuildIntoOneModuleWarningFree)
{
    const char *srcs[] = {PD_TEST_SOURCE_DIR "/tests/jit_ops/cuda_scale.cu",
                          PD_TEST_SOURCE_DIR "/tests/jit_ops/shift.c"};
    const char *cuda_flags[] = {"-Xcompiler=-Wall,-Wextra,-Werror", "-Werror=all-warnings"};
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = "cuda_mix";
    o.sources = srcs;
    o.n_sources = 2;
    o.cuda_flags = cuda_flags;
    o.n_cuda_flags = 2;
    pd_module *m = nullptr;
    ASSERT_EQ(pd_jit_load(reg_, &o, &m), PD_OK) << pd_last_error();
    EXPECT_EQ(pd_module_op_count(m), 2);

    float xs[4] = {1, 2, 3, 4};
    int64_t shape[1] = {4};
    pd_tensor x, out;
    memset(&out, 0, sizeof out);
    ASSERT_EQ(pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 1, shape, nullptr, nullptr),
              PD_OK);
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    ASSERT_EQ(pd_run(reg_, "jit_cuda_half", &in, 1, nullptr, 0, &outs, 1), PD_OK)
        << pd_last_error();
    const float *o_data = static_cast<const float *>(out.data);
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(o_data[i], xs[i] * 0.5f);
    pd_tensor_release(&out);
    pd_tensor_release(&x);

    // The link pulled in the CUDA runtime and the manifest records nvcc's version.
    std::string manifest = root_ + "/cache/cuda_mix/manifest-shared";
    FILE *f = fopen(manifest.c_str(), "r");
    ASSERT_NE(f, nullptr);
    char buf[1 << 14];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    EXPECT_NE(strstr(buf, "version cuda "), nullptr) << buf;
}

TEST_F(JitCuda, CudaArchitectureListComesFromTheEnvironment)
{
    const char *srcs[] = {PD_TEST_SOURCE_DIR "/tests/jit_ops/cuda_scale.cu"};
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = "cuda_arch";
    o.sources = srcs;
    o.n_sources = 1;
    o.output = nullptr;
    setenv("PDEXT_CUDA_ARCH", "sm_75", 1);
    std::string lib = root_ + "/libcuda_arch.so";
    o.output = lib.c_str();
    ASSERT_EQ(pd_jit_build(&o), PD_OK) << pd_last_error();
    std::string ninja_file = root_ + "/cache/cuda_arch/build.ninja";
    FILE *f = fopen(ninja_file.c_str(), "r");
    ASSERT_NE(f, nullptr);
    char buf[1 << 14];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    EXPECT_NE(strstr(buf, "-gencode=arch=compute_75,code=sm_75"), nullptr) << buf;
    EXPECT_NE(strstr(buf, "-gencode=arch=compute_75,code=compute_75"), nullptr) << buf;
    struct stat st;
    EXPECT_EQ(stat(lib.c_str(), &st), 0);
}

} // namespace
