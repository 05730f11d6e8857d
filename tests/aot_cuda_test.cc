// aot_cuda_test.cc - a MindSpore GPU AOT kernel from a .cu source: pd_jit_aot_build compiles it
// with nvcc through the JIT's cache (default visibility), pd_aot_load registers it as a GPU
// kernel (told by its device code, whatever runtime it links), a call with
// CPU tensors fails with PD_ERR_UNAVAILABLE naming the function, and where a GPU is present a
// call with GPU tensors runs it on the call's stream. Written in C++ gtest for GTEST_SKIP() on
// machines without nvcc.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <unistd.h>

#include "nvcc_find.h"
#include "pdext_aot.h"
#include "pdext_jit.h"

namespace {

using pd_test::find_nvcc;

} // namespace

TEST(AotCuda, CuSourceCompilesWithNvccAndItsCallsNeedADevice)
{
    if (find_nvcc().empty())
        GTEST_SKIP() << "nvcc not found: .cu AOT compile test skipped";
    char dir[] = "/tmp/pdext-aot-cuda-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    setenv("PDEXT_INCLUDE_DIR", PD_TEST_SOURCE_DIR "/sdk/include", 1);
    setenv("PDEXT_CUDA_ARCH", "75", 1); // one architecture keeps the test fast
    pd_registry *reg = nullptr;
    ASSERT_EQ(pd_registry_create(&reg), PD_OK);
    pd_aot_options o;
    std::memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.n_inputs = 2;
    o.build_dir = dir;
    std::string spec = PD_TEST_SOURCE_DIR "/tests/ops/aot_gpu_add.cu:GpuAdd";
    char *lib = nullptr; // the JIT front builds it; the adapter loads libraries only
    ASSERT_EQ(pd_jit_aot_build(spec.c_str(), &o, &lib), PD_OK) << pd_last_error();
    ASSERT_EQ(pd_aot_load(reg, lib, &o, nullptr), PD_OK) << pd_last_error();
    std::free(lib);
    pd_aot_info info;
    ASSERT_EQ(pd_aot_op_info(pd_op_find(reg, "GpuAdd"), &info), PD_OK);
    EXPECT_TRUE(info.gpu);
    EXPECT_NE(std::strstr(info.library, dir), nullptr);
    pd_tensor a, b, out = PD_TENSOR_UNDEFINED;
    int64_t n = 4;
    ASSERT_EQ(pd_tensor_full(&a, PD_FLOAT32, pd_place_cpu(), 1, &n, 1.0), PD_OK);
    ASSERT_EQ(pd_tensor_full(&b, PD_FLOAT32, pd_place_cpu(), 1, &n, 2.0), PD_OK);
    pd_arg in[2] = {pd_arg_of(&a), pd_arg_of(&b)};
    pd_arg outs[1] = {pd_arg_of(&out)};
    EXPECT_EQ(pd_run(reg, "GpuAdd", in, 2, nullptr, 0, outs, 1), PD_ERR_UNAVAILABLE);
    EXPECT_NE(std::strstr(pd_last_error(), "is a GPU AOT kernel"), nullptr) << pd_last_error();
    EXPECT_EQ(out.data, nullptr);
    // Where a GPU is present: GPU tensors run it on the call's stream.
    int32_t count = 0;
    if (pd_device_count(PD_PLACE_GPU, &count) == PD_OK && count > 0) {
        pd_tensor ga, gb, back;
        ASSERT_EQ(pd_tensor_copy_to(&ga, &a, pd_place_gpu(0)), PD_OK) << pd_last_error();
        ASSERT_EQ(pd_tensor_copy_to(&gb, &b, pd_place_gpu(0)), PD_OK) << pd_last_error();
        pd_arg gin[2] = {pd_arg_of(&ga), pd_arg_of(&gb)};
        ASSERT_EQ(pd_run(reg, "GpuAdd", gin, 2, nullptr, 0, outs, 1), PD_OK) << pd_last_error();
        ASSERT_EQ(pd_tensor_copy_to(&back, &out, pd_place_cpu()), PD_OK) << pd_last_error();
        for (int64_t i = 0; i < n; ++i)
            EXPECT_EQ(static_cast<const float *>(back.data)[i], 3.0f);
        pd_tensor_release(&back);
        pd_tensor_release(&out);
        pd_tensor_release(&ga);
        pd_tensor_release(&gb);
    }
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_registry_destroy(reg);
    EXPECT_EQ(system((std::string("/bin/rm -rf '") + dir + "'").c_str()), 0);
}
