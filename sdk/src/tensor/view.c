/*
 * view.c - views: new tensors over the same storage with another shape, strides or first
 * element (slice, slice with a step, permute / transpose, expand, as_strided, reshape), and
 * pd_tensor_contiguous, which copies only when a view is not dense.
 *
 * Every view is built by pd__tensor_view (tensor.c), which takes the storage reference and
 * marks the result dense when its strides happen to be row-major, so kernels that need dense
 * data copy only what really is strided. As everywhere in the tensor API, each function checks
 * all of its arguments before it takes a reference, and writes *out only on success.
 */
#include "tensor/tensor_internal.h"

#include <string.h>

/* out and src are usable: the checks every view starts with. */
static pd_status view_args(const char *who, const pd_tensor *out, const pd_tensor *src)
{
    pd_status st = pd__tensor_check_out(who, out);
    return st == PD_OK ? pd__tensor_check_source(who, "src", src) : st;
}

/* `axis` counted from the end when negative, or -1 (message set) when out of range. */
static int32_t axis_of(const char *who, const char *arg, int32_t axis, int32_t ndim)
{
    int32_t a = axis < 0 ? axis + ndim : axis;
    if (a < 0 || a >= ndim) {
        pd__fail(PD_ERR_INVALID_ARGUMENT,
                 "%s: %s %d is out of range for a tensor of ndim %d; "
                 "expected %d .. %d",
                 who, arg, (int)axis, (int)ndim, (int)-ndim, (int)ndim - 1);
        return -1;
    }
    return a;
}

/* The address of element `index` along `axis` (all other indices 0). */
static void *element_along(const pd_tensor *src, const int64_t *strides, int32_t axis,
                           int64_t index)
{
    return (char *)src->data + index * strides[axis] * (int64_t)pd_dtype_size(src->dtype);
}

pd_status pd_tensor_slice(pd_tensor *out, const pd_tensor *src, int64_t begin, int64_t end)
{
    static const char who[] = "pd_tensor_slice";
    pd_status st = view_args(who, out, src);
    if (st != PD_OK)
        return st;
    if (src->ndim < 1)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: src is a scalar (ndim 0); slicing along axis 0 needs ndim >= 1", who);
    if (begin < 0 || begin > end || end > src->shape[0])
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: rows [%lld, %lld) are out of range; expected 0 <= begin <= end <= "
                        "shape[0] = %lld",
                        who, (long long)begin, (long long)end, (long long)src->shape[0]);
    int64_t strides[PD_MAX_DIMS], shape[PD_MAX_DIMS];
    pd__tensor_strides(src, strides);
    memcpy(shape, src->shape, sizeof shape);
    shape[0] = end - begin;
    *out = pd__tensor_view(src, element_along(src, strides, 0, begin), src->ndim, shape, strides);
    return PD_OK;
}

pd_status pd_tensor_slice_step(pd_tensor *out, const pd_tensor *src, int32_t axis, int64_t begin,
                               int64_t end, int64_t step)
{
    static const char who[] = "pd_tensor_slice_step";
    pd_status st = view_args(who, out, src);
    if (st != PD_OK)
        return st;
    int32_t a = axis_of(who, "axis", axis, src->ndim);
    if (a < 0)
        return PD_ERR_INVALID_ARGUMENT;
    int64_t size = src->shape[a], count;
    if (step > 0) {
        if (begin < 0 || begin > end || end > size)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: [%lld, %lld) along axis %d is out of range; with step %lld "
                            "expected 0 <= begin <= end <= shape[%d] = %lld",
                            who, (long long)begin, (long long)end, (int)a, (long long)step, (int)a,
                            (long long)size);
        count = (end - begin + step - 1) / step;
    } else if (step < 0) {
        if (end < -1 || end > begin || begin >= size)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: begin %lld, end %lld along axis %d are out of range; with the "
                            "negative step %lld expected -1 <= end <= begin < shape[%d] = %lld "
                            "(end -1 walks down to element 0)",
                            who, (long long)begin, (long long)end, (int)a, (long long)step, (int)a,
                            (long long)size);
        count = (begin - end + (-step) - 1) / (-step);
    } else {
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: step is 0; expected a positive step, or a negative one to walk "
                        "backwards",
                        who);
    }
    int64_t strides[PD_MAX_DIMS], shape[PD_MAX_DIMS];
    pd__tensor_strides(src, strides);
    memcpy(shape, src->shape, sizeof shape);
    void *data = element_along(src, strides, a, count > 0 ? begin : 0);
    if (__builtin_mul_overflow(strides[a], step, &strides[a]))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: step %lld overflows the stride of axis %d",
                        who, (long long)step, (int)a);
    shape[a] = count;
    *out = pd__tensor_view(src, data, src->ndim, shape, strides);
    return PD_OK;
}

