/*
 * ort_adapter.h - the ONNX Runtime adapter's interface (libpdext_onnxruntime.a): what its files
 * share, and the one function an ORT custom-op library's RegisterCustomOps calls
 * (templates/bundle_ort.c.in, filled by the JIT for `pdext bundle --onnxruntime`).
 *
 * The pieces: ort_register.c (the API version check, the process's registry of the library's
 * ops, one OrtCustomOp per forward op and the domain added to the session options), ort_kernel.c
 * (kernel creation: the node's attributes read by their declared names and types; compute:
 * ORT's tensors wrapped zero-copy, pd_op_run, results into ORT's outputs), ort_infer.c (ORT's
 * shape inference from pd_op_infer). The adapter uses only libpdext's public API.
 */
#ifndef PD_ORT_ADAPTER_H
#define PD_ORT_ADAPTER_H

#include "ort_abi.h"
#include "pdext.h"

/* One pdext op as ORT sees it. ORT hands back &base, the first member, to every callback. */
typedef struct pd__ort_op {
    pd_ort_custom_op base;
    const pd_op *op;
    const pd_ort_api *api;
    bool cuda; /* the variant for ORT's CUDA execution provider: GPU tensors, ORT's stream */
    int32_t n_inputs, n_outputs, n_attrs;
    uint8_t in_kind[PD_MAX_INPUTS]; /* PD_ORT_REQUIRED / OPTIONAL / VARIADIC */
    uint8_t out_kind[PD_MAX_OUTPUTS];
    uint32_t inplace_inputs; /* bit i: the op writes declared input i in place (its inplace map) */
    pd_attr_info attrs[PD_MAX_ATTRS]; /* the declaration, read once */
} pd__ort_op;

/* ORT's element type for a pdext dtype and back; PD_ORT_ELEM_UNDEFINED / PD_UNDEFINED when
 * the other side has none. */
int pd__ort_elem_of(pd_data_type dtype);
pd_data_type pd__ort_dtype_of(int elem);
/* "float32" for a pdext dtype, "string" etc. for ORT-only element types. */
const char *pd__ort_elem_name(int elem);

/* A status for ORT carrying a formatted message (always non-NULL unless ORT is out of memory). */
pd_ort_status *pd__ort_fail(const pd_ort_api *api, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ort_kernel.c: the OrtCustomOp kernel callbacks. */
pd_ort_status *pd__ort_kernel_create(const pd_ort_custom_op *op, const void *api,
                                     const pd_ort_kernel_info *info, void **kernel);
pd_ort_status *pd__ort_kernel_compute(void *kernel, pd_ort_kernel_context *ctx);
void pd__ort_kernel_destroy(void *kernel);

/* ort_infer.c: OrtCustomOp.InferOutputShapeFn. */
pd_ort_status *pd__ort_infer_shapes(const pd_ort_custom_op *op, pd_ort_shape_context *ctx);

/* pd_ort_register_ops' flags: the library has CUDA code (sources built by nvcc), so each op is
 * also registered for ORT's CUDA execution provider. */
#define PD_ORT_WITH_CUDA 0x1u

/*
 * Registers every forward op of the op table `info` in a custom-op domain named `domain` and
 * adds the domain to `options`; the entry point of an ORT custom-op library. With
 * PD_ORT_WITH_CUDA in `flags`, each op is registered twice: for the CPU execution provider and
 * for the CUDA one (ORT then places a node on the GPU when the session has that provider, and
 * the kernel gets GPU tensors and runs on ORT's compute stream). `api_base` is
 * ORT's; an ORT whose API is older than PD_ORT_API_VERSION is refused naming both versions.
 * `origin` names the library in messages ("onnxruntime library 'myops'"). The ops are
 * registered once per process (a pdext registry of the library's own); each call adds one
 * domain, released when the library is unloaded. Returns NULL or ORT's error status.
 */
pd_ort_status *pd_ort_register_ops(pd_ort_session_options *options, const pd_ort_api_base *api_base,
                                   const pd_module_info *info, const char *domain,
                                   const char *origin, uint32_t flags);

#endif /* PD_ORT_ADAPTER_H */
