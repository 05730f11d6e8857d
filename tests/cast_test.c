/* cast_test.c - pd_tensor_cast over all 15 x 15 dtype pairs, checked element by element
 * against a reference computed here independently: in long double (exact for every 64-bit
 * integer and every float / double), with float16 / bfloat16 encoded and decoded by
 * arithmetic (ldexp / rint) instead of the bit tricks pd_dtype.h uses. */
#include "pd_test.h"

#include <math.h>
#include <stdio.h>

#define CPU pd_place_cpu()

/* What a source element is, exactly. */
typedef enum ref_kind { REF_INT, REF_REAL, REF_COMPLEX } ref_kind;

typedef struct ref_value {
    ref_kind kind;
    uint64_t bits;  /* REF_INT: two's complement of the value, 64 bits wide */
    long double re; /* the value (REF_INT: exact as well) */
    long double im; /* REF_COMPLEX only */
} ref_value;

/* --- Independent float16 / bfloat16 arithmetic ---------------------------------------------- */

/* Value of a binary format with `man_bits` stored mantissa bits and exponent bias `bias`. */
static long double decode_small_float(uint16_t bits, int exp_bits, int man_bits, int bias)
{
    int sign = bits >> 15;
    int exp = (bits >> man_bits) & ((1 << exp_bits) - 1);
    int man = bits & ((1 << man_bits) - 1);
    long double v;
    if (exp == (1 << exp_bits) - 1)
        v = man ? NAN : INFINITY;
    else if (exp == 0)
        v = ldexpl((long double)man, 1 - bias - man_bits);
    else
        v = ldexpl((long double)((1 << man_bits) + man), exp - bias - man_bits);
    return sign ? -v : v;
}

/* Rounds f to nearest even in a binary format and returns its bits (NaN: a quiet NaN). */
static uint16_t encode_small_float(float f, int exp_bits, int man_bits, int bias)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    uint16_t inf = (uint16_t)(((1 << exp_bits) - 1) << man_bits);
    if (isnan(f))
        return (uint16_t)(inf | (1 << (man_bits - 1)));
    long double a = fabsl((long double)f);
    if (isinf(a))
        return sign | inf;
    int min_exp = 1 - bias; /* exponent of the smallest normal */
    int e;
    frexpl(a, &e); /* a = m * 2^e, m in [0.5, 1): the leading bit is 2^(e-1) */
    int lead = a == 0 ? min_exp : (e - 1 < min_exp ? min_exp : e - 1);
    long double quantum = ldexpl(1.0L, lead - man_bits);
    long double r = rintl(a / quantum) * quantum; /* the default mode: nearest, ties to even */
    if (r >= ldexpl(1.0L, bias + 1))
        return sign | inf;
    if (r < ldexpl(1.0L, min_exp)) /* subnormal: count quanta (2^min_exp itself gives the
                                    * encoding of the smallest normal, which is right) */
        return sign | (uint16_t)(r / ldexpl(1.0L, min_exp - man_bits));
    frexpl(r, &e);
    long double frac = r / ldexpl(1.0L, e - 1) - 1.0L;
    return sign | (uint16_t)((e - 1 + bias) << man_bits) | (uint16_t)(frac * (1 << man_bits));
}

static long double f16_decode(uint16_t b) { return decode_small_float(b, 5, 10, 15); }
static long double bf16_decode(uint16_t b) { return decode_small_float(b, 8, 7, 127); }
static uint16_t f16_encode(float f) { return encode_small_float(f, 5, 10, 15); }
static uint16_t bf16_encode(float f) { return encode_small_float(f, 8, 7, 127); }

/* --- Test values --------------------------------------------------------------------------- */

static const int64_t signed_values[] = {0,
                                        1,
                                        -1,
                                        7,
                                        -100,
                                        127,
                                        -128,
                                        200,
                                        255,
                                        256,
                                        300,
                                        -129,
                                        2049,
                                        32767,
                                        -32768,
                                        -32769,
                                        65535,
                                        70000,
                                        16777217,
                                        2147483647,
                                        -2147483648LL,
                                        -2147483649LL,
                                        4294967295LL,
                                        4294967296LL,
                                        (INT64_C(1) << 62) + 1,
                                        -((INT64_C(1) << 62) + 1),
                                        INT64_MAX,
                                        INT64_MIN};
