/*
 * decl_ops.c - ops for decl_test.c and the `pdext` command tests: attrs with a default of every
 * type (in Paddle's spellings and the C aliases), read back by name; and an input named
 * "X@VECTORS", a name segment that is not @VECTOR.
 */
#include "extension.h"

#include <string.h>

#define ECHO_VALUES 16

static void echo_shape(pd_kernel_ctx *ctx)
{
    int64_t n = ECHO_VALUES;
    pd_set_output_shape(ctx, 0, 1, &n);
}

static void echo_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_FLOAT64); }

/* Out holds what the kernel read, each attr by name. */
static void echo_kernel(pd_kernel_ctx *ctx)
{
    double *v = pd_data(pd_output_named(ctx, "Out"));
    int32_t n_dims, n_scales, n_offsets, n_tags;
    const int32_t *dims = pd_attr_ints_named(ctx, "dims", &n_dims);
    const float *scales = pd_attr_floats_named(ctx, "scales", &n_scales);
    const int64_t *offsets = pd_attr_int64s_named(ctx, "offsets", &n_offsets);
    const char *const *tags = pd_attr_strings_named(ctx, "tags", &n_tags);
    v[0] = pd_attr_bool_named(ctx, "flag");
    v[1] = pd_attr_int_named(ctx, "axis");
    v[2] = pd_attr_float_named(ctx, "scale");
    v[3] = pd_attr_double_named(ctx, "eps");
    v[4] = (double)pd_attr_int64_named(ctx, "big");
    v[5] = (double)strlen(pd_attr_string_named(ctx, "mode"));
    v[6] = pd_attr_string_named(ctx, "mode")[1];
    v[7] = n_dims;
    v[8] = n_dims ? dims[n_dims - 1] : -99;
    v[9] = n_scales;
    v[10] = n_scales ? scales[n_scales - 1] : -99;
    v[11] = n_offsets ? (double)offsets[0] + 1000 : 0;
    v[12] = n_tags;
    v[13] = n_tags ? (double)strlen(tags[n_tags - 1]) : -99;
    v[14] = pd_attr_int_named(ctx, "need");
    v[15] = pd_input_index(ctx, "X") + 10 * pd_output_index(ctx, "Out") +
            100 * (double)pd_attr_int64_named(ctx, "n");
}

PD_BUILD_OP(td_echo,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"flag: bool = true", "axis: int = -1", "scale: float = 0.5f",
              "eps:double=1e-5", "big: int64_t = 4294967296",
              "mode: std::string = \"a\\\"b,c\"", "dims: std::vector<int> = {1, 2, 3}",
              "scales: std::vector<float> = { 0.5, -1.25f }",
              "offsets: std::vector<int64_t> = {}",
              "tags: std::vector<std::string> = {\"a\", \"b,c\"}", "need: int",
              "n: int64 = 7"},
    .kernel = echo_kernel,
    .infer_shape = echo_shape,
    .infer_dtype = echo_dtype);

/* Out mirrors X@VECTORS, which is one plain input: "@VECTORS" is part of its name. */
static void copy_kernel(pd_kernel_ctx *ctx) { pd_set_output(ctx, 0, pd_input(ctx, 0)); }

PD_BUILD_OP(td_vectors_name, .inputs = {"X@VECTORS"}, .outputs = {"Out"}, .kernel = copy_kernel);
