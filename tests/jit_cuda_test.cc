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
#include "pd_device.h"
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

// The whole of a file ("" when it cannot be read).
static std::string slurp(const std::string &path)
{
    std::string text;
    if (FILE *f = fopen(path.c_str(), "r")) {
        char buf[4096];
        for (size_t n; (n = fread(buf, 1, sizeof buf, f)) > 0;)
            text.append(buf, n);
        fclose(f);
    }
    return text;
}

// The "key" line of a module's manifest.
static std::string manifest_key(const std::string &cache, const char *name)
{
    std::string m = slurp(cache + "/" + name + "/manifest-shared");
    size_t at = m.find("\nkey ");
    return at == std::string::npos ? "" : m.substr(at + 5, 16);
}

static bool gpu_usable(std::string *why);

TEST_F(JitCuda, WithoutPdextCudaArchItIsNativeOnAGpuElseTheListWithPtx)
{
    unsetenv("PDEXT_CUDA_ARCH");
    const char *srcs[] = {PD_TEST_SOURCE_DIR "/tests/jit_ops/cuda_scale.cu"};
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = "cuda_default_arch";
    o.sources = srcs;
    o.n_sources = 1;
    std::string lib = root_ + "/libcuda_default_arch.so";
    o.output = lib.c_str();
    ASSERT_EQ(pd_jit_build(&o), PD_OK) << pd_last_error();
    std::string ninja = slurp(root_ + "/cache/cuda_default_arch/build.ninja");
    std::string why;
    if (gpu_usable(&why)) {
        EXPECT_NE(ninja.find("-arch=native"), std::string::npos) << ninja;
        EXPECT_EQ(ninja.find("-gencode="), std::string::npos) << ninja;
    } else {
        // No GPU visible here: real code for each listed architecture, PTX of the newest.
        EXPECT_EQ(ninja.find("-arch=native"), std::string::npos) << ninja;
        for (const char *arch : {"75", "80", "86", "89", "90"})
            EXPECT_NE(ninja.find(std::string("-gencode=arch=compute_") + arch + ",code=sm_" + arch),
                      std::string::npos)
                << arch << "\n"
                << ninja;
        EXPECT_NE(ninja.find("-gencode=arch=compute_90,code=compute_90"), std::string::npos)
            << ninja;
    }
}

TEST_F(JitCuda, TheArchitecturesArePartOfTheCacheKey)
{
    const char *srcs[] = {PD_TEST_SOURCE_DIR "/tests/jit_ops/cuda_scale.cu"};
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = "cuda_arch_key";
    o.sources = srcs;
    o.n_sources = 1;
    pd_module *m = nullptr;
    setenv("PDEXT_CUDA_ARCH", "75", 1);
    ASSERT_EQ(pd_jit_load(reg_, &o, &m), PD_OK) << pd_last_error();
    std::string key75 = manifest_key(root_ + "/cache", "cuda_arch_key");
    ASSERT_EQ(pd_module_unload(m), PD_OK) << pd_last_error();
    setenv("PDEXT_CUDA_ARCH", "80", 1);
    ASSERT_EQ(pd_jit_load(reg_, &o, &m), PD_OK) << pd_last_error();
    std::string key80 = manifest_key(root_ + "/cache", "cuda_arch_key");
    EXPECT_EQ(key75.size(), 16u);
    EXPECT_EQ(key80.size(), 16u);
    EXPECT_NE(key75, key80); // another architecture is another build, never the cached one
    EXPECT_NE(slurp(root_ + "/cache/cuda_arch_key/build.ninja")
                  .find("-gencode=arch=compute_80,code=sm_80"),
              std::string::npos);
}

