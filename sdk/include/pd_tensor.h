/*
 * pd_tensor.h - the tensor: a small transparent struct that kernels read at no cost.
 *
 * A tensor is a view of reference-counted storage: dtype, place, shape, the address of its
 * first element, and how its elements are laid out. Most tensors are dense (row-major, C
 * order, no gaps): then `data` plus `shape` is all a kernel needs, and element i is data[i].
 * Views (a slice with a step, a transpose, an expand) are strided: element [i0, i1, ...] is
 * at data + (i0 * strides[0] + i1 * strides[1] + ...) elements, strides counted in elements
 * and possibly 0 (an expanded axis) or negative (a reversed one).
 *
 * Kernels that read pd_data as a dense array always get dense inputs: the runner makes a
 * strided input contiguous before the kernel runs, unless the op declares that it accepts
 * strided inputs (pd_op_def.flags, pd_op.h). pd_contiguous(ctx, t) (pd_api.h) does the same
 * inside a kernel; pd_tensor_contiguous (pdext.h) for hosts.
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

/* How a tensor's elements are laid out. Values are part of the ABI. */
typedef enum pd_layout {
    /* Row-major without gaps: element i (in C order) is ((T *)data)[i]. `strides` then holds
     * the dense strides in tensors the runtime made; a struct a host filled by hand may leave
     * them 0, so read strides through pd_stride(), which computes them for dense tensors. */
    PD_LAYOUT_DENSE = 0,
    /* strides[0..ndim-1] say where each element is; they may be 0 or negative. */
    PD_LAYOUT_STRIDED = 1
} pd_layout;

typedef struct pd_tensor {
    /* Address of the first element, [0, 0, ...] (= storage base + offset elements). NULL when
     * undefined. For a tensor with no elements it may be any address and must not be
     * dereferenced. */
    void *data;
    /* The storage reference this tensor holds; NULL when undefined (or in a struct a host
     * filled by hand over its own memory). A tensor with storage is checked against it: the
     * runner refuses one whose elements run past its storage. A hand-filled tensor without
     * storage declares no size, so nothing can check it: the host promises that `data` holds
     * every element its dtype, shape and strides address (pd_numel(t) * element size bytes
     * for a dense one), readable (and writable, for an output or an inplace input) until the
     * call returns or, through an executor, until the call is computed. A shape larger than
     * the memory is the host's bug, and a kernel reading it may crash. Hosts that cannot
     * promise that wrap their memory in storage of a known size (pd_tensor_from_buffer,
     * pdext.h) or copy it into a runtime tensor. */
    pd_storage *storage;
    /* Element type; PD_UNDEFINED for an undefined tensor. */
    pd_data_type dtype;
    /* Number of dimensions: 0 (a scalar, one element) up to PD_MAX_DIMS. */
    int32_t ndim;
    /* shape[0..ndim-1], each >= 0; the entries past ndim are 0. */
    int64_t shape[PD_MAX_DIMS];
    /* Where the storage lives. */
    pd_place place;
    /* A pd_layout: PD_LAYOUT_DENSE (every tensor the runtime allocates, and every tensor a
     * kernel that did not declare strided inputs sees) or PD_LAYOUT_STRIDED. Views that happen
     * to be dense are marked dense. */
    int32_t layout;
    /* Reserved; 0. */
    int32_t reserved;
    /* Distance of `data` from the start of the storage, in elements (>= 0): what DLPack calls
     * byte_offset / element size. The runtime addresses elements through `data`. */
    int64_t offset;
    /* strides[0..ndim-1]: elements between neighbours along each axis (see `layout`); the
     * entries past ndim are 0. */
    int64_t strides[PD_MAX_DIMS];
} pd_tensor;

/* An undefined tensor value: pd_tensor t = PD_TENSOR_UNDEFINED; */
#ifdef __cplusplus
#define PD_TENSOR_UNDEFINED \
    {}
#else
#define PD_TENSOR_UNDEFINED \
    {                       \
        0                   \
    }
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

/* Bytes of element data: numel * element size (for a strided view, what a dense copy takes). */
static inline size_t pd_nbytes(const pd_tensor *t)
{
    return (size_t)pd_numel(t) * pd_dtype_size(t->dtype);
}

/* Has a dtype and shape (it may still lack memory). */
static inline bool pd_defined(const pd_tensor *t) { return t != NULL && t->dtype != PD_UNDEFINED; }

/* Defined and backed by memory: its storage, or memory its host lends it (a host's tensor
 * filled in by hand, or a numpy / DLPack input of a Python call, has data but no storage). */
static inline bool pd_initialized(const pd_tensor *t)
{
    return pd_defined(t) && (t->storage != NULL || t->data != NULL);
}

static inline bool pd_is_cpu(const pd_tensor *t) { return t->place.type == PD_PLACE_CPU; }
static inline bool pd_is_gpu(const pd_tensor *t) { return t->place.type == PD_PLACE_GPU; }

/* Dense row-major: pd_data(t) may be read as a plain array of pd_numel(t) elements. */
static inline bool pd_is_contiguous(const pd_tensor *t) { return t->layout == PD_LAYOUT_DENSE; }

/* Elements between neighbours along `axis` (a negative axis counts from the end): the stored
 * stride of a strided tensor, the row-major one of a dense tensor. 0 when out of range. */
static inline int64_t pd_stride(const pd_tensor *t, int32_t axis)
{
    if (axis < 0)
        axis += t->ndim;
    if (axis < 0 || axis >= t->ndim)
        return 0;
    if (t->layout != PD_LAYOUT_DENSE)
        return t->strides[axis];
    int64_t s = 1;
    for (int32_t d = axis + 1; d < t->ndim; ++d)
        s *= t->shape[d];
    return s;
}

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