pd_status pd_tensor_permute(pd_tensor *out, const pd_tensor *src, int32_t ndim, const int32_t *dims)
{
    static const char who[] = "pd_tensor_permute";
    pd_status st = view_args(who, out, src);
    if (st != PD_OK)
        return st;
    if (ndim != src->ndim)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: ndim is %d, but src has %d axes; dims must name each of them once",
                        who, (int)ndim, (int)src->ndim);
    if (ndim > 0 && dims == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: dims is NULL but ndim is %d", who, (int)ndim);
    int64_t strides[PD_MAX_DIMS], new_strides[PD_MAX_DIMS] = {0}, shape[PD_MAX_DIMS] = {0};
    bool seen[PD_MAX_DIMS] = {false};
    pd__tensor_strides(src, strides);
    for (int32_t d = 0; d < ndim; ++d) {
        int32_t a = axis_of(who, "dims entry", dims[d], ndim);
        if (a < 0)
            return PD_ERR_INVALID_ARGUMENT;
        if (seen[a])
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: dims names axis %d twice; expected a permutation of 0 .. %d", who,
                            (int)a, (int)ndim - 1);
        seen[a] = true;
        shape[d] = src->shape[a];
        new_strides[d] = strides[a];
    }
    *out = pd__tensor_view(src, src->data, ndim, shape, new_strides);
    return PD_OK;
}

pd_status pd_tensor_transpose(pd_tensor *out, const pd_tensor *src, int32_t a, int32_t b)
{
    static const char who[] = "pd_tensor_transpose";
    pd_status st = view_args(who, out, src);
    if (st != PD_OK)
        return st;
    int32_t x = axis_of(who, "axis a", a, src->ndim),
            y = x < 0 ? -1 : axis_of(who, "axis b", b, src->ndim);
    if (x < 0 || y < 0)
        return PD_ERR_INVALID_ARGUMENT;
    int32_t dims[PD_MAX_DIMS];
    for (int32_t d = 0; d < src->ndim; ++d)
        dims[d] = d == x ? y : d == y ? x : d;
    return pd_tensor_permute(out, src, src->ndim, dims);
}

pd_status pd_tensor_expand(pd_tensor *out, const pd_tensor *src, int32_t ndim, const int64_t *shape)
{
    static const char who[] = "pd_tensor_expand";
    pd_status st = view_args(who, out, src);
    if (st != PD_OK)
        return st;
    if (ndim < src->ndim || ndim > PD_MAX_DIMS)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: ndim is %d; expected src's %d up to %d", who,
                        (int)ndim, (int)src->ndim, PD_MAX_DIMS);
    if (ndim > 0 && shape == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: shape is NULL but ndim is %d", who,
                        (int)ndim);
    int64_t strides[PD_MAX_DIMS], new_shape[PD_MAX_DIMS] = {0}, new_strides[PD_MAX_DIMS] = {0};
    pd__tensor_strides(src, strides);
    int32_t lead = ndim - src->ndim;
    for (int32_t d = 0; d < ndim; ++d) {
        int64_t want = shape[d];
        if (d < lead) { /* a new leading axis: every index reads the same elements */
            if (want < 0)
                return pd__fail(PD_ERR_INVALID_ARGUMENT,
                                "%s: shape[%d] is %lld; a new leading axis needs a size >= 0", who,
                                (int)d, (long long)want);
            new_shape[d] = want;
            continue;
        }
        int64_t have = src->shape[d - lead];
        if (want == -1 || want == have) {
            new_shape[d] = have;
            new_strides[d] = strides[d - lead];
        } else if (have == 1 && want >= 0) {
            new_shape[d] = want;
        } else {
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: shape[%d] is %lld, but src's axis %d has size %lld; an axis can "
                            "only be expanded from size 1 (or kept with -1)",
                            who, (int)d, (long long)want, (int)(d - lead), (long long)have);
        }
    }
    size_t bytes;
    st = pd__shape_check(who, src->dtype, ndim, new_shape, &bytes);
    if (st != PD_OK)
        return st;
    *out = pd__tensor_view(src, src->data, ndim, new_shape, new_strides);
    return PD_OK;
}

pd_status pd_tensor_as_strided(pd_tensor *out, const pd_tensor *src, int32_t ndim,
                               const int64_t *shape, const int64_t *strides, int64_t offset)
{
    static const char who[] = "pd_tensor_as_strided";
    pd_status st = view_args(who, out, src);
    if (st == PD_OK)
        st = pd__shape_check(who, src->dtype, ndim, shape, NULL);
    if (st != PD_OK)
        return st;
    if (ndim > 0 && strides == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: strides is NULL but ndim is %d", who,
                        (int)ndim);
    if (src->storage == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: src has no storage (memory its host lends it), so no extent to "
                        "place a view at an offset in; wrap the memory with "
                        "pd_tensor_from_buffer first",
                        who);
    int64_t size = (int64_t)pd_dtype_size(src->dtype);
    int64_t bytes = (int64_t)src->storage->bytes;
    if (offset < 0 || offset > bytes / size)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: offset %lld is outside the storage, which holds %lld elements of %s",
                        who, (long long)offset, (long long)(bytes / size),
                        pd_dtype_name(src->dtype));
    pd_tensor probe = *src; /* the view, before it takes a reference: bounds first */
    probe.data = (char *)src->storage->ptr + offset * size;
    probe.ndim = ndim;
    memset(probe.shape, 0, sizeof probe.shape);
    memcpy(probe.shape, shape, (size_t)ndim * sizeof *shape);
    memset(probe.strides, 0, sizeof probe.strides);
    if (ndim > 0)
        memcpy(probe.strides, strides, (size_t)ndim * sizeof *strides);
    probe.layout = PD_LAYOUT_STRIDED;
    st = pd__tensor_check_bounds(who, "the view", &probe);
    if (st != PD_OK)
        return st;
    *out = pd__tensor_view(src, probe.data, ndim, probe.shape, probe.strides);
    return PD_OK;
}

