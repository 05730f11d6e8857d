/*
 * aot_internal.h - what the C and C++ halves of the MindSpore AOT adapter share (C
 * declarations only, so that both sides include it).
 *
 * The split: the C half (aot_load.c, aot_kernel.c, aot_elf.c) owns everything that touches the
 * runtime (registry, call context, errors that unwind to the runner). The C++ half calls the
 * library's functions, which may throw and may return C++ objects: aot_call.cc wraps each call
 * in try/catch and hands back a status and a message, so no exception ever crosses a C frame
 * and no siglongjmp ever crosses a C++ frame; aot_extra.cc (built twice, once per libstdc++
 * string ABI) is the AotExtra the library reads its attrs through.
 *
 * Names: the adapter's internal functions and types are pd_aoti_* (not pd__*: C++ reserves
 * every identifier containing a double underscore).
 */
#ifndef PD_AOT_INTERNAL_H
#define PD_AOT_INTERNAL_H

#include "pd_op.h" /* pd_attr; not pdext.h, whose C++ part C++ sources here do not need */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The AOT calling convention and its optional companions. */
typedef int (*pd_aoti_kernel_fn)(int nparam, void **params, int *ndims, int64_t **shapes,
                                 const char **dtypes, void *stream, void *extra);
typedef int (*pd_aoti_init_fn)(int *ndims, int64_t **shapes, const char **dtypes, void *extra);

/* The attrs of the running call, as the AotExtra getters read them. */
typedef struct pd_aoti_attr_view {
    const pd_attr *attrs;     /* in declared order */
    const char *const *names; /* their names */
    int32_t n;
    const char *op_name;
} pd_aoti_attr_view;

/* This thread's current attr view (set around every call into the library). */
const pd_aoti_attr_view *pd_aoti_current_attrs(void);

/* Results of the C++ wrappers: 0 success; otherwise *err holds a malloc'd message (which may
 * be NULL on out of memory). */
#define PD_AOTI_OK 0
#define PD_AOTI_RETURNED 1 /* the function returned non-zero (*rc) */
#define PD_AOTI_THREW 2    /* it threw; *err says what */
#define PD_AOTI_BAD 3      /* its answer cannot be used; *err says why */

/* aot_call.cc */
int pd_aoti_call_kernel(pd_aoti_kernel_fn f, int nparam, void **params, int *ndims,
                        int64_t **shapes, const char **dtypes, void *stream, void *extra, int *rc,
                        char **err);
int pd_aoti_call_init(pd_aoti_init_fn f, int *ndims, int64_t **shapes, const char **dtypes,
                      void *extra, int *rc, char **err);
/* FInferShape for n_outputs outputs (one: std::vector<int64_t>; more: a vector of them) into
 * out_ndim / out_shape. */
int pd_aoti_call_infer_shape(void *f, int n_outputs, int *ndims, int64_t **shapes, void *extra,
                             int32_t *out_ndim, int64_t (*out_shape)[PD_MAX_DIMS], char **err);
/* FInferType (one output: TypeId; more: std::vector<TypeId>) into out_types. */
int pd_aoti_call_infer_type(void *f, int n_inputs, const int32_t *in_types, int n_outputs,
                            void *extra, int32_t *out_types, char **err);
/* The workspace sizes an Init declared. */
void pd_aoti_extra_workspace(void *extra, const size_t **sizes, size_t *n);
/* DestructKernelData, then the AotExtra itself (virtual destructor). */
void pd_aoti_extra_delete(void *extra);

/* aot_extra.cc, once per string ABI: a new AotExtra (NULL on out of memory). */
void *pd_aoti_extra_new_abi0(void);
void *pd_aoti_extra_new_abi1(void);

#ifdef __cplusplus
}
#endif

#endif /* PD_AOT_INTERNAL_H */