static const uint64_t unsigned_extra[] = {UINT64_MAX, (UINT64_C(1) << 63) + 1,
                                          UINT64_C(18446744073709549568)};
static const double real_values[] = {0.0,           -0.0,         0.5,
                                     -0.5,          1.0,          -1.0,
                                     2.5,           -2.75,        0.1,
                                     127.9,         -128.9,       128.0,
                                     255.5,         256.0,        -129.0,
                                     65504.0,       65519.0,      65520.0,
                                     1.00048828125, 1.0009765625, 0x1p-24,
                                     0x1p-25,       0x1.8p-24,    2147483647.5,
                                     -2147483648.5, 4294967296.0, 1e10,
                                     -1e10,         9.3e18,       -9.3e18,
                                     1.8e19,        2e19,         0x1p62 + 0x1p10,
                                     3e38,          3.5e38,       -1e300,
                                     1e300,         5e-324,       NAN,
                                     INFINITY,      -INFINITY};
static const uint16_t f16_bits[] = {0x0000, 0x8000, 0x3c00, 0xbc00, 0x3e00, 0xc100, 0x7bff,
                                    0xfbff, 0x0001, 0x03ff, 0x0400, 0x7c00, 0xfc00, 0x7e00,
                                    0x5640, 0x57f8, 0x5bf8, 0xd800, 0x3555, 0x2e66};
static const uint16_t bf16_bits[] = {0x0000, 0x8000, 0x3f80, 0xbf80, 0x4049, 0x7f80,
                                     0xff80, 0x7fc0, 0x0001, 0x4f00, 0xcf00, 0xdf00,
                                     0x5f00, 0x5f80, 0x4380, 0xc300, 0x3dcd, 0x7f7f};
static const double complex_values[][2] = {{0, 0},        {0, 1},          {1.5, -2},
                                           {-7.25, 0},    {NAN, 0},        {0, NAN},
                                           {1e10, 3},     {-1e300, 1e300}, {65504, -65520},
                                           {2.5, 0.1},    {-0.0, -0.0},    {300.75, -1},
                                           {-1, INFINITY}};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define MAX_VALUES 128

static bool is_signed_int(pd_data_type t)
{
    return t == PD_INT8 || t == PD_INT16 || t == PD_INT32 || t == PD_INT64;
}
static int int_bits(pd_data_type t) { return (int)pd_dtype_size(t) * 8; }

static ref_value int_ref(uint64_t bits, bool negative)
{
    ref_value r = {REF_INT, bits, 0, 0};
    r.re = negative ? -(long double)(~bits + 1) : (long double)bits;
    return r;
}