/* New strides that address src's elements in C order with `shape` (numel equal, > 0), if
 * src's strides allow it: each group of src axes that is merged or split must be laid out as
 * one run. The algorithm of PyTorch's computeStride. */
static bool reshape_strides(const pd_tensor *src, const int64_t *strides, int32_t ndim,
                            const int64_t *shape, int64_t *out)
{
    int32_t view_d = ndim - 1;
    int64_t chunk_base = strides[src->ndim - 1], tensor_numel = 1, view_numel = 1;
    for (int32_t d = src->ndim - 1; d >= 0; --d) {
        tensor_numel *= src->shape[d];
        if (d == 0 || (src->shape[d - 1] != 1 && strides[d - 1] != tensor_numel * chunk_base)) {
            while (view_d >= 0 && (view_numel < tensor_numel || shape[view_d] == 1)) {
                out[view_d] = view_numel * chunk_base;
                view_numel *= shape[view_d];
                --view_d;
            }
            if (view_numel != tensor_numel)
                return false;
            if (d > 0) {
                chunk_base = strides[d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    return view_d == -1;
}

pd_status pd_tensor_reshape(pd_tensor *out, const pd_tensor *src, int32_t ndim,
                            const int64_t *shape)
{
    static const char who[] = "pd_tensor_reshape";
    pd_status st = view_args(who, out, src);
    if (st != PD_OK)
        return st;
    st = pd__rank_check(who, ndim, shape);
    if (st != PD_OK)
        return st;
    int64_t numel = pd_numel(src);
    int32_t infer = -1, n_infer = 0;
    uint64_t known = 1; /* product of the given non-zero dimensions */
    bool has_zero = false, too_large = false;
    for (int32_t i = 0; i < ndim; ++i) {
        if (shape[i] == -1) {
            infer = i;
            ++n_infer;
        } else if (shape[i] < 0) {
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: shape[%d] is %lld; dimensions must be >= 0, or -1 for one "
                            "inferred dimension",
                            who, (int)i, (long long)shape[i]);
        } else if (shape[i] == 0) {
            has_zero = true;
        } else if (__builtin_mul_overflow(known, (uint64_t)shape[i], &known) ||
                   known > (uint64_t)INT64_MAX) {
            too_large = true;
        }
    }
    if (n_infer > 1)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: shape has %d -1 entries; at most one dimension may be -1", who,
                        (int)n_infer);
    /* Even beside a zero dimension, an overflowing product would make pd_numel overflow. */
    if (too_large)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the new shape is too large: the product of its dimensions "
                        "overflows, but src has %lld elements",
                        who, (long long)numel);
    if (has_zero)
        known = 0;
    int64_t new_shape[PD_MAX_DIMS] = {0};
    if (ndim > 0)
        memcpy(new_shape, shape, (size_t)ndim * sizeof *shape);
    if (n_infer == 1) {
        if (known == 0 || (uint64_t)numel % known != 0)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: cannot infer shape[%d]: src has %lld elements, which the other "
                            "dimensions (product %llu) do not divide",
                            who, (int)infer, (long long)numel, (unsigned long long)known);
        new_shape[infer] = numel / (int64_t)known;
    } else if (known != (uint64_t)numel) {
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the new shape has %llu elements, but src has %lld", who,
                        (unsigned long long)known, (long long)numel);
    }
    int64_t strides[PD_MAX_DIMS] = {0};
    if (src->layout == PD_LAYOUT_DENSE || numel == 0 || src->ndim == 0) {
        pd__dense_strides(ndim, new_shape, strides);
    } else if (!reshape_strides(src, src->strides, ndim, new_shape, strides)) {
        char from[160], st_text[160], to[160];
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: src is a strided view (shape %s, strides %s) whose elements cannot "
                        "be addressed with shape %s without a copy; make it contiguous first "
                        "(pd_tensor_contiguous) and reshape that",
                        who, pd__dims_text(src->ndim, src->shape, from, sizeof from),
                        pd__dims_text(src->ndim, src->strides, st_text, sizeof st_text),
                        pd__dims_text(ndim, new_shape, to, sizeof to));
    }
    *out = pd__tensor_view(src, src->data, ndim, new_shape, strides);
    return PD_OK;
}

pd_status pd_tensor_contiguous(pd_tensor *out, const pd_tensor *src)
{
    static const char who[] = "pd_tensor_contiguous";
    pd_status st = view_args(who, out, src);
    if (st != PD_OK)
        return st;
    if (pd_is_contiguous(src)) {
        pd_tensor_retain(out, src);
        return PD_OK;
    }
    return pd_tensor_copy_to(out, src, src->place);
}
