/*
 * pdext_aot_bundle.h - MindSpore AOT functions carried by a bundle (`pdext bundle ...
 * add.cc:CustomAdd`): what the source `pdext bundle` generates for them refers to. Op authors
 * do not write this by hand.
 *
 * Each AOT function of a bundle becomes one pd_aot_bundle_op: an ordinary pd_op_def (first
 * member, listed in the bundle's "pd_ops" table, so the bundle registers it like its other ops
 * with no compiler and no dlopen) whose kernel and infer functions are the adapter's
 * (libpdext_aot), followed by what pd_aot_load would have found in a library: the function and
 * its optional Init / InferShape / InferType (weak references, NULL when the source does not
 * define them), the string ABI it was compiled with and the outputs' given shapes and dtypes.
 * The adapter makes its per-function state (AotExtra per signature, Init results) on the first
 * call and keeps it in `state`; pd_aot_bundle_release, which the generated source calls from a
 * destructor (process exit, or dlclose of a shared bundle), frees it and destroys the kernel
 * data through its virtual destructor. A program linking such a bundle links libpdext_aot
 * (the bundle's header and .pc name it).
 */
#ifndef PDEXT_AOT_BUNDLE_H
#define PDEXT_AOT_BUNDLE_H

#include "pd_op.h"

PD_EXTERN_C_BEGIN
#pragma GCC visibility push(default)

/* MindSpore's AOT calling convention (pdext_aot.h). */
typedef int (*pd_aot_kernel_fn)(int nparam, void **params, int *ndims, int64_t **shapes,
                                const char **dtypes, void *stream, void *extra);
/* The address of an optional companion (FInit, FInferShape, FInferType), whatever its type. */
typedef void (*pd_aot_any_fn)(void);

/* One AOT function of a bundle. Append-only after `state`'s predecessors. */
typedef struct pd_aot_bundle_op {
    pd_op_def def;        /* the op the registry sees; kernel = pd_aot_bundle_kernel */
    uint32_t struct_size; /* sizeof(pd_aot_bundle_op) */
    const char *function; /* F */
    const char *source;   /* the source F was compiled from, for messages */
    pd_aot_kernel_fn fn;
    pd_aot_any_fn init, infer_shape, infer_type; /* NULL: not defined */
    int32_t cxx11_abi;                           /* 1: libstdc++'s new std::string ABI */
    int32_t gpu;                                 /* 1: a GPU kernel (.cu source) */
    int32_t n_inputs, n_outputs;
    /* Per output: its dtype (PD_UNDEFINED: not given) and shape (ndim -1: not given). */
    int32_t out_dtype[PD_MAX_OUTPUTS];
    int32_t out_ndim[PD_MAX_OUTPUTS];
    int64_t out_shape[PD_MAX_OUTPUTS][PD_MAX_DIMS];
    void *state; /* the adapter's; NULL until the first call */
} pd_aot_bundle_op;

/* The kernel and infer functions of every bundle AOT op (def.kernel, def.infer_shape,
 * def.infer_dtype): they run F as pd_aot_load's ops do. */
void pd_aot_bundle_kernel(pd_kernel_ctx *ctx);
void pd_aot_bundle_infer_shape(pd_kernel_ctx *ctx);
void pd_aot_bundle_infer_dtype(pd_kernel_ctx *ctx);

/* Frees what the adapter made for `op` (AotExtras, kernel data); the op may run again after. */
void pd_aot_bundle_release(pd_aot_bundle_op *op);

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_AOT_BUNDLE_H */
