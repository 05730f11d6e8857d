/*
 * py_dlpack.h - the DLPack ABI (dmlc/dlpack, v0.8 "legacy" DLManagedTensor) and its mapping
 * to pdext's dtypes and places.
 *
 * Only the structs the exchange needs are declared; their layout is DLPack's and must not
 * change. The unversioned DLManagedTensor is what numpy (>= 1.22) and PyTorch (>= 1.10)
 * hand out from __dlpack__() without arguments, in a PyCapsule named "dltensor"; the consumer
 * renames the capsule "used_dltensor" and calls the deleter when it is done.
 */
#ifndef PDEXT_PY_DLPACK_H
#define PDEXT_PY_DLPACK_H

#include "pdext.h"

#include <stdint.h>

enum { PDEXT_DL_CPU = 1, PDEXT_DL_CUDA = 2, PDEXT_DL_CUDA_HOST = 3 };
enum {
    PDEXT_DL_INT = 0,
    PDEXT_DL_UINT = 1,
    PDEXT_DL_FLOAT = 2,
    PDEXT_DL_BFLOAT = 4,
    PDEXT_DL_COMPLEX = 5,
    PDEXT_DL_BOOL = 6
};

typedef struct pdext_dl_device {
    int32_t device_type;
    int32_t device_id;
} pdext_dl_device;

typedef struct pdext_dl_dtype {
    uint8_t code;
    uint8_t bits;
    uint16_t lanes;
} pdext_dl_dtype;

typedef struct pdext_dl_tensor {
    void *data;
    pdext_dl_device device;
    int32_t ndim;
    pdext_dl_dtype dtype;
    int64_t *shape;
    int64_t *strides; /* in elements; NULL: dense row-major */
    uint64_t byte_offset;
} pdext_dl_tensor;

typedef struct pdext_dl_managed {
    pdext_dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct pdext_dl_managed *self);
} pdext_dl_managed;

/* pdext dtype of a DLPack dtype, PD_UNDEFINED when pdext has none (lanes != 1 included). */
static inline pd_data_type pdext_dl_to_dtype(pdext_dl_dtype t)
{
    if (t.lanes != 1)
        return PD_UNDEFINED;
    switch (t.code) {
    case PDEXT_DL_BOOL: return t.bits == 8 ? PD_BOOL : PD_UNDEFINED;
    case PDEXT_DL_INT:
        return t.bits == 8    ? PD_INT8
               : t.bits == 16 ? PD_INT16
               : t.bits == 32 ? PD_INT32
               : t.bits == 64 ? PD_INT64
                              : PD_UNDEFINED;
    case PDEXT_DL_UINT:
        return t.bits == 8    ? PD_UINT8
               : t.bits == 16 ? PD_UINT16
               : t.bits == 32 ? PD_UINT32
               : t.bits == 64 ? PD_UINT64
                              : PD_UNDEFINED;
    case PDEXT_DL_FLOAT:
        return t.bits == 16   ? PD_FLOAT16
               : t.bits == 32 ? PD_FLOAT32
               : t.bits == 64 ? PD_FLOAT64
                              : PD_UNDEFINED;
    case PDEXT_DL_BFLOAT: return t.bits == 16 ? PD_BFLOAT16 : PD_UNDEFINED;
    case PDEXT_DL_COMPLEX:
        return t.bits == 64 ? PD_COMPLEX64 : t.bits == 128 ? PD_COMPLEX128 : PD_UNDEFINED;
    default: return PD_UNDEFINED;
    }
}

/* DLPack dtype of a pdext dtype. */
static inline pdext_dl_dtype pdext_dl_from_dtype(pd_data_type d)
{
    pdext_dl_dtype t = {PDEXT_DL_FLOAT, (uint8_t)(pd_dtype_size(d) * 8), 1};
    if (d == PD_BOOL)
        t.code = PDEXT_DL_BOOL;
    else if (d == PD_INT8 || d == PD_INT16 || d == PD_INT32 || d == PD_INT64)
        t.code = PDEXT_DL_INT;
    else if (d == PD_UINT8 || d == PD_UINT16 || d == PD_UINT32 || d == PD_UINT64)
        t.code = PDEXT_DL_UINT;
    else if (d == PD_BFLOAT16)
        t.code = PDEXT_DL_BFLOAT;
    else if (d == PD_COMPLEX64 || d == PD_COMPLEX128)
        t.code = PDEXT_DL_COMPLEX;
    return t;
}

#endif /* PDEXT_PY_DLPACK_H */
