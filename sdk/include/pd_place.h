/*
 * pd_place.h - where a tensor's memory lives: CPU, a GPU, pinned host memory, or a custom
 * device named by its type. Places are small values: copy them, compare them with
 * pd_place_equal.
 */
#ifndef PD_PLACE_H
#define PD_PLACE_H

#include "pd_base.h"

#include <string.h>

PD_EXTERN_C_BEGIN

/* Values are part of the ABI and never renumbered. */
typedef enum pd_place_type {
    PD_PLACE_UNDEFINED = 0, /* no place: the place of an undefined tensor, or an invalid one */
    PD_PLACE_CPU = 1,       /* host memory */
    PD_PLACE_GPU = 2,       /* CUDA device memory of device_id */
    PD_PLACE_GPU_PINNED = 3,/* page-locked host memory, readable by the CPU */
    PD_PLACE_CUSTOM = 4     /* a plug-in device: custom_type names it, device_id numbers it */
} pd_place_type;

/* Longest custom device type name, excluding the terminating NUL. */
#define PD_PLACE_CUSTOM_NAME_MAX 23

typedef struct pd_place {
    pd_place_type type;
    int32_t device_id; /* GPU or custom device number; 0 for CPU and GPU-pinned */
    char custom_type[PD_PLACE_CUSTOM_NAME_MAX + 1]; /* NUL-terminated; all zero unless CUSTOM */
} pd_place;

static inline pd_place pd_place_make(pd_place_type type, int32_t device_id)
{
    pd_place p;
    memset(&p, 0, sizeof p);
    p.type = type;
    p.device_id = device_id;
    return p;
}

static inline pd_place pd_place_cpu(void) { return pd_place_make(PD_PLACE_CPU, 0); }
static inline pd_place pd_place_gpu(int32_t device_id) { return pd_place_make(PD_PLACE_GPU, device_id); }
static inline pd_place pd_place_gpu_pinned(void) { return pd_place_make(PD_PLACE_GPU_PINNED, 0); }

/* A custom device place. A NULL or empty type name, one longer than PD_PLACE_CUSTOM_NAME_MAX,
 * or a negative id gives a PD_PLACE_UNDEFINED place, which every allocation refuses by name
 * (rather than silently truncating the name). */
static inline pd_place pd_place_custom(const char *type_name, int32_t device_id)
{
    size_t n = type_name ? strlen(type_name) : 0;
    if (n == 0 || n > PD_PLACE_CUSTOM_NAME_MAX || device_id < 0)
        return pd_place_make(PD_PLACE_UNDEFINED, 0);
    pd_place p = pd_place_make(PD_PLACE_CUSTOM, device_id);
    memcpy(p.custom_type, type_name, n);
    return p;
}

static inline pd_place_type pd_place_get_type(pd_place p) { return p.type; }
static inline int32_t pd_place_device_id(pd_place p) { return p.device_id; }

/* Same kind, same device number and, for custom devices, the same type name. */
static inline bool pd_place_equal(pd_place a, pd_place b)
{
    return a.type == b.type && a.device_id == b.device_id &&
           (a.type != PD_PLACE_CUSTOM || strcmp(a.custom_type, b.custom_type) == 0);
}

/* Host-readable memory: CPU and GPU-pinned. */
static inline bool pd_place_is_host(pd_place p)
{
    return p.type == PD_PLACE_CPU || p.type == PD_PLACE_GPU_PINNED;
}

/* "cpu", "gpu", "gpu_pinned", the custom type name, or "undefined". */
static inline const char *pd_place_type_name(const pd_place *p)
{
    switch (p->type) {
    case PD_PLACE_CPU: return "cpu";
    case PD_PLACE_GPU: return "gpu";
    case PD_PLACE_GPU_PINNED: return "gpu_pinned";
    case PD_PLACE_CUSTOM: return p->custom_type;
    default: return "undefined";
    }
}

PD_EXTERN_C_END

#endif /* PD_PLACE_H */
