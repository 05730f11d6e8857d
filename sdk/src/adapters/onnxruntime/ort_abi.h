/*
 * ort_abi.h - the parts of ONNX Runtime's C ABI that the pdext ORT adapter uses, declared by
 * pdext itself: onnxruntime's PyPI wheel ships libonnxruntime.so but no headers, and an ORT
 * custom-op library needs nothing of ORT at link time (ORT hands it the OrtApiBase).
 *
 * How ORT's C ABI works (onnxruntime_c_api.h, "Rules on how to add a new Ort API version"):
 * OrtGetApiBase() returns two function pointers, GetApi(version) and GetVersionString(); GetApi
 * returns the OrtApi table, a struct of function pointers that only ever grows at its end, or
 * NULL when the runtime is older than `version`. An entry's position never changes once its
 * version shipped, so an entry is reached by its index. Every table function that can fail
 * returns an OrtStatus * (NULL on success) that the caller releases with ReleaseStatus.
 *
 * Each entry below carries its index in the OrtApi table and the API version that added it. The
 * indices were counted from ORT's published table order and agree with the size checks ORT
 * publishes for each finished version (the last entry of version N sits at the index ORT
 * asserts): version 1 ends at 101 (ReleaseCustomOpDomain), 2 at 118, 3 at 124, 4 at 126, 5 at
 * 149, 6 at 157, 7 at 161, 8 at 169, 9 at 191, 10 at 203, 11 at 209, 12 at 218, 13 at 224, 14
 * at 238, 15 at 254, 16 at 265, 17 starts at 266 (SetUserLoggingFunction). The adapter asks
 * for PD_ORT_API_VERSION, the newest version any entry here needs, and refuses an older ORT.
 */
#ifndef PD_ORT_ABI_H
#define PD_ORT_ABI_H

#include <stddef.h>
#include <stdint.h>

/* The table version the adapter needs: 17 brings the shape inference context
 * (ShapeInferContext_*, ReadOpAttr) and OrtCustomOp.InferOutputShapeFn; ORT 1.17 ships it. */
#define PD_ORT_API_VERSION 17
#define PD_ORT_API_RELEASE "1.17" /* the first onnxruntime release with that table */

/* ORT's objects, opaque here: only pointers to them cross. */
typedef struct pd_ort_status pd_ort_status;                   /* OrtStatus */
typedef struct pd_ort_session_options pd_ort_session_options; /* OrtSessionOptions */
typedef struct pd_ort_domain pd_ort_domain;                   /* OrtCustomOpDomain */
typedef struct pd_ort_value pd_ort_value;                     /* OrtValue */
typedef struct pd_ort_type_shape pd_ort_type_shape;           /* OrtTensorTypeAndShapeInfo */
typedef struct pd_ort_kernel_info pd_ort_kernel_info;         /* OrtKernelInfo */
typedef struct pd_ort_kernel_context pd_ort_kernel_context;   /* OrtKernelContext */
typedef struct pd_ort_shape_context pd_ort_shape_context;     /* OrtShapeInferContext */
typedef struct pd_ort_op_attr pd_ort_op_attr;                 /* OrtOpAttr */
typedef struct pd_ort_memory_info pd_ort_memory_info;         /* OrtMemoryInfo */

/* OrtErrorCode: the codes ORT's statuses carry. */
enum {
    PD_ORT_OK = 0,
    PD_ORT_FAIL = 1,
    PD_ORT_INVALID_ARGUMENT = 2,
    PD_ORT_RUNTIME_EXCEPTION = 6,
    PD_ORT_NOT_IMPLEMENTED = 9
};

/* ONNXTensorElementDataType: ONNX's TensorProto.DataType numbers. UNDEFINED in an op's input or
 * output type means "any type" (ORT then gives that slot a type constraint of every type). */
