/*
 * host.c - a C host of two static bundles that carry MindSpore AOT functions (built by
 * aot_bundle_test.c with `pdext bundle`): "aotnew" (examples/relu/relu.c, the example's
 * ScaleCumsum, the test kernels' CustomSplit; the default std::string ABI) and "aotold"
 * (CustomAffine built with -D_GLIBCXX_USE_CXX11_ABI=0, as MindSpore builds kernels). It
 * registers both with their generated headers, runs every op against values computed here,
 * and checks what the adapter reports (Init once per signature, the ABI, the companions).
 * Prints "aot bundle host: ok" when every check passed.
 */
#include "aotnew.h"
#include "aotold.h"
#include "pdext_aot.h"

#include <stdio.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                    \
    do {                                                    \
        if (!(cond)) {                                      \
            fprintf(stderr, "%s:%d: ", __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                   \
            fputc('\n', stderr);                            \
            ++failures;                                     \
        }                                                   \
    } while (0)

/* Runs ScaleCumsum (scale 2, bias 0.5) on 1 .. n and checks scale * cumsum + bias. */
static void check_scale_cumsum(pd_registry *reg, int64_t n)
{
    float xs[8];
    for (int64_t i = 0; i < n; ++i)
        xs[i] = (float)(i + 1);
    pd_tensor x, out = PD_TENSOR_UNDEFINED;
    if (pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 1, &n, NULL, NULL) != PD_OK)
        return;
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    pd_attr attrs[2] = {pd_attr_of_float("scale", 2.0f), pd_attr_of_float("bias", 0.5f)};
    pd_status s = pd_run(reg, "ScaleCumsum", &in, 1, attrs, 2, &outs, 1);
    CHECK(s == PD_OK, "ScaleCumsum: %s", pd_last_error());
    if (s == PD_OK) {
        CHECK(out.ndim == 1 && out.shape[0] == n, "ScaleCumsum: output rank %d", (int)out.ndim);
        float sum = 0;
        for (int64_t i = 0; i < n; ++i) {
            sum += xs[i];
            float want = 2.0f * sum + 0.5f, got = ((const float *)out.data)[i];
            CHECK(got == want, "ScaleCumsum[%d] = %g, expected %g", (int)i, got, want);
        }
    }
    pd_tensor_release(&out);
    pd_tensor_release(&x);
}

/* CustomSplit of a 2x3 input: row sums (float32 [2]) and an int64 copy ([2, 3]). */
static void check_split(pd_registry *reg)
{
    float xs[6] = {1, 2, 3, 4, 5, 6};
    int64_t shape[2] = {2, 3};
    pd_tensor x, sums = PD_TENSOR_UNDEFINED, copy = PD_TENSOR_UNDEFINED;
    if (pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 2, shape, NULL, NULL) != PD_OK)
        return;
    pd_arg in = pd_arg_of(&x);
    pd_arg outs[2] = {pd_arg_of(&sums), pd_arg_of(&copy)};
    pd_status s = pd_run(reg, "CustomSplit", &in, 1, NULL, 0, outs, 2);
    CHECK(s == PD_OK, "CustomSplit: %s", pd_last_error());
    if (s == PD_OK) {
        CHECK(sums.dtype == PD_FLOAT32 && sums.ndim == 1 && sums.shape[0] == 2,
              "CustomSplit: sums dtype %d rank %d", (int)sums.dtype, (int)sums.ndim);
        CHECK(copy.dtype == PD_INT64 && copy.ndim == 2 && copy.shape[1] == 3,
              "CustomSplit: copy dtype %d rank %d", (int)copy.dtype, (int)copy.ndim);
        CHECK(((float *)sums.data)[0] == 6 && ((float *)sums.data)[1] == 15, "CustomSplit sums");
        CHECK(((int64_t *)copy.data)[5] == 6, "CustomSplit copy");
    }
    pd_tensor_release(&sums);
    pd_tensor_release(&copy);
    pd_tensor_release(&x);
}

