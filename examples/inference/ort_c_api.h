/*
 * ort_c_api.h - the part of ONNX Runtime's C API that ort_infer.c uses, declared here because
 * the onnxruntime wheel ships libonnxruntime.so but no headers. A program with ORT's own
 * onnxruntime_c_api.h (from an ORT release archive) would include that instead: the names
 * below are ORT's, the types opaque.
 *
 * ORT's C API is one entry point, OrtGetApiBase(), whose GetApi(version) returns the OrtApi
 * table: a struct of function pointers in a published order that only ever grows at its end.
 * Every entry used here is in version 1 of the table, so any ORT answers GetApi(1); an entry is
 * reached by its index (the count of entries before it in onnxruntime_c_api.h). Functions that
 * can fail return an OrtStatus * (NULL: success) that the caller releases.
 */
#ifndef ORT_C_API_H
#define ORT_C_API_H

#include <stddef.h>
#include <stdint.h>

typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtValue OrtValue;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;

enum { ORT_LOGGING_LEVEL_WARNING = 2 }; /* OrtLoggingLevel */
enum { ORT_ARENA_ALLOCATOR = 1 };       /* OrtAllocatorType */
enum { ORT_MEM_TYPE_DEFAULT = 0 };      /* OrtMemType */
enum { ORT_ELEM_FLOAT = 1 };            /* ONNXTensorElementDataType */

typedef struct OrtApiBase {
    const void *(*GetApi)(uint32_t version);
    const char *(*GetVersionString)(void);
} OrtApiBase;

/* Exported by libonnxruntime.so. */
const OrtApiBase *OrtGetApiBase(void);

/* X(index, return type, name, parameters): the OrtApi entries used. */
#define ORT_API_ENTRIES(X)                                                                       \
    X(2, const char *, GetErrorMessage, (const OrtStatus *status))                               \
    X(3, OrtStatus *, CreateEnv, (int log_level, const char *log_id, OrtEnv **out))              \
    X(7, OrtStatus *, CreateSession,                                                             \
      (const OrtEnv *env, const char *model_path, const OrtSessionOptions *options,              \
       OrtSession **out))                                                                        \
    X(9, OrtStatus *, Run,                                                                       \
      (OrtSession * session, const OrtRunOptions *run_options, const char *const *input_names,   \
       const OrtValue *const *inputs, size_t n_inputs, const char *const *output_names,          \
       size_t n_outputs, OrtValue **outputs))                                                    \
    X(10, OrtStatus *, CreateSessionOptions, (OrtSessionOptions * *out))                         \
    /* loads a custom-op library and calls its RegisterCustomOps; *handle is its dlopen          \
     * handle, which the caller dlcloses once no session uses the ops */                         \
    X(29, OrtStatus *, RegisterCustomOpsLibrary,                                                 \
      (OrtSessionOptions * options, const char *path, void **handle))                            \
    /* a tensor over the caller's buffer (not copied; it must outlive the value) */              \
    X(49, OrtStatus *, CreateTensorWithDataAsOrtValue,                                           \
      (const OrtMemoryInfo *info, void *data, size_t bytes, const int64_t *shape, size_t ndim,   \
       int elem_type, OrtValue **out))                                                           \
    X(51, OrtStatus *, GetTensorMutableData, (OrtValue * value, void **out))                     \
    X(60, OrtStatus *, GetTensorElementType, (const OrtTensorTypeAndShapeInfo *info, int *out))  \
    X(61, OrtStatus *, GetDimensionsCount, (const OrtTensorTypeAndShapeInfo *info, size_t *out)) \
    X(62, OrtStatus *, GetDimensions,                                                            \
      (const OrtTensorTypeAndShapeInfo *info, int64_t *dims, size_t count))                      \
    X(65, OrtStatus *, GetTensorTypeAndShape,                                                    \
      (const OrtValue *value, OrtTensorTypeAndShapeInfo **out))                                  \
    X(69, OrtStatus *, CreateCpuMemoryInfo, (int allocator, int mem_type, OrtMemoryInfo **out))  \
    X(92, void, ReleaseEnv, (OrtEnv * env))                                                      \
    X(93, void, ReleaseStatus, (OrtStatus * status))                                             \
    X(94, void, ReleaseMemoryInfo, (OrtMemoryInfo * info))                                       \
    X(95, void, ReleaseSession, (OrtSession * session))                                          \
    X(96, void, ReleaseValue, (OrtValue * value))                                                \
    X(99, void, ReleaseTensorTypeAndShapeInfo, (OrtTensorTypeAndShapeInfo * info))               \
    X(100, void, ReleaseSessionOptions, (OrtSessionOptions * options))

typedef struct OrtApi {
#define ORT_API_FIELD(index, ret, name, params) ret(*name) params;
    ORT_API_ENTRIES(ORT_API_FIELD)
#undef ORT_API_FIELD
} OrtApi;

/* Reads the entries from ORT's table; NULL when this ORT has no version-1 table. */
static inline int ort_api_get(OrtApi *api)
{
    typedef void (*any_fn)(void);
    const any_fn *table = (const any_fn *)OrtGetApiBase()->GetApi(1);
    if (table == NULL)
        return -1;
#define ORT_API_READ(index, ret, name, params) api->name = (ret(*) params)table[index];
    ORT_API_ENTRIES(ORT_API_READ)
#undef ORT_API_READ
    return 0;
}

#endif /* ORT_C_API_H */