// JIT-builds an example's C source with its .cu half, warning-free under nvcc.
static pd_module *load_example(pd_registry *reg, const char *name, const char *c_src,
                               const char *cu_src)
{
    const char *srcs[] = {c_src, cu_src};
    const char *cuda_flags[] = {"-Xcompiler=-Wall,-Wextra,-Werror", "-Werror=all-warnings"};
    const char *cflags[] = {"-Wall", "-Wextra", "-Werror"};
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = name;
    o.sources = srcs;
    o.n_sources = 2;
    o.cflags = cflags;
    o.n_cflags = 3;
    o.cuda_flags = cuda_flags;
    o.n_cuda_flags = 2;
    pd_module *m = nullptr;
    EXPECT_EQ(pd_jit_load(reg, &o, &m), PD_OK) << pd_last_error();
    return m;
}

// A usable GPU, or a reason to skip the GPU half of a test.
static bool gpu_usable(std::string *why)
{
    int32_t count = 0;
    if (pd_device_count(PD_PLACE_GPU, &count) != PD_OK) {
        *why = pd_last_error();
        return false;
    }
    if (count == 0)
        *why = "no GPU visible";
    return count > 0;
}

TEST_F(JitCuda, ReluExampleWithItsCudaHalfRunsOnTheCpuAndOnAGpu)
{
    pd_module *m = load_example(reg_, "ex_relu_cuda", PD_TEST_SOURCE_DIR "/examples/relu/relu.c",
                                PD_TEST_SOURCE_DIR "/examples/relu/relu_cuda.cu");
    ASSERT_NE(m, nullptr);
    float xs[6] = {-2, -0.5f, 0, 0.5f, 2, -7};
    const float want[6] = {0, 0, 0, 0.5f, 2, 0};
    int64_t shape[1] = {6};
    pd_tensor x, out = PD_TENSOR_UNDEFINED;
    ASSERT_EQ(pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 1, shape, nullptr, nullptr),
              PD_OK);
    pd_arg in = pd_arg_of(&x), o = pd_arg_of(&out);
    ASSERT_EQ(pd_run(reg_, "custom_relu", &in, 1, nullptr, 0, &o, 1), PD_OK) << pd_last_error();
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(static_cast<const float *>(out.data)[i], want[i]);
    pd_tensor_release(&out);

    std::string why;
    if (!gpu_usable(&why)) {
        pd_tensor_release(&x);
        GTEST_SKIP() << "built and ran on the CPU; GPU half skipped: " << why;
    }
    pd_tensor xg, outg = PD_TENSOR_UNDEFINED, back;
    ASSERT_EQ(pd_tensor_copy_to(&xg, &x, pd_place_gpu(0)), PD_OK) << pd_last_error();
    in = pd_arg_of(&xg);
    o = pd_arg_of(&outg);
    ASSERT_EQ(pd_run(reg_, "custom_relu", &in, 1, nullptr, 0, &o, 1), PD_OK) << pd_last_error();
    EXPECT_TRUE(pd_is_gpu(&outg));
    ASSERT_EQ(pd_tensor_copy_to(&back, &outg, pd_place_cpu()), PD_OK) << pd_last_error();
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(static_cast<const float *>(back.data)[i], want[i]);
    // Backward on the GPU: X@GRAD = Out@GRAD where Out > 0.
    pd_tensor gradg, gxg = PD_TENSOR_UNDEFINED, gx;
    ASSERT_EQ(pd_tensor_full(&gradg, PD_FLOAT32, pd_place_gpu(0), 1, shape, 3.0), PD_OK);
    pd_arg gin[3] = {pd_arg_named("X", &xg, 1), pd_arg_named("Out", &outg, 1),
                     pd_arg_named("Out@GRAD", &gradg, 1)};
    pd_arg go = pd_arg_named("X@GRAD", &gxg, 1);
    ASSERT_EQ(pd_run(reg_, "custom_relu_grad", gin, 3, nullptr, 0, &go, 1), PD_OK)
        << pd_last_error();
    ASSERT_EQ(pd_tensor_copy_to(&gx, &gxg, pd_place_cpu()), PD_OK) << pd_last_error();
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(static_cast<const float *>(gx.data)[i], want[i] > 0 ? 3.0f : 0.0f);
    for (pd_tensor *t : {&gx, &gxg, &gradg, &back, &outg, &xg, &x})
        pd_tensor_release(t);
}

