/*
 * pd_dtype.h - element data types: the enum, sizes, canonical names, the C structs that
 * hold float16, bfloat16 and complex elements in C, C++ and CUDA alike, and conversions that
 * let one PD_DISPATCH_* body compute in every type (PD_ACC_TYPE, pd_to_acc, pd_to_float).
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
    PD_UNDEFINED = 0, /* no type: the dtype of an undefined tensor */
    PD_BOOL = 1,      /* 1 byte, 0 or 1 */
    PD_INT8 = 2,
    PD_UINT8 = 3,
    PD_INT16 = 4,
    PD_UINT16 = 5, /* plain unsigned 16-bit integer (not a float format) */
    PD_INT32 = 6,
    PD_UINT32 = 7,
    PD_INT64 = 8,
    PD_UINT64 = 9,
    PD_FLOAT16 = 10,  /* IEEE 754 binary16, held in pd_float16 */
    PD_BFLOAT16 = 11, /* brain float (upper half of a float32), held in pd_bfloat16 */
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
    static const unsigned char sizes[PD_NUM_DTYPES] = {0, 1, 1, 1, 2, 2, 4, 4,
                                                       8, 8, 2, 2, 4, 8, 8, 16};
    return ((unsigned)t < PD_NUM_DTYPES) ? sizes[t] : 0;
}

/* Canonical name ("float32", "complex64", ...); "undefined" for PD_UNDEFINED and for any
 * value outside the enum, so it is always safe to print. */
static inline const char *pd_dtype_name(pd_data_type t)
{
    static const char *const names[PD_NUM_DTYPES] = {"undefined", "bool",    "int8",
                                                     "uint8",     "int16",   "uint16",
                                                     "int32",     "uint32",  "int64",
                                                     "uint64",    "float16", "bfloat16",
                                                     "float32",   "float64", "complex64",
                                                     "complex128"};
    return ((unsigned)t < PD_NUM_DTYPES) ? names[t] : "undefined";
}

/* The dtype whose canonical name is `name`; also accepts numpy/C spellings "float", "double",
 * "half", "int", "long", "complex", "bf16", "fp16", "fp32", "fp64". PD_UNDEFINED if unknown. */