/* Fills `raw` with test elements of dtype t and `refs` with what they are; returns the count. */
static int make_source(pd_data_type t, unsigned char *raw, ref_value *refs)
{
    int n = 0;
    size_t size = pd_dtype_size(t);
    if (t == PD_BOOL) {
        for (unsigned char b = 0; b < 2; ++b) {
            raw[n] = b;
            refs[n++] = int_ref(b, false);
        }
    } else if (pd_dtype_is_integral(t)) {
        int bits = int_bits(t);
        bool sgn = is_signed_int(t);
        for (size_t i = 0; i < COUNT(signed_values) + COUNT(unsigned_extra); ++i) {
            bool from_signed = i < COUNT(signed_values);
            int64_t sv = from_signed ? signed_values[i] : 0;
            uint64_t u = from_signed ? (uint64_t)sv : unsigned_extra[i - COUNT(signed_values)];
            bool negative = from_signed && sv < 0;
            /* Keep the values the type can hold. */
            if (sgn) {
                if (!from_signed)
                    continue;
                if (bits < 64 &&
                    (sv < -(INT64_C(1) << (bits - 1)) || sv >= (INT64_C(1) << (bits - 1))))
                    continue;
            } else {
                if (negative || (bits < 64 && u >= (UINT64_C(1) << bits)))
                    continue;
            }
            memcpy(raw + (size_t)n * size, &u, size); /* little-endian: the low bytes */
            refs[n++] = int_ref(u, negative);
        }
    } else if (t == PD_FLOAT16 || t == PD_BFLOAT16) {
        const uint16_t *list = t == PD_FLOAT16 ? f16_bits : bf16_bits;
        size_t count = t == PD_FLOAT16 ? COUNT(f16_bits) : COUNT(bf16_bits);
        for (size_t i = 0; i < count; ++i) {
            memcpy(raw + (size_t)n * 2, &list[i], 2);
            ref_value r = {REF_REAL, 0,
                           t == PD_FLOAT16 ? f16_decode(list[i]) : bf16_decode(list[i]), 0};
            refs[n++] = r;
        }
    } else if (t == PD_FLOAT32 || t == PD_FLOAT64) {
        for (size_t i = 0; i < COUNT(real_values); ++i) {
            ref_value r = {REF_REAL, 0, 0, 0};
            if (t == PD_FLOAT32) {
                float f = (float)real_values[i];
                memcpy(raw + (size_t)n * 4, &f, 4);
                r.re = f;
            } else {
                memcpy(raw + (size_t)n * 8, &real_values[i], 8);
                r.re = real_values[i];
            }
            refs[n++] = r;
        }
    } else {
        for (size_t i = 0; i < COUNT(complex_values); ++i) {
            ref_value r = {REF_COMPLEX, 0, 0, 0};
            if (t == PD_COMPLEX64) {
                float c[2] = {(float)complex_values[i][0], (float)complex_values[i][1]};
                memcpy(raw + (size_t)n * 8, c, 8);
                r.re = c[0];
                r.im = c[1];
            } else {
                memcpy(raw + (size_t)n * 16, complex_values[i], 16);
                r.re = complex_values[i][0];
                r.im = complex_values[i][1];
            }
            refs[n++] = r;
        }
    }
    return n;
}

/* --- The reference conversion ---------------------------------------------------------------- */

/* Floating -> integer: NaN -> 0, truncate, saturate; as two's complement bits. */
static uint64_t saturate_bits(long double v, pd_data_type t)
{
    int bits = int_bits(t);
    if (isnan(v))
        return 0;
    long double x = truncl(v);
    if (is_signed_int(t)) {
        long double lo = -ldexpl(1.0L, bits - 1), hi = ldexpl(1.0L, bits - 1) - 1;
        x = x < lo ? lo : x > hi ? hi : x;
        return x < 0 ? ~(uint64_t)(-(x + 1)) : (uint64_t)x; /* two's complement by hand */
    }
    long double hi = ldexpl(1.0L, bits) - 1;
    x = x < 0 ? 0 : x > hi ? hi : x;
    return (uint64_t)x;
}

/* Writes the expected element of dtype t for source r into out. */
static void expected_element(const ref_value *r, pd_data_type t, unsigned char *out)
{
    long double re = r->re, im = r->kind == REF_COMPLEX ? r->im : 0;
    size_t size = pd_dtype_size(t);
    if (t == PD_BOOL) {
        out[0] = (re != 0 || im != 0) ? 1 : 0;
    } else if (pd_dtype_is_integral(t)) {
        uint64_t bits = r->kind == REF_INT ? r->bits : saturate_bits(re, t);
        memcpy(out, &bits, size); /* low bytes: C's modular integer conversion */
    } else if (t == PD_FLOAT16 || t == PD_BFLOAT16) {
        float f = (float)re; /* via float, as documented */
        uint16_t b = t == PD_FLOAT16 ? f16_encode(f) : bf16_encode(f);
        memcpy(out, &b, 2);
    } else if (t == PD_FLOAT32 || t == PD_COMPLEX64) {
        float c[2] = {(float)re, (float)im};
        memcpy(out, c, size);
    } else {
        double c[2] = {(double)re, (double)im};
        memcpy(out, c, size);
    }
}

static bool f32_same(const unsigned char *a, const unsigned char *b)
{
    float x, y;
    memcpy(&x, a, 4);
    memcpy(&y, b, 4);
    return (isnan(x) && isnan(y)) || memcmp(a, b, 4) == 0;
}
static bool f64_same(const unsigned char *a, const unsigned char *b)
{
    double x, y;
    memcpy(&x, a, 8);
    memcpy(&y, b, 8);
    return (isnan(x) && isnan(y)) || memcmp(a, b, 8) == 0;
}
static bool half_same(const unsigned char *a, const unsigned char *b, pd_data_type t)
{
    uint16_t x, y, exp = t == PD_FLOAT16 ? 0x7c00 : 0x7f80;
    memcpy(&x, a, 2);
    memcpy(&y, b, 2);
    bool xnan = (x & exp) == exp && (x & ~exp & 0x7fff),
         ynan = (y & exp) == exp && (y & ~exp & 0x7fff);
    return (xnan && ynan) || x == y;
}