TEST_F(JitCuda, ConcatExampleWithItsCudaHalfRunsOnTheCpuAndOnAGpu)
{
    pd_module *m = load_example(reg_, "ex_concat_cuda",
                                PD_TEST_SOURCE_DIR "/examples/concat/concat.c",
                                PD_TEST_SOURCE_DIR "/examples/concat/concat_cuda.cu");
    ASSERT_NE(m, nullptr);
    // [2, 1] and [2, 2] joined along axis 1: rows (a0 b0 b1), (a1 b2 b3).
    float a[2] = {1, 2}, b[4] = {3, 4, 5, 6};
    const float want[6] = {1, 3, 4, 2, 5, 6};
    int64_t sa[2] = {2, 1}, sb[2] = {2, 2};
    pd_tensor xs[2], out = PD_TENSOR_UNDEFINED;
    ASSERT_EQ(pd_tensor_from_buffer(&xs[0], a, PD_FLOAT32, pd_place_cpu(), 2, sa, nullptr, nullptr),
              PD_OK);
    ASSERT_EQ(pd_tensor_from_buffer(&xs[1], b, PD_FLOAT32, pd_place_cpu(), 2, sb, nullptr, nullptr),
              PD_OK);
    pd_arg in = pd_arg_named("X", xs, 2), o = pd_arg_of(&out);
    pd_attr axis = pd_attr_of_int64("axis", 1);
    ASSERT_EQ(pd_run(reg_, "custom_concat", &in, 1, &axis, 1, &o, 1), PD_OK) << pd_last_error();
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(static_cast<const float *>(out.data)[i], want[i]);
    pd_tensor_release(&out);

    std::string why;
    if (!gpu_usable(&why)) {
        pd_tensor_release(&xs[1]);
        pd_tensor_release(&xs[0]);
        GTEST_SKIP() << "built and ran on the CPU; GPU half skipped: " << why;
    }
    pd_tensor xg[2], outg = PD_TENSOR_UNDEFINED, back;
    ASSERT_EQ(pd_tensor_copy_to(&xg[0], &xs[0], pd_place_gpu(0)), PD_OK) << pd_last_error();
    ASSERT_EQ(pd_tensor_copy_to(&xg[1], &xs[1], pd_place_gpu(0)), PD_OK) << pd_last_error();
    in = pd_arg_named("X", xg, 2);
    o = pd_arg_of(&outg);
    ASSERT_EQ(pd_run(reg_, "custom_concat", &in, 1, &axis, 1, &o, 1), PD_OK) << pd_last_error();
    ASSERT_EQ(pd_tensor_copy_to(&back, &outg, pd_place_cpu()), PD_OK) << pd_last_error();
    for (int i = 0; i < 6; ++i)
        EXPECT_EQ(static_cast<const float *>(back.data)[i], want[i]);
    // Backward splits Out@GRAD back into the inputs' shapes.
    pd_tensor gx[2], gx1;
    pd_arg gin[2] = {pd_arg_named("X", xg, 2), pd_arg_named("Out@GRAD", &outg, 1)};
    pd_arg go = pd_arg_named("X@GRAD", gx, 2);
    ASSERT_EQ(pd_run(reg_, "custom_concat_grad", gin, 2, &axis, 1, &go, 1), PD_OK)
        << pd_last_error();
    ASSERT_EQ(pd_tensor_copy_to(&gx1, &gx[1], pd_place_cpu()), PD_OK) << pd_last_error();
    for (int i = 0; i < 4; ++i)
        EXPECT_EQ(static_cast<const float *>(gx1.data)[i], b[i]);
    for (pd_tensor *t : {&gx1, &gx[0], &gx[1], &back, &outg, &xg[0], &xg[1], &xs[0], &xs[1]})
        pd_tensor_release(t);
}

} // namespace