enum {
    PD_ORT_ELEM_UNDEFINED = 0,
    PD_ORT_ELEM_FLOAT = 1,
    PD_ORT_ELEM_UINT8 = 2,
    PD_ORT_ELEM_INT8 = 3,
    PD_ORT_ELEM_UINT16 = 4,
    PD_ORT_ELEM_INT16 = 5,
    PD_ORT_ELEM_INT32 = 6,
    PD_ORT_ELEM_INT64 = 7,
    PD_ORT_ELEM_STRING = 8,
    PD_ORT_ELEM_BOOL = 9,
    PD_ORT_ELEM_FLOAT16 = 10,
    PD_ORT_ELEM_DOUBLE = 11,
    PD_ORT_ELEM_UINT32 = 12,
    PD_ORT_ELEM_UINT64 = 13,
    PD_ORT_ELEM_COMPLEX64 = 14,
    PD_ORT_ELEM_COMPLEX128 = 15,
    PD_ORT_ELEM_BFLOAT16 = 16
};

/* OrtCustomOpInputOutputCharacteristic. ORT accepts VARIADIC on the last input or output only. */
enum { PD_ORT_REQUIRED = 0, PD_ORT_OPTIONAL = 1, PD_ORT_VARIADIC = 2 };

/* OrtOpAttrType, for ReadOpAttr. */
enum {
    PD_ORT_ATTR_UNDEFINED = 0,
    PD_ORT_ATTR_INT = 1,
    PD_ORT_ATTR_INTS = 2,
    PD_ORT_ATTR_FLOAT = 3,
    PD_ORT_ATTR_FLOATS = 4,
    PD_ORT_ATTR_STRING = 5,
    PD_ORT_ATTR_STRINGS = 6
};

/* OrtMemType: where a kernel wants an input; 0 is the execution provider's default memory. */
enum { PD_ORT_MEM_DEFAULT = 0 };

/* OrtApiBase: fixed forever (ORT asserts its size and order). `version` of GetApi is a table
 * version (PD_ORT_API_VERSION), not a release number. */
typedef struct pd_ort_api_base {
    const void *(*GetApi)(uint32_t version); /* the OrtApi table, or NULL when ORT is older */
    const char *(*GetVersionString)(void);   /* "1.32.0" */
} pd_ort_api_base;

/* The OrtApi entries used, as X(index, version, return type, name, parameters). Sizes that ORT
 * passes in and out are element counts except where a comment says bytes. */
