/*
 * pd_tensor.h - the tensor: a small transparent struct that kernels read at no cost.
 *
 * A tensor is a view of reference-counted storage: dtype, place, shape and the address of its
 * first element. Tensors are always dense and row-major (C order); views made by slicing along
 * axis 0 or reshaping stay dense, so `data` plus `shape` is all a kernel needs.
 *
 * Ownership: a pd_tensor value that is "defined" holds one reference to its storage. Hosts
 * drop it with pd_tensor_release (pdext.h); tensors an op creates through its context are
 * released by the runner when the call ends. Copying the struct by assignment does NOT take a
 * reference: use pd_tensor_retain for a second owner.
 */
#ifndef PD_TENSOR_H
#define PD_TENSOR_H

#include "pd_base.h"
#include "pd_dtype.h"
#include "pd_place.h"

PD_EXTERN_C_BEGIN

/* Most dimensions a tensor may have. */
#define PD_MAX_DIMS 8

/* Reference-counted memory block; opaque, owned by the runtime. */
typedef struct pd_storage pd_storage;

typedef struct pd_tensor {
    void *data;          /* first element; NULL when undefined. For numel == 0 it may be any
                          * address and must not be dereferenced. Always dense row-major. */
    pd_storage *storage; /* the reference this tensor holds; NULL when undefined */
    pd_data_type dtype;  /* PD_UNDEFINED for an undefined tensor */
    int32_t ndim;        /* 0 (a scalar, numel 1) up to PD_MAX_DIMS */
    int64_t shape[PD_MAX_DIMS]; /* shape[0..ndim-1], each >= 0; the rest are 0 */
    pd_place place;      /* where data lives */
} pd_tensor;

/* An undefined tensor value: pd_tensor t = PD_TENSOR_UNDEFINED; */
#ifdef __cplusplus
#define PD_TENSOR_UNDEFINED {}
#else
#define PD_TENSOR_UNDEFINED {0}
#endif

/* Number of elements: the product of the shape (1 for a scalar, 0 if undefined). */
static inline int64_t pd_numel(const pd_tensor *t)
{
    if (t->dtype == PD_UNDEFINED)
        return 0;
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; ++i)
        n *= t->shape[i];
    return n;
}

static inline int32_t pd_ndim(const pd_tensor *t) { return t->ndim; }

/* The shape array (ndim entries). */
static inline const int64_t *pd_shape(const pd_tensor *t) { return t->shape; }

/* Size of dimension `axis`; a negative axis counts from the end. 0 when out of range. */
static inline int64_t pd_dim(const pd_tensor *t, int32_t axis)
{
    if (axis < 0)
        axis += t->ndim;
    return (axis >= 0 && axis < t->ndim) ? t->shape[axis] : 0;
}

static inline pd_data_type pd_dtype(const pd_tensor *t) { return t->dtype; }
static inline pd_place pd_tensor_place(const pd_tensor *t) { return t->place; }
static inline void *pd_data(const pd_tensor *t) { return t->data; }

/* Bytes of element data: numel * element size. */
static inline size_t pd_nbytes(const pd_tensor *t)
{
    return (size_t)pd_numel(t) * pd_dtype_size(t->dtype);
}

/* Has a dtype and shape (it may still lack memory). */
static inline bool pd_defined(const pd_tensor *t) { return t != NULL && t->dtype != PD_UNDEFINED; }

/* Defined and backed by memory. */
static inline bool pd_initialized(const pd_tensor *t) { return pd_defined(t) && t->storage != NULL; }

static inline bool pd_is_cpu(const pd_tensor *t) { return t->place.type == PD_PLACE_CPU; }
static inline bool pd_is_gpu(const pd_tensor *t) { return t->place.type == PD_PLACE_GPU; }

/* Same rank and the same size in every dimension. */
static inline bool pd_same_shape(const pd_tensor *a, const pd_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int32_t i = 0; i < a->ndim; ++i)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

PD_EXTERN_C_END

#endif /* PD_TENSOR_H */
