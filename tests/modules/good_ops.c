/*
 * good_ops.c - a valid module for the loader tests: a forward op with vector and optional
 * inputs and an attr of every Paddle spelling, its grad and double grad ops, an op declaring
 * its attrs with the C aliases and loose white space, and an op with an inplace map.
 * Kernels do nothing: these tests load and inspect, they do not run.
 */
#include "extension.h"

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }

PD_BUILD_OP(tm_every_attr,
    .inputs = {"X", PD_VEC("Ys"), PD_OPTIONAL("Bias")},
    .outputs = {"Out", PD_VEC("Outs")},
    .attrs = {"flag: bool", "count: int", "scale: float", "eps: double", "axis: int64_t",
              "mode: std::string", "dims: std::vector<int>", "weights: std::vector<float>",
              "shape: std::vector<int64_t>", "names: std::vector<std::string>"},
    .kernel = noop);

PD_BUILD_GRAD_OP(tm_every_attr,
    .inputs = {"X", PD_VEC("Ys"), PD_GRAD("Out")},
    .outputs = {PD_GRAD("X"), PD_GRAD(PD_VEC("Ys"))},
    .attrs = {"axis: int64_t", "scale: float"},
    .kernel = noop);

PD_BUILD_DOUBLE_GRAD_OP(tm_every_attr,
    .inputs = {"X", PD_GRAD(PD_GRAD("X"))},
    .outputs = {PD_GRAD(PD_GRAD("Out"))},
    .attrs = {"axis: int64_t"},
    .kernel = noop);

PD_BUILD_OP(tm_aliases,
    .inputs = {"X"},
    .outputs = {"Out"},
    .attrs = {"a:int32", "  b :  int64 ", "c: string", "d: int[]", "e : float [ ]", "f:int64[]",
              "g: string[]", "h: std :: vector < std :: string >", "i:std::vector<int64_t>"},
    .kernel = noop);

PD_BUILD_OP(tm_inplace,
    .inputs = {"X", PD_VEC("Xs"), PD_OPTIONAL("Y")},
    .outputs = {"Out", PD_VEC("Outs"), "Extra"},
    .inplace = {{"X", "Out"}, {PD_VEC("Xs"), PD_VEC("Outs")}},
    .kernel = noop);

/* What the loader stored in this module's function-table slot. */
const void *good_ops_api(void) { return pd__api; }