static inline pd_data_type pd_dtype_from_name(const char *name)
{
    static const struct {
        const char *alias;
        pd_data_type type;
    } aliases[] = {{"float", PD_FLOAT32},    {"double", PD_FLOAT64}, {"half", PD_FLOAT16},
                   {"fp16", PD_FLOAT16},     {"bf16", PD_BFLOAT16},  {"fp32", PD_FLOAT32},
                   {"fp64", PD_FLOAT64},     {"int", PD_INT32},      {"long", PD_INT64},
                   {"complex", PD_COMPLEX64}};
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
static inline bool pd_dtype_is_integral(pd_data_type t) { return t >= PD_INT8 && t <= PD_UINT64; }

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

/* --- Generic conversions for PD_DISPATCH_* bodies ------------------------------------------
 *
 * In a dispatch body `data_t` may be a struct (pd_float16, pd_bfloat16, pd_complex64, ...),
 * so `in[i] + 1` does not compile for every type. Compute in the accumulation type instead:
 *
 *     PD_DISPATCH_FLOATING_AND_HALF_TYPES(pd_dtype(x), "sum", {
 *         const data_t *in = (const data_t *)pd_data(x);
 *         PD_ACC_TYPE(data_t) acc = 0;
 *         for (int64_t i = 0; i < n; ++i)
 *             acc += pd_to_acc(in[i]);
 *         *(data_t *)pd_data(out) = pd_from_acc(data_t, acc);
 *     });
 *
 *   PD_ACC_TYPE(T)        the type to compute in: float for pd_float16 and pd_bfloat16, T
 *                         itself for every other type (double for double, int32_t for int32_t,
 *                         pd_complex64 for pd_complex64).
 *   pd_to_acc(v)          v as PD_ACC_TYPE of its type; exact.
 *   pd_from_acc(T, a)     a as T: rounded to nearest even for the halves, a C conversion
 *                         otherwise.
 *   pd_to_float(v)        v as float, for every real type (halves and small integers exact,
 *                         double and wide integers rounded); a compile error for complex.
 *   pd_from_float(T, f)   f (float or double) as T, as pd_from_acc; a compile error for
 *                         complex T.
 * C picks the function with _Generic, C++ and CUDA (host and device code) with overloads;
 * either way the choice is made at compile time and costs nothing. */
#ifndef __cplusplus
/* The identity of each C type (used where a type converts to itself or by C's rules). */
static inline bool pd__keep_bool(bool v) { return v; }
static inline int8_t pd__keep_i8(int8_t v) { return v; }
static inline uint8_t pd__keep_u8(uint8_t v) { return v; }
static inline int16_t pd__keep_i16(int16_t v) { return v; }
static inline uint16_t pd__keep_u16(uint16_t v) { return v; }
static inline int32_t pd__keep_i32(int32_t v) { return v; }
static inline uint32_t pd__keep_u32(uint32_t v) { return v; }
static inline int64_t pd__keep_i64(int64_t v) { return v; }
static inline uint64_t pd__keep_u64(uint64_t v) { return v; }
static inline float pd__keep_f32(float v) { return v; }
static inline double pd__keep_f64(double v) { return v; }
static inline pd_complex64 pd__keep_c64(pd_complex64 v) { return v; }
static inline pd_complex128 pd__keep_c128(pd_complex128 v) { return v; }

#define PD_ACC_TYPE(T) \
    __typeof__(_Generic((T *)0, pd_float16 * : 0.0f, pd_bfloat16 * : 0.0f, default : *(T *)0))
#define pd_to_acc(v)                            \
    _Generic((v), pd_float16                    \
             : pd_float16_to_float, pd_bfloat16 \
             : pd_bfloat16_to_float, bool       \
             : pd__keep_bool, int8_t            \
             : pd__keep_i8, uint8_t             \
             : pd__keep_u8, int16_t             \
             : pd__keep_i16, uint16_t           \
             : pd__keep_u16, int32_t            \
             : pd__keep_i32, uint32_t           \
             : pd__keep_u32, int64_t            \
             : pd__keep_i64, uint64_t           \
             : pd__keep_u64, float              \
             : pd__keep_f32, double             \
             : pd__keep_f64, pd_complex64       \
             : pd__keep_c64, pd_complex128      \
             : pd__keep_c128)(v)
#define pd_from_acc(T, a) \
    _Generic((T *)0, pd_float16 *: pd_float16_from_float, pd_bfloat16 *: pd_bfloat16_from_float, \
             bool *: pd__keep_bool, int8_t *: pd__keep_i8, uint8_t *: pd__keep_u8,            \
             int16_t *: pd__keep_i16, uint16_t *: pd__keep_u16, int32_t *: pd__keep_i32,      \
             uint32_t *: pd__keep_u32, int64_t *: pd__keep_i64, uint64_t *: pd__keep_u64,     \
             float *: pd__keep_f32, double *: pd__keep_f64, pd_complex64 *: pd__keep_c64,     \
             pd_complex128 *: pd__keep_c128)(a)
#define pd_to_float(v)                          \
    _Generic((v), pd_float16                    \
             : pd_float16_to_float, pd_bfloat16 \
             : pd_bfloat16_to_float, default    \
             : pd__keep_f32)(v)
#define pd_from_float(T, f) pd_from_acc(T, f)
#endif /* !__cplusplus */

PD_EXTERN_C_END

#ifdef __cplusplus
/* C++ and CUDA: the same helpers as overloads and templates (internal linkage, so a module
 * that uses them defines no symbol of its own for them). */
template <class T> struct pd__acc {
    typedef T type;
};
template <> struct pd__acc<pd_float16> {
    typedef float type;
};
template <> struct pd__acc<pd_bfloat16> {
    typedef float type;
};
#define PD_ACC_TYPE(T) typename pd__acc<T>::type

template <class T> static inline PD_HOST_DEVICE T pd_to_acc(T v) { return v; }
static inline PD_HOST_DEVICE float pd_to_acc(pd_float16 v) { return pd_float16_to_float(v); }
static inline PD_HOST_DEVICE float pd_to_acc(pd_bfloat16 v) { return pd_bfloat16_to_float(v); }

template <class T> static inline PD_HOST_DEVICE float pd_to_float(T v)
{
    return static_cast<float>(v);
}
static inline PD_HOST_DEVICE float pd_to_float(pd_float16 v) { return pd_float16_to_float(v); }
static inline PD_HOST_DEVICE float pd_to_float(pd_bfloat16 v) { return pd_bfloat16_to_float(v); }

/* pd_from_acc / pd_from_float: the target type is a tag argument, so that overloading picks
 * the halves' rounding (the more specialized template) for any argument type. */
template <class T> struct pd__to {};
template <class T, class A> static inline PD_HOST_DEVICE T pd__convert(pd__to<T>, A a)
{
    return static_cast<T>(a);
}
template <class A> static inline PD_HOST_DEVICE pd_float16 pd__convert(pd__to<pd_float16>, A a)
{
    return pd_float16_from_float(static_cast<float>(a));
}
template <class A> static inline PD_HOST_DEVICE pd_bfloat16 pd__convert(pd__to<pd_bfloat16>, A a)
{
    return pd_bfloat16_from_float(static_cast<float>(a));
}
#define pd_from_acc(T, a) pd__convert(pd__to<T>(), (a))
#define pd_from_float(T, f) pd__convert(pd__to<T>(), (f))
#endif /* __cplusplus */

#endif /* PD_DTYPE_H */