#define PD_ORT_API_LIST(X)                                                                      \
    X(0, 1, pd_ort_status *, CreateStatus, (int code, const char *msg))                         \
    X(1, 1, int, GetErrorCode, (const pd_ort_status *status))                                   \
    X(2, 1, const char *, GetErrorMessage, (const pd_ort_status *status))                       \
    X(26, 1, pd_ort_status *, CreateCustomOpDomain, (const char *domain, pd_ort_domain **out))  \
    X(27, 1, pd_ort_status *, CustomOpDomain_Add, (pd_ort_domain * domain, const void *op))     \
    X(28, 1, pd_ort_status *, AddCustomOpDomain,                                                \
      (pd_ort_session_options * options, pd_ort_domain * domain))                               \
    X(51, 1, pd_ort_status *, GetTensorMutableData, (pd_ort_value * value, void **out))         \
    X(57, 1, pd_ort_status *, CreateTensorTypeAndShapeInfo, (pd_ort_type_shape * *out))         \
    X(58, 1, pd_ort_status *, SetTensorElementType, (pd_ort_type_shape * info, int type))       \
    X(59, 1, pd_ort_status *, SetDimensions,                                                    \
      (pd_ort_type_shape * info, const int64_t *dims, size_t count))                            \
    X(60, 1, pd_ort_status *, GetTensorElementType, (const pd_ort_type_shape *info, int *out))  \
    X(61, 1, pd_ort_status *, GetDimensionsCount, (const pd_ort_type_shape *info, size_t *out)) \
    X(62, 1, pd_ort_status *, GetDimensions,                                                    \
      (const pd_ort_type_shape *info, int64_t *dims, size_t count))                             \
    X(65, 1, pd_ort_status *, GetTensorTypeAndShape,                                            \
      (const pd_ort_value *value, pd_ort_type_shape **out))                                     \
    X(72, 1, pd_ort_status *, MemoryInfoGetId, (const pd_ort_memory_info *info, int *out))      \
    X(85, 1, pd_ort_status *, KernelInfoGetAttribute_float,                                     \
      (const pd_ort_kernel_info *info, const char *name, float *out))                           \
    X(86, 1, pd_ort_status *, KernelInfoGetAttribute_int64,                                     \
      (const pd_ort_kernel_info *info, const char *name, int64_t *out))                         \
    /* out NULL: *size gets the bytes needed, NUL included */                                   \
    X(87, 1, pd_ort_status *, KernelInfoGetAttribute_string,                                    \
      (const pd_ort_kernel_info *info, const char *name, char *out, size_t *size))              \
    X(88, 1, pd_ort_status *, KernelContext_GetInputCount,                                      \
      (const pd_ort_kernel_context *ctx, size_t *out))                                          \
    X(89, 1, pd_ort_status *, KernelContext_GetOutputCount,                                     \
      (const pd_ort_kernel_context *ctx, size_t *out))                                          \
    /* *out is NULL for an absent optional input */                                             \
    X(90, 1, pd_ort_status *, KernelContext_GetInput,                                           \
      (const pd_ort_kernel_context *ctx, size_t index, const pd_ort_value **out))               \
    /* allocates output `index` with the given shape (the node's element type) */               \
    X(91, 1, pd_ort_status *, KernelContext_GetOutput,                                          \
      (pd_ort_kernel_context * ctx, size_t index, const int64_t *dims, size_t count,            \
       pd_ort_value **out))                                                                     \
    X(93, 1, void, ReleaseStatus, (pd_ort_status * status))                                     \
    X(99, 1, void, ReleaseTensorTypeAndShapeInfo, (pd_ort_type_shape * info))                   \
    X(101, 1, void, ReleaseCustomOpDomain, (pd_ort_domain * domain))                            \
    /* out NULL: *size gets the element count */                                                \
    X(162, 8, pd_ort_status *, KernelInfoGetAttributeArray_float,                               \
      (const pd_ort_kernel_info *info, const char *name, float *out, size_t *size))             \
    X(163, 8, pd_ort_status *, KernelInfoGetAttributeArray_int64,                               \
      (const pd_ort_kernel_info *info, const char *name, int64_t *out, size_t *size))           \
    /* the execution provider's stream for the node (cudaStream_t; NULL on the CPU EP) */       \
    X(193, 10, pd_ort_status *, KernelContext_GetGPUComputeStream,                              \
      (const pd_ort_kernel_context *ctx, void **out))                                           \
    /* the value's memory info belongs to the value: not released */                            \
    X(194, 10, pd_ort_status *, GetTensorMemoryInfo,                                            \
      (const pd_ort_value *value, const pd_ort_memory_info **out))                              \
    /* out NULL: *size gets the bytes needed, NUL included */                                   \
    X(244, 15, pd_ort_status *, KernelInfo_GetNodeName,                                         \
      (const pd_ort_kernel_info *info, char *out, size_t *size))                                \
    X(267, 17, pd_ort_status *, ShapeInferContext_GetInputCount,                                \
      (const pd_ort_shape_context *ctx, size_t *out))                                           \
    /* the info belongs to the context: not released */                                         \
    X(268, 17, pd_ort_status *, ShapeInferContext_GetInputTypeShape,                            \
      (const pd_ort_shape_context *ctx, size_t index, pd_ort_type_shape **out))                 \
    /* an error status when the node lacks the attribute */                                     \
    X(269, 17, pd_ort_status *, ShapeInferContext_GetAttribute,                                 \
      (const pd_ort_shape_context *ctx, const char *name, const pd_ort_op_attr **out))          \
    /* sets the shape only: the element type is ORT's own inference */                          \
    X(270, 17, pd_ort_status *, ShapeInferContext_SetOutputTypeShape,                           \
      (const pd_ort_shape_context *ctx, size_t index, const pd_ort_type_shape *info))           \
    /* `len` and *out are bytes; *out is set even when `len` is too small (an error status) */  \
    X(272, 17, pd_ort_status *, ReadOpAttr,                                                     \
      (const pd_ort_op_attr *attr, int type, void *data, size_t len, size_t *out))

