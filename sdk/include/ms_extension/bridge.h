/*
 * ms_extension/bridge.h - what pdext's Python extension (_pdext) lends to a MindSpore
 * CustomOpBuilder module built against ms_extension/api.h: the conversions between Python
 * objects and pd_tensor values, and the executor a `with pdext.Executor()` block made current.
 *
 * Why a table: the module is a pybind11 extension of its own, imported by Python, which links
 * libpdext for the runtime but must not link _pdext (a CPython extension is no library). So
 * _pdext publishes this table in the capsule `pdext._pdext._ms_bridge` (PyCapsule name
 * PDEXT_MS_BRIDGE_NAME) and the module's type caster fetches it once. Plain C, append-only:
 * a module reads no field past struct_size.
 */
#ifndef PDEXT_MS_EXTENSION_BRIDGE_H
#define PDEXT_MS_EXTENSION_BRIDGE_H

#include "../pdext.h"
#include "../pdext_executor.h"

#define PDEXT_MS_BRIDGE_NAME "pdext._pdext._ms_bridge"

#ifdef __cplusplus
extern "C" {
#endif

/* Python objects are passed as void * so that this header needs no Python.h. */
typedef struct pdext_ms_bridge {
    uint32_t struct_size;
    /* Fills *out from `obj` (a numpy array, a pdext.Tensor, a DLPack producer or capsule, a
     * mindspore.Tensor). A pdext.Tensor gives a new reference to its own tensor (possibly
     * pending); any other object a borrowed view (storage NULL) whose memory stays valid until
     * release(*keep). Returns 1 on success, 0 when obj is no tensor at all (no exception set:
     * the argument does not match), -1 with a Python exception set (a tensor pdext cannot
     * take: its dtype, its device, a read-only array). Needs the GIL. */
    int (*tensor_in)(void *obj, pd_tensor *out, void **keep);
    /* Releases what tensor_in kept (NULL is fine). Needs the GIL. */
    void (*release)(void *keep);
    /* A Python result for *t (its reference moves in; *t becomes undefined), of the kind of
     * `first` (the call's first tensor argument, or NULL): numpy for numpy (waited for),
     * pdext.Tensor for a pdext.Tensor or inside a `with pdext.Executor()` block (pending
     * allowed), the framework's own tensor for a framework tensor (through its from_dlpack).
     * A new reference, or NULL with an exception (a waited-for error is pdext.OpError). */
    void *(*tensor_out)(void *first, pd_tensor *t);
    /* The executor current on this thread (a `with pdext.Executor()` block) and its stream,
     * or NULL. */
    pd_executor *(*current_executor)(int32_t *stream);
    /* Raises the Python exception for a pdext status (pdext.OpError for PD_ERR_OP_FAILED,
     * ValueError for PD_ERR_INVALID_ARGUMENT, ...) with message `text`. Needs the GIL. */
    void (*raise)(pd_status status, const char *text);
} pdext_ms_bridge;

#ifdef __cplusplus
}
#endif

#endif /* PDEXT_MS_EXTENSION_BRIDGE_H */
