/*
 * echo_op.c - a test op for `pdext run`: cli_echo takes X and an optional Y and one attr of
 * every type, and writes what it received as a float64 vector, so that a test can check how
 * the command parsed each --attr and which inputs it bound.
 *
 * Out = [flag, n, scale, eps, big, len(name), name[0], len(shape), shape[1], len(ws), ws[0],
 *        len(dims), dims[-1], len(tags), len(tags[1]), Y given, numel(X), numel(Y)]
 */
#include "extension.h"

#include <string.h>

#define ECHO_LEN 18

static void echo_shape(pd_kernel_ctx *ctx)
{
    int64_t n = ECHO_LEN;
    pd_set_output_shape(ctx, 0, 1, &n);
}

static void echo_dtype(pd_kernel_ctx *ctx) { pd_set_output_dtype(ctx, 0, PD_FLOAT64); }

static void echo(pd_kernel_ctx *ctx)
{
    const pd_tensor *y = pd_input(ctx, 1);
    double *o = (double *)pd_data(pd_output(ctx, 0));
    int32_t c;
    o[0] = pd_attr_bool(ctx, 0);
    o[1] = pd_attr_int(ctx, 1);
    o[2] = pd_attr_float(ctx, 2);
    o[3] = pd_attr_double(ctx, 3);
    o[4] = (double)pd_attr_int64(ctx, 4);
    const char *name = pd_attr_string(ctx, 5);
    o[5] = (double)strlen(name);
    o[6] = name[0];
    const int32_t *shape = pd_attr_ints(ctx, 6, &c);
    o[7] = c;
    o[8] = c > 1 ? shape[1] : -1;
    const float *ws = pd_attr_floats(ctx, 7, &c);
    o[9] = c;
    o[10] = c > 0 ? ws[0] : -1;
    const int64_t *dims = pd_attr_int64s(ctx, 8, &c);
    o[11] = c;
    o[12] = c > 0 ? (double)dims[c - 1] : -1;
    const char *const *tags = pd_attr_strings(ctx, 9, &c);
    o[13] = c;
    o[14] = c > 1 ? (double)strlen(tags[1]) : -1;
    o[15] = y != NULL;
    o[16] = (double)pd_numel(pd_input(ctx, 0));
    o[17] = y ? (double)pd_numel(y) : 0;
}

PD_BUILD_OP(cli_echo,
    .inputs = {"X", PD_OPTIONAL("Y")},
    .outputs = {"Out"},
    .attrs = {"flag: bool", "n: int", "scale: float", "eps: double", "big: int64_t",
              "name: std::string", "shape: std::vector<int>", "ws: std::vector<float>",
              "dims: std::vector<int64_t>", "tags: std::vector<std::string>"},
    .kernel = echo,
    .infer_shape = echo_shape,
    .infer_dtype = echo_dtype);