/* Equal elements; all NaNs count as equal, otherwise bits must match (so -0 != +0). */
static bool element_same(const unsigned char *a, const unsigned char *b, pd_data_type t)
{
    switch (t) {
    case PD_FLOAT16:
    case PD_BFLOAT16: return half_same(a, b, t);
    case PD_FLOAT32: return f32_same(a, b);
    case PD_FLOAT64: return f64_same(a, b);
    case PD_COMPLEX64: return f32_same(a, b) && f32_same(a + 4, b + 4);
    case PD_COMPLEX128: return f64_same(a, b) && f64_same(a + 8, b + 8);
    default: return memcmp(a, b, pd_dtype_size(t)) == 0;
    }
}

static void hex(const unsigned char *p, size_t n, char *out)
{
    for (size_t i = 0; i < n; ++i)
        sprintf(out + 2 * i, "%02x", p[n - 1 - i]);
}

/* --- Tests ------------------------------------------------------------------------------------ */

PD_TEST(Cast, EveryPairMatchesTheReferenceElementByElement)
{
    static unsigned char raw[MAX_VALUES * 16], want[16];
    static ref_value refs[MAX_VALUES];
    int failures = 0;
    for (int s = 1; s < PD_NUM_DTYPES; ++s) {
        pd_data_type st = (pd_data_type)s;
        int n = make_source(st, raw, refs);
        PD_ASSERT(n > 1 && n <= MAX_VALUES);
        pd_tensor src;
        const int64_t shape = n;
        PD_ASSERT_OK(pd_tensor_empty(&src, st, CPU, 1, &shape));
        memcpy(src.data, raw, (size_t)n * pd_dtype_size(st));
        for (int d = 1; d < PD_NUM_DTYPES; ++d) {
            pd_data_type dt = (pd_data_type)d;
            pd_tensor out;
            PD_ASSERT_OK(pd_tensor_cast(&out, &src, dt));
            PD_EXPECT_EQ(out.dtype, dt);
            PD_EXPECT(pd_same_shape(&out, &src));
            size_t size = pd_dtype_size(dt);
            for (int i = 0; i < n; ++i) {
                const unsigned char *got = (const unsigned char *)out.data + (size_t)i * size;
                if (st == dt)
                    memcpy(want, raw + (size_t)i * size, size); /* same dtype: a copy */
                else
                    expected_element(&refs[i], dt, want);
                if (!element_same(got, want, dt) && failures++ < 20) {
                    char g[40], w[40];
                    hex(got, size, g);
                    hex(want, size, w);
                    pd_test_fail(__FILE__, __LINE__,
                                 "%s -> %s, element %d (%.21Lg%+.21Lgi): got 0x%s, want 0x%s",
                                 pd_dtype_name(st), pd_dtype_name(dt), i, refs[i].re, refs[i].im, g,
                                 w);
                }
            }
            pd_tensor_release(&out);
        }
        pd_tensor_release(&src);
    }
}

/* Spot checks of the rules with the numbers written out. */
PD_TEST(Cast, LargeIntegersStayExactWithoutGoingThroughDouble)
{
    int64_t in[3] = {(INT64_C(1) << 62) + 1, INT64_MIN, INT64_MAX};
    pd_tensor src, i64, u64, back;
    const int64_t n = 3;
    PD_ASSERT_OK(pd_tensor_from_buffer(&src, in, PD_INT64, CPU, 1, &n, NULL, NULL));
    PD_ASSERT_OK(pd_tensor_cast(&u64, &src, PD_UINT64));
    PD_ASSERT_OK(pd_tensor_cast(&back, &u64, PD_INT64));
    PD_ASSERT_OK(pd_tensor_cast(&i64, &src, PD_INT64));
    PD_EXPECT(((uint64_t *)u64.data)[0] == (UINT64_C(1) << 62) + 1);
    PD_EXPECT(((uint64_t *)u64.data)[1] == UINT64_C(1) << 63);
    PD_EXPECT(memcmp(back.data, in, sizeof in) == 0);
    PD_EXPECT(memcmp(i64.data, in, sizeof in) == 0);
    PD_EXPECT(i64.data != src.data); /* same dtype still copies */
    pd_tensor_release(&src);
    pd_tensor_release(&u64);
    pd_tensor_release(&back);
    pd_tensor_release(&i64);
}