/* CustomAffine of the old-ABI bundle: -(x * scale + offset) with mode's default "neg". */
static void check_affine(pd_registry *reg)
{
    float xs[3] = {1, -2, 3};
    int64_t n = 3;
    pd_tensor x, out = PD_TENSOR_UNDEFINED;
    if (pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 1, &n, NULL, NULL) != PD_OK)
        return;
    pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
    pd_attr attrs[2] = {pd_attr_of_float("scale", 3.0f), pd_attr_of_int64("offset", 1)};
    pd_status s = pd_run(reg, "CustomAffine", &in, 1, attrs, 2, &outs, 1);
    CHECK(s == PD_OK, "CustomAffine: %s", pd_last_error());
    for (int64_t i = 0; s == PD_OK && i < n; ++i) {
        float want = -(xs[i] * 3.0f + 1.0f), got = ((const float *)out.data)[i];
        CHECK(got == want, "CustomAffine[%d] = %g, expected %g", (int)i, got, want);
    }
    pd_tensor_release(&out);
    pd_tensor_release(&x);
}

int main(void)
{
    pd_registry *reg = NULL;
    pd_module *m_new = NULL, *m_old = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return 2;
    pd_status s = pd_bundle_register_aotnew(reg, &m_new);
    CHECK(s == PD_OK, "pd_bundle_register_aotnew: %s", pd_last_error());
    s = pd_bundle_register_aotold(reg, &m_old);
    CHECK(s == PD_OK, "pd_bundle_register_aotold: %s", pd_last_error());
    CHECK(pd_registry_op_count(reg) == 5, "%d ops registered, expected 5",
          (int)pd_registry_op_count(reg));

    const pd_op *cumsum = pd_op_find(reg, "ScaleCumsum");
    pd_aot_info info;
    CHECK(pd_aot_op_info(cumsum, &info) == PD_OK, "pd_aot_op_info: %s", pd_last_error());
    CHECK(strcmp(info.function, "ScaleCumsum") == 0 && info.has_init && info.has_infer_shape &&
              !info.has_infer_type && info.cxx11_abi && !info.gpu,
          "ScaleCumsum info: %s init %d shape %d type %d cxx11 %d gpu %d", info.function,
          info.has_init, info.has_infer_shape, info.has_infer_type, info.cxx11_abi, info.gpu);
    check_scale_cumsum(reg, 4);
    check_scale_cumsum(reg, 4);
    CHECK(pd_aot_init_count(cumsum) == 1, "Init ran %d times for one shape",
          (int)pd_aot_init_count(cumsum));
    check_scale_cumsum(reg, 7);
    CHECK(pd_aot_init_count(cumsum) == 2, "Init ran %d times for two shapes",
          (int)pd_aot_init_count(cumsum));
    check_split(reg);

    const pd_op *affine = pd_op_find(reg, "CustomAffine");
    CHECK(pd_aot_op_info(affine, &info) == PD_OK && !info.cxx11_abi,
          "CustomAffine: the old std::string ABI expected");
    check_affine(reg);

    /* The bundle's ordinary ops sit beside the AOT ones. */
    float xs[2] = {-1, 2};
    int64_t n = 2;
    pd_tensor x, out = PD_TENSOR_UNDEFINED;
    if (pd_tensor_from_buffer(&x, xs, PD_FLOAT32, pd_place_cpu(), 1, &n, NULL, NULL) == PD_OK) {
        pd_arg in = pd_arg_of(&x), outs = pd_arg_of(&out);
        s = pd_run(reg, "custom_relu", &in, 1, NULL, 0, &outs, 1);
        CHECK(s == PD_OK && ((float *)out.data)[0] == 0 && ((float *)out.data)[1] == 2,
              "custom_relu: %s", pd_last_error());
        pd_tensor_release(&out);
        pd_tensor_release(&x);
    }

    CHECK(pd_module_unload(m_old) == PD_OK, "unload: %s", pd_last_error());
    CHECK(pd_op_find(reg, "CustomAffine") == NULL, "CustomAffine still registered");
    pd_registry_destroy(reg);
    if (failures == 0)
        printf("aot bundle host: ok\n");
    return failures == 0 ? 0 : 1;
}
