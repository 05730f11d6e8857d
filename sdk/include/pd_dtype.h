/*
 * pd_dtype.h - element data types: the enum, sizes, canonical names, and the C structs that
 * hold float16, bfloat16 and complex elements in C, C++ and CUDA alike.
 *
 * Every function here is inline and needs no runtime, so kernels, hosts and device code can
 * use them freely.
 */
#ifndef PD_DTYPE_H
#define PD_DTYPE_H

#include "pd_base.h"

#include <string.h>

PD_EXTERN_C_BEGIN

/* Element types: Paddle's list. Values are part of the ABI and never renumbered. */
typedef enum pd_data_type {
    PD_UNDEFINED = 0,   /* no type: the dtype of an undefined tensor */
    PD_BOOL = 1,        /* 1 byte, 0 or 1 */
    PD_INT8 = 2,
    PD_UINT8 = 3,
    PD_INT16 = 4,
    PD_UINT16 = 5,      /* plain unsigned 16-bit integer (not a float format) */
    PD_INT32 = 6,
    PD_UINT32 = 7,
    PD_INT64 = 8,
    PD_UINT64 = 9,
    PD_FLOAT16 = 10,    /* IEEE 754 binary16, held in pd_float16 */
    PD_BFLOAT16 = 11,   /* brain float (upper half of a float32), held in pd_bfloat16 */
    PD_FLOAT32 = 12,
    PD_FLOAT64 = 13,
    PD_COMPLEX64 = 14,  /* two float32, interleaved (re, im): pd_complex64 */
    PD_COMPLEX128 = 15, /* two float64, interleaved (re, im): pd_complex128 */
    PD_NUM_DTYPES = 16  /* count of the values above; not a type */
} pd_data_type;

/* IEEE half: the raw bits, so that it is a plain 2-byte POD in every language. */
typedef struct pd_float16 {
    uint16_t bits;
} pd_float16;

/* bfloat16: the upper 16 bits of a float32. */
typedef struct pd_bfloat16 {
    uint16_t bits;
} pd_bfloat16;

/* Complex numbers, interleaved real then imaginary (the layout of C99 _Complex,
 * std::complex and cuComplex). */
typedef struct pd_complex64 {
    float re, im;
} pd_complex64;

typedef struct pd_complex128 {
    double re, im;
} pd_complex128;

/* Bytes per element; 0 for PD_UNDEFINED and for values outside the enum. */
static inline size_t pd_dtype_size(pd_data_type t)
{
    static const unsigned char sizes[PD_NUM_DTYPES] = {0, 1, 1, 1, 2, 2, 4, 4, 8, 8, 2, 2, 4, 8, 8, 16};
    return ((unsigned)t < PD_NUM_DTYPES) ? sizes[t] : 0;
}

/* Canonical name ("float32", "complex64", ...); "undefined" for PD_UNDEFINED and for any
 * value outside the enum, so it is always safe to print. */
static inline const char *pd_dtype_name(pd_data_type t)
{
    static const char *const names[PD_NUM_DTYPES] = {
        "undefined", "bool",    "int8",     "uint8",   "int16",   "uint16",  "int32",     "uint32",
        "int64",     "uint64",  "float16",  "bfloat16", "float32", "float64", "complex64", "complex128"};
    return ((unsigned)t < PD_NUM_DTYPES) ? names[t] : "undefined";
}

/* The dtype whose canonical name is `name`; also accepts numpy/C spellings "float", "double",
 * "half", "int", "long", "complex", "bf16", "fp16", "fp32", "fp64". PD_UNDEFINED if unknown. */