/* The entries, resolved from a table by pd__ort_api_resolve (ort_register.c). */
typedef struct pd_ort_api {
#define PD__ORT_FIELD(index, version, ret, name, params) ret(*name) params;
    PD_ORT_API_LIST(PD__ORT_FIELD)
#undef PD__ORT_FIELD
} pd_ort_api;

/* OrtCustomOp as of version PD_ORT_API_VERSION plus the later fields (zeroed here; ORT reads a
 * field only when `version` says the op knows it). Field order is ORT's. */
typedef struct pd_ort_custom_op {
    uint32_t version; /* the ORT API version the op was written against */
    void *(*CreateKernel)(const struct pd_ort_custom_op *op, const void *api,
                          const pd_ort_kernel_info *info);
    const char *(*GetName)(const struct pd_ort_custom_op *op);
    const char *(*GetExecutionProviderType)(const struct pd_ort_custom_op *op); /* NULL: CPU */
    int (*GetInputType)(const struct pd_ort_custom_op *op, size_t index);
    size_t (*GetInputTypeCount)(const struct pd_ort_custom_op *op);
    int (*GetOutputType)(const struct pd_ort_custom_op *op, size_t index);
    size_t (*GetOutputTypeCount)(const struct pd_ort_custom_op *op);
    void (*KernelCompute)(void *kernel, pd_ort_kernel_context *ctx);
    void (*KernelDestroy)(void *kernel);
    int (*GetInputCharacteristic)(const struct pd_ort_custom_op *op, size_t index);  /* v8 */
    int (*GetOutputCharacteristic)(const struct pd_ort_custom_op *op, size_t index); /* v8 */
    int (*GetInputMemoryType)(const struct pd_ort_custom_op *op, size_t index);      /* v13 */
    int (*GetVariadicInputMinArity)(const struct pd_ort_custom_op *op);              /* v14 */
    int (*GetVariadicInputHomogeneity)(const struct pd_ort_custom_op *op);
    int (*GetVariadicOutputMinArity)(const struct pd_ort_custom_op *op);
    int (*GetVariadicOutputHomogeneity)(const struct pd_ort_custom_op *op);
    /* v16: preferred over CreateKernel / KernelCompute; they return a status */
    pd_ort_status *(*CreateKernelV2)(const struct pd_ort_custom_op *op, const void *api,
                                     const pd_ort_kernel_info *info, void **kernel);
    pd_ort_status *(*KernelComputeV2)(void *kernel, pd_ort_kernel_context *ctx);
    /* v17 */
    pd_ort_status *(*InferOutputShapeFn)(const struct pd_ort_custom_op *op,
                                         pd_ort_shape_context *ctx);
    int (*GetStartVersion)(const struct pd_ort_custom_op *op);
    int (*GetEndVersion)(const struct pd_ort_custom_op *op);
    /* v18 and later: in-place and alias maps (unused, NULL) */
    size_t (*GetMayInplace)(int **input_index, int **output_index);
    void (*ReleaseMayInplace)(int *input_index, int *output_index);
    size_t (*GetAliasMap)(int **input_index, int **output_index);
    void (*ReleaseAliasMap)(int *input_index, int *output_index);
} pd_ort_custom_op;

#endif /* PD_ORT_ABI_H */
