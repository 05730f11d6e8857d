/*
 * options.c - reading a host's versioned options struct (pd_aot_options and the like: a
 * struct whose first field is a uint32_t struct_size), one rule for every library of pdext.
 *
 * Why struct_size: a host built against an older header passes a shorter struct, and the
 * fields it does not know read as zero (their documented defaults); a size larger than this
 * library knows comes from a newer header, whose fields would be ignored silently, so it is
 * refused, as a size of 0 (a struct never filled in) is.
 */
#include "pd_internal.h"

#include <string.h>

pd_status pd__options_read(const char *who, const char *subject, const char *type, void *dst,
                           size_t dst_size, const void *src)
{
    memset(dst, 0, dst_size);
    if (src == NULL)
        return PD_OK;
    uint32_t size;
    memcpy(&size, src, sizeof size);
    if (size == 0 || size > dst_size)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: opts->struct_size is %u; set it to sizeof(%s)", who, subject,
                        (unsigned)size, type);
    memcpy(dst, src, size);
    return PD_OK;
}