static inline pd_data_type pd_dtype_from_name(const char *name)
{
    static const struct { const char *alias; pd_data_type type; } aliases[] = {
        {"float", PD_FLOAT32}, {"double", PD_FLOAT64}, {"half", PD_FLOAT16}, {"fp16", PD_FLOAT16},
        {"bf16", PD_BFLOAT16}, {"fp32", PD_FLOAT32}, {"fp64", PD_FLOAT64}, {"int", PD_INT32},
        {"long", PD_INT64},    {"complex", PD_COMPLEX64}};
    if (name == NULL)
        return PD_UNDEFINED;
    for (int t = 1; t < PD_NUM_DTYPES; ++t)
        if (strcmp(name, pd_dtype_name((pd_data_type)t)) == 0)
            return (pd_data_type)t;
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; ++i)
        if (strcmp(name, aliases[i].alias) == 0)
            return aliases[i].type;
    return PD_UNDEFINED;
}

static inline bool pd_dtype_is_floating(pd_data_type t)
{
    return t == PD_FLOAT16 || t == PD_BFLOAT16 || t == PD_FLOAT32 || t == PD_FLOAT64;
}

static inline bool pd_dtype_is_complex(pd_data_type t)
{
    return t == PD_COMPLEX64 || t == PD_COMPLEX128;
}

/* bool is not integral here, as in Paddle's dispatch lists. */
static inline bool pd_dtype_is_integral(pd_data_type t)
{
    return t >= PD_INT8 && t <= PD_UINT64;
}

/* Bit-exact float <-> uint32 without aliasing violations (memcpy is free once inlined). */
static inline PD_HOST_DEVICE uint32_t pd__f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline PD_HOST_DEVICE float pd__bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* float32 -> float16, round to nearest even; overflow gives infinity, NaN stays NaN. */
static inline PD_HOST_DEVICE pd_float16 pd_float16_from_float(float f)
{
    uint32_t x = pd__f32_bits(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t absx = x & 0x7fffffffu;
    pd_float16 h;
    if (absx >= 0x7f800000u) { /* inf or NaN */
        h.bits = (uint16_t)(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u : 0u));
        return h;
    }
    if (absx >= 0x477ff000u) { /* rounds to >= 65520: overflow */
        h.bits = (uint16_t)(sign | 0x7c00u);
        return h;
    }
    if (absx < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        /* Adding 0.5f aligns the half-subnormal grid to float's mantissa and rounds. */
        float d = pd__bits_f32(absx) + 0.5f;
        h.bits = (uint16_t)(sign | (pd__f32_bits(d) - 0x3f000000u));
        return h;
    }
    uint32_t odd = (absx >> 13) & 1u;
    absx += 0xc8000fffu + odd; /* rebias exponent (-112 << 23) and round to nearest even */
    h.bits = (uint16_t)(sign | (absx >> 13));
    return h;
}

static inline PD_HOST_DEVICE float pd_float16_to_float(pd_float16 h)
{
    uint32_t sign = (uint32_t)(h.bits & 0x8000u) << 16;
    uint32_t exp = (h.bits >> 10) & 0x1fu;
    uint32_t man = h.bits & 0x3ffu;
    if (exp == 0x1fu) /* inf / NaN */
        return pd__bits_f32(sign | 0x7f800000u | (man << 13));
    if (exp == 0) { /* zero or subnormal: man * 2^-24 is exact in float */
        float v = (float)man * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    return pd__bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

/* float32 -> bfloat16, round to nearest even; NaN stays a (quiet) NaN. */
static inline PD_HOST_DEVICE pd_bfloat16 pd_bfloat16_from_float(float f)
{
    uint32_t x = pd__f32_bits(f);
    pd_bfloat16 b;
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        b.bits = (uint16_t)((x >> 16) | 0x40u);
        return b;
    }
    x += 0x7fffu + ((x >> 16) & 1u);
    b.bits = (uint16_t)(x >> 16);
    return b;
}

static inline PD_HOST_DEVICE float pd_bfloat16_to_float(pd_bfloat16 b)
{
    return pd__bits_f32((uint32_t)b.bits << 16);
}

PD_EXTERN_C_END

#endif /* PD_DTYPE_H */
