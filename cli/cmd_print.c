/*
 * cmd_print.c - tensors as text for the command's output: shapes as "[2, 3]" and a few
 * element values, whatever the dtype.
 */
#include "pdext_cmd.h"

#include <inttypes.h>

const char *pd_cmd_shape_str(const pd_tensor *t, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "[");
    for (int32_t i = 0; i < t->ndim && n < cap; ++i)
        n += (size_t)snprintf(buf + n, cap - n, i ? ", %" PRId64 : "%" PRId64, t->shape[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, "]");
    return buf;
}

/* Element i as a double (complex: the real part, printed with its imaginary part apart). */
static double element(const pd_tensor *t, int64_t i, double *im)
{
    const void *d = t->data;
    *im = 0;
    switch (t->dtype) {
    case PD_BOOL: return ((const uint8_t *)d)[i] != 0;
    case PD_INT8: return ((const int8_t *)d)[i];
    case PD_UINT8: return ((const uint8_t *)d)[i];
    case PD_INT16: return ((const int16_t *)d)[i];
    case PD_UINT16: return ((const uint16_t *)d)[i];
    case PD_INT32: return ((const int32_t *)d)[i];
    case PD_UINT32: return ((const uint32_t *)d)[i];
    case PD_INT64: return (double)((const int64_t *)d)[i];
    case PD_UINT64: return (double)((const uint64_t *)d)[i];
    case PD_FLOAT16: return pd_float16_to_float(((const pd_float16 *)d)[i]);
    case PD_BFLOAT16: return pd_bfloat16_to_float(((const pd_bfloat16 *)d)[i]);
    case PD_FLOAT32: return ((const float *)d)[i];
    case PD_FLOAT64: return ((const double *)d)[i];
    case PD_COMPLEX64:
        *im = ((const pd_complex64 *)d)[i].im;
        return ((const pd_complex64 *)d)[i].re;
    case PD_COMPLEX128:
        *im = ((const pd_complex128 *)d)[i].im;
        return ((const pd_complex128 *)d)[i].re;
    default: return 0;
    }
}

void pd_cmd_print_values(FILE *fp, const pd_tensor *t, int64_t max)
{
    int64_t n = pd_numel(t);
    if (!pd_initialized(t) || !pd_place_is_host(t->place)) {
        fputs("(not in host memory)", fp);
        return;
    }
    for (int64_t i = 0; i < n && i < max; ++i) {
        double im, re = element(t, i, &im);
        fprintf(fp, i ? " %g" : "%g", re);
        if (pd_dtype_is_complex(t->dtype))
            fprintf(fp, "%+gi", im);
    }
    if (n > max)
        fputs(" ...", fp);
}
