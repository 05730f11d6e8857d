/* aot_device_test.c - where MindSpore AOT kernels run: a kernel of the simulated device gets
 * device pointers, a device workspace and the call's stream (pd_stream), and its outputs stay
 * on the device; a device kernel given CPU tensors, a CPU kernel given device tensors and a
 * GPU kernel on a machine without a CUDA device each fail naming the input and both places. */
#include "pd_sim_device.h"
#include "pd_test.h"
#include "pdext_aot.h"

#include <stdio.h>
#include <string.h>

static pd_registry *reg_with(const char *library, const char *function, int32_t n_inputs,
                             const char *const *attrs, int32_t n_attrs)
{
    pd_registry *reg = NULL;
    PD_EXPECT_OK(pd_registry_create(&reg));
    char spec[1024];
    snprintf(spec, sizeof spec, "%s:%s", pd_test_path(library), function);
    pd_aot_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.n_inputs = n_inputs;
    o.attrs = attrs;
    o.n_attrs = n_attrs;
    PD_EXPECT_OK(pd_aot_load(reg, spec, &o, NULL));
    return reg;
}

static const char *const scale_attr[] = {"scale: float"};

PD_TEST(AotDevice, SimKernelRunsOnDeviceTensorsWithTheCallsStream)
{
    int32_t sim = 0;
    PD_ASSERT_OK(pd_sim_device_install(&sim));
    pd_registry *reg = reg_with("aot_sim_kernel.so", "SimScale", 1, scale_attr, 1);
    float xs[5] = {1, -2, 3, 0.5f, 10};
    int64_t n = 5;
    pd_tensor host, x, out = PD_TENSOR_UNDEFINED, back;
    PD_ASSERT_OK(pd_tensor_from_buffer(&host, xs, PD_FLOAT32, pd_place_cpu(), 1, &n, NULL, NULL));
    PD_ASSERT_OK(pd_tensor_copy_to(&x, &host, pd_place_custom("sim", 0)));
    pd_sim_stats before, after;
    pd_sim_stats_get(&before);
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    pd_attr attrs[1] = {pd_attr_of_float("scale", 3.0f)};
    PD_ASSERT_OK(pd_run(reg, "SimScale", &in, 1, attrs, 1, &outs, 1));
    PD_EXPECT_STREQ(pd_place_type_name(&out.place), "sim");
    PD_ASSERT_OK(pd_tensor_copy_to(&back, &out, pd_place_cpu())); /* waits for the stream */
    pd_sim_stats_get(&after);
    PD_EXPECT_EQ(after.launches - before.launches, 1);
    for (int64_t i = 0; i < n; ++i)
        PD_EXPECT_EQ(((const float *)back.data)[i], xs[i] * 3.0f + 1.0f);
    pd_tensor_release(&back);
    pd_tensor_release(&out);
    pd_tensor_release(&x);
    pd_tensor_release(&host);
    pd_registry_destroy(reg);
    pd_sim_stats_get(&after);
    PD_EXPECT_EQ(after.pending, 0);
}

PD_TEST(AotDevice, DeviceKernelGivenCpuTensorsFailsNamingBothPlaces)
{
    int32_t sim = 0;
    PD_ASSERT_OK(pd_sim_device_install(&sim));
    pd_registry *reg = reg_with("aot_sim_kernel.so", "SimScale", 1, scale_attr, 1);
    pd_tensor x, out = PD_TENSOR_UNDEFINED;
    int64_t n = 3;
    PD_ASSERT_OK(pd_tensor_full(&x, PD_FLOAT32, pd_place_cpu(), 1, &n, 1.0));
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    pd_attr attrs[1] = {pd_attr_of_float("scale", 3.0f)};
    PD_EXPECT_ERROR(pd_run(reg, "SimScale", &in, 1, attrs, 1, &outs, 1), PD_ERR_UNAVAILABLE,
                    "is a sim AOT kernel: it runs on sim tensors with the call's stream, but "
                    "input 0 ('in0') is on cpu:0");
    PD_EXPECT(out.data == NULL);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}

PD_TEST(AotDevice, CpuKernelGivenDeviceTensorsFailsNamingTheInput)
{
    int32_t sim = 0;
    PD_ASSERT_OK(pd_sim_device_install(&sim));
    pd_registry *reg = reg_with("aot_kernels_new.so", "CustomAdd", 2, NULL, 0);
    float xs[2] = {1, 2};
    int64_t n = 2;
    pd_tensor host, a, b, out = PD_TENSOR_UNDEFINED;
    PD_ASSERT_OK(pd_tensor_from_buffer(&host, xs, PD_FLOAT32, pd_place_cpu(), 1, &n, NULL, NULL));
    PD_ASSERT_OK(pd_tensor_copy_to(&a, &host, pd_place_custom("sim", 0)));
    PD_ASSERT_OK(pd_tensor_copy_to(&b, &host, pd_place_custom("sim", 0)));
    pd_arg in[2] = {pd_arg_of(&a), pd_arg_of(&b)};
    pd_arg outs = pd_arg_of(&out);
    PD_EXPECT_ERROR(pd_run(reg, "CustomAdd", in, 2, NULL, 0, &outs, 1), PD_ERR_UNAVAILABLE,
                    "input 0 ('in0') is on sim:0, but 'CustomAdd'");
    PD_EXPECT_CONTAINS(pd_last_error(), "is a CPU AOT kernel");
    pd_tensor_release(&a);
    pd_tensor_release(&b);
    pd_tensor_release(&host);
    pd_registry_destroy(reg);
}

/* aot_gpu_kernel.so calls the CUDA runtime: a GPU kernel. Given CPU tensors it fails saying
 * what it runs on and, on a machine without a CUDA device, that there is none. */
PD_TEST(AotDevice, GpuKernelWithoutADeviceFailsClearly)
{
    pd_registry *reg = reg_with("aot_gpu_kernel.so", "GpuZero", 1, NULL, 0);
    pd_tensor x, out = PD_TENSOR_UNDEFINED;
    int64_t n = 1;
    PD_ASSERT_OK(pd_tensor_full(&x, PD_FLOAT32, pd_place_cpu(), 1, &n, 1.0));
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    PD_EXPECT_ERROR(pd_run(reg, "GpuZero", &in, 1, NULL, 0, &outs, 1), PD_ERR_UNAVAILABLE,
                    "is a GPU AOT kernel: it runs on gpu tensors with the call's stream, but "
                    "input 0 ('in0') is on cpu:0; copy the inputs to a gpu place");
    static char message[4096];
    const char *text = message;
    snprintf(message, sizeof message, "%s", pd_last_error());
    int32_t count = 0;
    if (pd_device_count(PD_PLACE_GPU, &count) != PD_OK || count == 0)
        PD_EXPECT_CONTAINS(text, "CUDA device");
    /* And GPU tensors cannot be made here without a device: the same clear error. */
    pd_tensor g;
    if (count == 0)
        PD_EXPECT_EQ(pd_tensor_copy_to(&g, &x, pd_place_gpu(0)), PD_ERR_UNAVAILABLE);
    pd_tensor_release(&x);
    pd_registry_destroy(reg);
}