PD_TEST(Cast, FloatingToIntegerTruncatesTowardZeroAndSaturates)
{
    double in[6] = {-2.9, 2.9, 1e20, -1e20, NAN, -0.99};
    pd_tensor src, i8, u16;
    const int64_t n = 6;
    PD_ASSERT_OK(pd_tensor_from_buffer(&src, in, PD_FLOAT64, CPU, 1, &n, NULL, NULL));
    PD_ASSERT_OK(pd_tensor_cast(&i8, &src, PD_INT8));
    PD_ASSERT_OK(pd_tensor_cast(&u16, &src, PD_UINT16));
    const int8_t want_i8[6] = {-2, 2, 127, -128, 0, 0};
    const uint16_t want_u16[6] = {0, 2, 65535, 0, 0, 0};
    PD_EXPECT(memcmp(i8.data, want_i8, sizeof want_i8) == 0);
    PD_EXPECT(memcmp(u16.data, want_u16, sizeof want_u16) == 0);
    pd_tensor_release(&src);
    pd_tensor_release(&i8);
    pd_tensor_release(&u16);
}

PD_TEST(Cast, ComplexToRealKeepsTheRealPartAndToBoolAsksForAnyNonZeroPart)
{
    pd_complex128 in[3] = {{2.5, 9}, {0, -1}, {0, 0}};
    pd_tensor src, f, b;
    const int64_t n = 3;
    PD_ASSERT_OK(pd_tensor_from_buffer(&src, in, PD_COMPLEX128, CPU, 1, &n, NULL, NULL));
    PD_ASSERT_OK(pd_tensor_cast(&f, &src, PD_FLOAT32));
    PD_ASSERT_OK(pd_tensor_cast(&b, &src, PD_BOOL));
    PD_EXPECT(((float *)f.data)[0] == 2.5f && ((float *)f.data)[1] == 0.0f);
    const unsigned char want_b[3] = {1, 1, 0};
    PD_EXPECT(memcmp(b.data, want_b, 3) == 0);
    pd_tensor_release(&src);
    pd_tensor_release(&f);
    pd_tensor_release(&b);
}

PD_TEST(Cast, BoolSourceReadsAnyNonZeroByteAsTrue)
{
    unsigned char in[3] = {0, 2, 255};
    pd_tensor src, f;
    const int64_t n = 3;
    PD_ASSERT_OK(pd_tensor_from_buffer(&src, in, PD_BOOL, CPU, 1, &n, NULL, NULL));
    PD_ASSERT_OK(pd_tensor_cast(&f, &src, PD_FLOAT32));
    PD_EXPECT(((float *)f.data)[0] == 0 && ((float *)f.data)[1] == 1 && ((float *)f.data)[2] == 1);
    pd_tensor_release(&src);
    pd_tensor_release(&f);
}

PD_TEST(Cast, SameDtypeCopiesBitsExactlyEvenNaNPayloads)
{
    uint16_t in[2] = {0x7d01, 0xfe55}; /* a signalling and a quiet NaN with payloads */
    pd_tensor src, out;
    const int64_t n = 2;
    PD_ASSERT_OK(pd_tensor_from_buffer(&src, in, PD_FLOAT16, CPU, 1, &n, NULL, NULL));
    PD_ASSERT_OK(pd_tensor_cast(&out, &src, PD_FLOAT16));
    PD_EXPECT(out.data != src.data);
    PD_EXPECT(memcmp(out.data, in, sizeof in) == 0);
    PD_EXPECT_EQ(pd_tensor_use_count(&src), 1);
    pd_tensor_release(&src);
    pd_tensor_release(&out);
}

