/*
 * pd_place.h - where a tensor's memory lives: a value of 8 bytes, a device type and a device
 * number, as DLPack's DLDevice. Copy places freely; pd_place_equal compares two integers.
 *
 * Device types are numbers. The built-in ones are fixed (CPU 1, GPU 2, GPU-pinned 3); custom
 * device types (a plug-in's "npu", "mlu", ...) are registered by name at run time and get a
 * number from PD_PLACE_CUSTOM_FIRST on (pd_device_type_register in pdext.h). pd_place_custom
 * and pd_place_type_name look such names up: op code reaches them through the runtime's
 * function table (pd_api.h), hosts through libpdext (pdext.h); both spell them the same.
 */
#ifndef PD_PLACE_H
#define PD_PLACE_H

#include "pd_base.h"

#include <string.h>

PD_EXTERN_C_BEGIN

/* Device type numbers. Values are part of the ABI and never renumbered. */
typedef enum pd_place_type {
    PD_PLACE_UNDEFINED = 0,  /* no place: the place of an undefined tensor, or an invalid one */
    PD_PLACE_CPU = 1,        /* host memory; device_id is 0 */
    PD_PLACE_GPU = 2,        /* CUDA device memory of device_id */
    PD_PLACE_GPU_PINNED = 3, /* page-locked host memory, readable by the CPU; device_id is 0 */
    /* 4 .. 15 are reserved for built-in device types. */
    PD_PLACE_CUSTOM_FIRST = 16,     /* the first number handed to a registered custom device type */
    PD__PLACE_TYPE_MAX = 0x7fffffff /* keeps every int32_t type number a value of the enum */
} pd_place_type;

/* Longest custom device type name, excluding the terminating NUL. */
#define PD_PLACE_CUSTOM_NAME_MAX 23

typedef struct pd_place {
    /* A pd_place_type: PD_PLACE_CPU, ..., or a registered custom type number (>= 16).
     * PD_PLACE_UNDEFINED for no place. */
    int32_t type;
    /* Which device of that type: the GPU or custom device number (>= 0); 0 for CPU and
     * GPU-pinned. In an undefined place made by pd_place_custom from a name that is not
     * registered, a negative number that lets messages name that device type. */
    int32_t device_id;
} pd_place;

PD_STATIC_ASSERT(sizeof(pd_place) == 8, "pd_place is two int32_t, as DLPack's DLDevice");

static inline pd_place pd_place_make(int32_t type, int32_t device_id)
{
    pd_place p;
    p.type = type;
    p.device_id = device_id;
    return p;
}

static inline pd_place pd_place_cpu(void) { return pd_place_make(PD_PLACE_CPU, 0); }
static inline pd_place pd_place_gpu(int32_t device_id)
{
    return pd_place_make(PD_PLACE_GPU, device_id);
}
static inline pd_place pd_place_gpu_pinned(void) { return pd_place_make(PD_PLACE_GPU_PINNED, 0); }

static inline pd_place_type pd_place_get_type(pd_place p) { return (pd_place_type)p.type; }
static inline int32_t pd_place_device_id(pd_place p) { return p.device_id; }

/* Same device type and the same device number. */
static inline bool pd_place_equal(pd_place a, pd_place b)
{
    return a.type == b.type && a.device_id == b.device_id;
}

/* Host-readable memory: CPU and GPU-pinned. */
static inline bool pd_place_is_host(pd_place p)
{
    return p.type == PD_PLACE_CPU || p.type == PD_PLACE_GPU_PINNED;
}

/* A place of a registered custom device type. */
static inline bool pd_place_is_custom(pd_place p) { return p.type >= PD_PLACE_CUSTOM_FIRST; }

/* "cpu", "gpu", "gpu_pinned" or "undefined" for the built-in types; NULL for a custom type
 * number (whose name pd_place_type_name looks up). */
static inline const char *pd__place_builtin_name(int32_t type)
{
    switch (type) {
    case PD_PLACE_CPU: return "cpu";
    case PD_PLACE_GPU: return "gpu";
    case PD_PLACE_GPU_PINNED: return "gpu_pinned";
    default: return type >= PD_PLACE_CUSTOM_FIRST ? NULL : "undefined";
    }
}

/*
 * Declared in pd_api.h (op code) and pdext.h (hosts), with the same meaning:
 *
 *   pd_place pd_place_custom(const char *type_name, int32_t device_id);
 *       A place of the registered custom device type `type_name`. A name that is not
 *       registered gives an undefined place that remembers the name, so that the allocation
 *       that uses it fails naming it and saying how to register it; a NULL, empty or too long
 *       name (more than PD_PLACE_CUSTOM_NAME_MAX characters) or a negative id gives a plain
 *       undefined place.
 *
 *   const char *pd_place_type_name(const pd_place *p);
 *       "cpu", "gpu", "gpu_pinned", the registered name of a custom type ("npu"), or
 *       "undefined".
 */

PD_EXTERN_C_END

#endif /* PD_PLACE_H */