PD_TEST(Cast, LongTensorsConvertEveryElement)
{
    /* Long enough for the vectorized loop bodies and their remainders. */
    const int64_t shape[2] = {37, 29};
    pd_tensor src, f, back;
    PD_ASSERT_OK(pd_tensor_empty(&src, PD_INT32, CPU, 2, shape));
    int32_t *v = src.data;
    for (int i = 0; i < 37 * 29; ++i)
        v[i] = (i % 2 ? -1 : 1) * i * 1000;
    PD_ASSERT_OK(pd_tensor_cast(&f, &src, PD_FLOAT64));
    PD_ASSERT_OK(pd_tensor_cast(&back, &f, PD_INT32));
    PD_EXPECT(pd_same_shape(&back, &src));
    for (int i = 0; i < 37 * 29; ++i)
        if (((double *)f.data)[i] != (double)v[i] || ((int32_t *)back.data)[i] != v[i]) {
            PD_EXPECT_EQ(((int32_t *)back.data)[i], v[i]);
            break;
        }
    pd_tensor_release(&src);
    pd_tensor_release(&f);
    pd_tensor_release(&back);
}

PD_TEST(Cast, ZeroElementAndScalarTensorsCast)
{
    pd_tensor z, zc, s, sc;
    const int64_t shape[2] = {3, 0};
    PD_ASSERT_OK(pd_tensor_empty(&z, PD_FLOAT32, CPU, 2, shape));
    PD_ASSERT_OK(pd_tensor_cast(&zc, &z, PD_COMPLEX128));
    PD_EXPECT(pd_initialized(&zc));
    PD_EXPECT(pd_same_shape(&zc, &z));
    PD_ASSERT_OK(pd_tensor_full(&s, PD_FLOAT32, CPU, 0, NULL, -3.75));
    PD_ASSERT_OK(pd_tensor_cast(&sc, &s, PD_INT16));
    PD_EXPECT_EQ(pd_ndim(&sc), 0);
    PD_EXPECT_EQ(*(int16_t *)sc.data, -3);
    pd_tensor_release(&z);
    pd_tensor_release(&zc);
    pd_tensor_release(&s);
    pd_tensor_release(&sc);
}

PD_TEST(Cast, RejectsBadArgumentsNamingThem)
{
    pd_tensor src, out, undefined = PD_TENSOR_UNDEFINED;
    const int64_t n = 2;
    PD_ASSERT_OK(pd_tensor_zeros(&src, PD_FLOAT32, CPU, 1, &n));
    PD_EXPECT_ERROR(pd_tensor_cast(&out, &src, PD_UNDEFINED), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_cast: dtype is PD_UNDEFINED");
    PD_EXPECT_ERROR(pd_tensor_cast(&out, &src, (pd_data_type)99), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_cast: dtype 99 is not a pdext data type");
    PD_EXPECT_ERROR(pd_tensor_cast(&out, NULL, PD_INT8), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_cast: src is NULL");
    PD_EXPECT_ERROR(pd_tensor_cast(&out, &undefined, PD_INT8), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_cast: src is an undefined tensor");
    PD_EXPECT_ERROR(pd_tensor_cast(NULL, &src, PD_INT8), PD_ERR_INVALID_ARGUMENT,
                    "pd_tensor_cast: out is NULL");
    pd_tensor gpu = src;
    gpu.place = pd_place_gpu(0);
    PD_EXPECT_ERROR(pd_tensor_cast(&out, &gpu, PD_INT8), PD_ERR_UNAVAILABLE,
                    "pd_tensor_cast: place gpu:0 needs CUDA");
    PD_EXPECT_EQ(pd_tensor_use_count(&src), 1);
    pd_tensor_release(&src);
}

PD_TEST(Cast, FailedCastWritesNothing)
{
    pd_tensor src, out;
    const int64_t n = 2;
    PD_ASSERT_OK(pd_tensor_zeros(&src, PD_INT32, CPU, 1, &n));
    memset(&out, 0x5a, sizeof out);
    pd_tensor before = out;
    PD_EXPECT_ERROR(pd_tensor_cast(&out, &src, PD_NUM_DTYPES), PD_ERR_INVALID_ARGUMENT, "dtype 16");
    PD_EXPECT(memcmp(&out, &before, sizeof out) == 0);
    pd_tensor_release(&src);
}
