/* dtype_test.c - data types: sizes, names, parsing, categories, the float16 / bfloat16
 * conversions (against bit patterns known from IEEE 754 and the bfloat16 definition, not
 * recomputed here) and the complex layout. */
#include "pd_test.h"

#include <complex.h>
#include <math.h>
#include <stddef.h>

static const struct {
    pd_data_type type;
    const char *name;
    size_t size;
} all_types[15] = {
    {PD_BOOL, "bool", 1},       {PD_INT8, "int8", 1},           {PD_UINT8, "uint8", 1},
    {PD_INT16, "int16", 2},     {PD_UINT16, "uint16", 2},       {PD_INT32, "int32", 4},
    {PD_UINT32, "uint32", 4},   {PD_INT64, "int64", 8},         {PD_UINT64, "uint64", 8},
    {PD_FLOAT16, "float16", 2}, {PD_BFLOAT16, "bfloat16", 2},   {PD_FLOAT32, "float32", 4},
    {PD_FLOAT64, "float64", 8}, {PD_COMPLEX64, "complex64", 8}, {PD_COMPLEX128, "complex128", 16},
};

static uint16_t f16(float f) { return pd_float16_from_float(f).bits; }
static uint16_t bf16(float f) { return pd_bfloat16_from_float(f).bits; }
static float f16_value(uint16_t bits)
{
    pd_float16 h = {bits};
    return pd_float16_to_float(h);
}
static float bf16_value(uint16_t bits)
{
    pd_bfloat16 b = {bits};
    return pd_bfloat16_to_float(b);
}
static float float_of_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static bool f16_is_nan(uint16_t bits)
{
    return (bits & 0x7c00u) == 0x7c00u && (bits & 0x3ffu) != 0;
}

/* --- Sizes, names, parsing -------------------------------------------------------------------- */

PD_TEST(Dtype, EveryTypeHasItsElementSize)
{
    for (int i = 0; i < 15; ++i)
        PD_EXPECT_EQ(pd_dtype_size(all_types[i].type), all_types[i].size);
    PD_EXPECT_EQ(pd_dtype_size(PD_UNDEFINED), 0);
    PD_EXPECT_EQ(pd_dtype_size(PD_NUM_DTYPES), 0);
    PD_EXPECT_EQ(pd_dtype_size((pd_data_type)-1), 0);
}

PD_TEST(Dtype, SizesMatchTheElementStructs)
{
    PD_EXPECT_EQ(pd_dtype_size(PD_FLOAT16), sizeof(pd_float16));
    PD_EXPECT_EQ(pd_dtype_size(PD_BFLOAT16), sizeof(pd_bfloat16));
    PD_EXPECT_EQ(pd_dtype_size(PD_COMPLEX64), sizeof(pd_complex64));
    PD_EXPECT_EQ(pd_dtype_size(PD_COMPLEX128), sizeof(pd_complex128));
    PD_EXPECT_EQ(pd_dtype_size(PD_BOOL), sizeof(bool));
}

PD_TEST(Dtype, EveryTypeHasItsCanonicalName)
{
    for (int i = 0; i < 15; ++i)
        PD_EXPECT_STREQ(pd_dtype_name(all_types[i].type), all_types[i].name);
}

PD_TEST(Dtype, UndefinedAndOutOfRangeValuesAreNamedUndefined)
{
    PD_EXPECT_STREQ(pd_dtype_name(PD_UNDEFINED), "undefined");
    PD_EXPECT_STREQ(pd_dtype_name(PD_NUM_DTYPES), "undefined");
    PD_EXPECT_STREQ(pd_dtype_name((pd_data_type)1000), "undefined");
    PD_EXPECT_STREQ(pd_dtype_name((pd_data_type)-3), "undefined");
}

PD_TEST(Dtype, ParsesEveryCanonicalName)
{
    for (int i = 0; i < 15; ++i)
        PD_EXPECT_EQ(pd_dtype_from_name(all_types[i].name), all_types[i].type);
}

PD_TEST(Dtype, ParsesNumpyAndCAliases)
{
    PD_EXPECT_EQ(pd_dtype_from_name("float"), PD_FLOAT32);
    PD_EXPECT_EQ(pd_dtype_from_name("double"), PD_FLOAT64);
    PD_EXPECT_EQ(pd_dtype_from_name("half"), PD_FLOAT16);
    PD_EXPECT_EQ(pd_dtype_from_name("fp16"), PD_FLOAT16);
    PD_EXPECT_EQ(pd_dtype_from_name("bf16"), PD_BFLOAT16);
    PD_EXPECT_EQ(pd_dtype_from_name("fp32"), PD_FLOAT32);
    PD_EXPECT_EQ(pd_dtype_from_name("fp64"), PD_FLOAT64);
    PD_EXPECT_EQ(pd_dtype_from_name("int"), PD_INT32);
    PD_EXPECT_EQ(pd_dtype_from_name("long"), PD_INT64);
    PD_EXPECT_EQ(pd_dtype_from_name("complex"), PD_COMPLEX64);
}

PD_TEST(Dtype, UnknownNamesAreUndefined)
{
    PD_EXPECT_EQ(pd_dtype_from_name(NULL), PD_UNDEFINED);
    PD_EXPECT_EQ(pd_dtype_from_name(""), PD_UNDEFINED);
    PD_EXPECT_EQ(pd_dtype_from_name("undefined"), PD_UNDEFINED);
    PD_EXPECT_EQ(pd_dtype_from_name("Float32"), PD_UNDEFINED);
    PD_EXPECT_EQ(pd_dtype_from_name("float32 "), PD_UNDEFINED);
    PD_EXPECT_EQ(pd_dtype_from_name("int128"), PD_UNDEFINED);
}

PD_TEST(Dtype, CategoriesFollowPaddlesLists)
{
    for (int i = 0; i < 15; ++i) {
        pd_data_type t = all_types[i].type;
        bool floating = t == PD_FLOAT16 || t == PD_BFLOAT16 || t == PD_FLOAT32 || t == PD_FLOAT64;
        bool complex_ = t == PD_COMPLEX64 || t == PD_COMPLEX128;
        bool integral = !floating && !complex_ && t != PD_BOOL;
        PD_EXPECT_EQ(pd_dtype_is_floating(t), floating);
        PD_EXPECT_EQ(pd_dtype_is_complex(t), complex_);
        PD_EXPECT_EQ(pd_dtype_is_integral(t), integral);
    }
    PD_EXPECT(!pd_dtype_is_floating(PD_UNDEFINED));
    PD_EXPECT(!pd_dtype_is_integral(PD_UNDEFINED));
}

/* --- float16 ------------------------------------------------------------------------------ */

PD_TEST(Float16, EncodesExactValuesToTheirIeeeBitPatterns)
{
    PD_EXPECT_EQ(f16(1.0f), 0x3c00);
    PD_EXPECT_EQ(f16(-2.0f), 0xc000);
    PD_EXPECT_EQ(f16(0.5f), 0x3800);
    PD_EXPECT_EQ(f16(0.0f), 0x0000);
    PD_EXPECT_EQ(f16(-0.0f), 0x8000);
    PD_EXPECT_EQ(f16(65504.0f), 0x7bff);          /* largest finite half */
    PD_EXPECT_EQ(f16(ldexpf(1.0f, -14)), 0x0400); /* smallest normal */
    PD_EXPECT_EQ(f16(ldexpf(1.0f, -24)), 0x0001); /* smallest subnormal */
    PD_EXPECT_EQ(f16(-ldexpf(1.0f, -24)), 0x8001);
    PD_EXPECT_EQ(f16(ldexpf(1023.0f, -24)), 0x03ff); /* largest subnormal */
}

PD_TEST(Float16, RoundsInexactValuesToNearest)
{
    PD_EXPECT_EQ(f16(0.1f), 0x2e66);
    PD_EXPECT_EQ(f16(1.0f / 3.0f), 0x3555);
    PD_EXPECT_EQ(f16(3.14159265f), 0x4248);
    PD_EXPECT_EQ(f16(1.0f + ldexpf(1.0f, -11) + ldexpf(1.0f, -20)), 0x3c01); /* above half */
    PD_EXPECT_EQ(f16(1.0f + ldexpf(1.0f, -11) - ldexpf(1.0f, -20)), 0x3c00); /* below half */
}

PD_TEST(Float16, BreaksTiesToEven)
{
    PD_EXPECT_EQ(f16(1.0f + ldexpf(1.0f, -11)), 0x3c00); /* between 0x3c00 and 0x3c01 */
    PD_EXPECT_EQ(f16(1.0f + ldexpf(3.0f, -11)), 0x3c02); /* between 0x3c01 and 0x3c02 */
    PD_EXPECT_EQ(f16(ldexpf(0.5f, -24)), 0x0000);        /* half the smallest subnormal */
    PD_EXPECT_EQ(f16(ldexpf(1.5f, -24)), 0x0002);        /* subnormal tie, up to even */
    PD_EXPECT_EQ(f16(ldexpf(2.5f, -24)), 0x0002);        /* subnormal tie, down to even */
    PD_EXPECT_EQ(f16(2049.0f), 0x6800);                  /* 2048 + 1: tie, to 2048 */
    PD_EXPECT_EQ(f16(2051.0f), 0x6802);                  /* 2050 + 1: tie, to 2052 */
}

PD_TEST(Float16, OverflowsToInfinity)
{
    PD_EXPECT_EQ(f16(65519.0f), 0x7bff); /* below the midpoint to 65536 */
    PD_EXPECT_EQ(f16(65520.0f), 0x7c00); /* the midpoint rounds to even: infinity */
    PD_EXPECT_EQ(f16(1e6f), 0x7c00);
    PD_EXPECT_EQ(f16(-1e6f), 0xfc00);
    PD_EXPECT_EQ(f16(3.0e38f), 0x7c00);
}

PD_TEST(Float16, KeepsInfinitiesAndNaN)
{
    PD_EXPECT_EQ(f16(INFINITY), 0x7c00);
    PD_EXPECT_EQ(f16(-INFINITY), 0xfc00);
    PD_EXPECT(f16_is_nan(f16(NAN)));
    PD_EXPECT(f16_is_nan(f16(-NAN)));
    /* A NaN whose payload lives only in float's low mantissa bits must not become infinity. */
    PD_EXPECT(f16_is_nan(f16(float_of_bits(0x7f800001u))));
}

PD_TEST(Float16, DecodesBitPatternsExactly)
{
    PD_EXPECT_EQ(f16_value(0x3c00), 1.0f);
    PD_EXPECT_EQ(f16_value(0xc000), -2.0f);
    PD_EXPECT_EQ(f16_value(0x7bff), 65504.0f);
    PD_EXPECT(f16_value(0x0001) == ldexpf(1.0f, -24));
    PD_EXPECT(f16_value(0x03ff) == ldexpf(1023.0f, -24));
    PD_EXPECT(f16_value(0x0400) == ldexpf(1.0f, -14));
    PD_EXPECT(f16_value(0x3555) == 0.333251953125f);
    PD_EXPECT(f16_value(0x7c00) == INFINITY);
    PD_EXPECT(f16_value(0xfc00) == -INFINITY);
    PD_EXPECT(isnan(f16_value(0x7e00)));
    PD_EXPECT(isnan(f16_value(0x7c01)));
    float negzero = f16_value(0x8000);
    PD_EXPECT(negzero == 0.0f && signbit(negzero));
}

PD_TEST(Float16, EveryNonNanHalfRoundTripsThroughFloat)
{
    for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
        if (f16_is_nan((uint16_t)bits))
            continue;
        uint16_t back = f16(f16_value((uint16_t)bits));
        if (back != bits) {
            PD_EXPECT_EQ(back, bits);
            return;
        }
    }
}

/* --- bfloat16 ------------------------------------------------------------------------------- */

PD_TEST(BFloat16, EncodesExactValuesAsTheUpperHalfOfAFloat)
{
    PD_EXPECT_EQ(bf16(1.0f), 0x3f80);
    PD_EXPECT_EQ(bf16(-2.0f), 0xc000);
    PD_EXPECT_EQ(bf16(0.0f), 0x0000);
    PD_EXPECT_EQ(bf16(-0.0f), 0x8000);
    PD_EXPECT_EQ(bf16(3.140625f), 0x4049);
    PD_EXPECT_EQ(bf16(INFINITY), 0x7f80);
    PD_EXPECT_EQ(bf16(-INFINITY), 0xff80);
}

PD_TEST(BFloat16, RoundsToNearestBreakingTiesToEven)
{
    PD_EXPECT_EQ(bf16(float_of_bits(0x3f808000u)), 0x3f80); /* tie, down to even */
    PD_EXPECT_EQ(bf16(float_of_bits(0x3f818000u)), 0x3f82); /* tie, up to even */
    PD_EXPECT_EQ(bf16(float_of_bits(0x3f808001u)), 0x3f81); /* above half */
    PD_EXPECT_EQ(bf16(float_of_bits(0x3f807fffu)), 0x3f80); /* below half */
    PD_EXPECT_EQ(bf16(3.14159265f), 0x4049);
    PD_EXPECT_EQ(bf16(float_of_bits(0x7f7fffffu)), 0x7f80); /* largest float rounds to inf */
}

PD_TEST(BFloat16, KeepsNaNANaN)
{
    uint16_t b = bf16(NAN);
    PD_EXPECT((b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0);
    b = bf16(float_of_bits(0x7f800001u)); /* payload only in the dropped half */
    PD_EXPECT((b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0);
}

PD_TEST(BFloat16, DecodesByWideningExactly)
{
    PD_EXPECT_EQ(bf16_value(0x3f80), 1.0f);
    PD_EXPECT_EQ(bf16_value(0xc000), -2.0f);
    PD_EXPECT(bf16_value(0x4049) == 3.140625f);
    PD_EXPECT(bf16_value(0x7f80) == INFINITY);
    PD_EXPECT(isnan(bf16_value(0x7fc0)));
}

/* --- complex ------------------------------------------------------------------------------- */

PD_TEST(Complex, IsInterleavedRealThenImaginary)
{
    PD_EXPECT_EQ(sizeof(pd_complex64), 2 * sizeof(float));
    PD_EXPECT_EQ(offsetof(pd_complex64, re), 0);
    PD_EXPECT_EQ(offsetof(pd_complex64, im), sizeof(float));
    PD_EXPECT_EQ(sizeof(pd_complex128), 2 * sizeof(double));
    PD_EXPECT_EQ(offsetof(pd_complex128, re), 0);
    PD_EXPECT_EQ(offsetof(pd_complex128, im), sizeof(double));
    PD_EXPECT_EQ(_Alignof(pd_complex64), _Alignof(float));
    PD_EXPECT_EQ(_Alignof(pd_complex128), _Alignof(double));
}

PD_TEST(Complex, SharesTheLayoutOfC99Complex)
{
    float complex zf = 1.5f - 2.0f * I;
    double complex zd = -3.25 + 4.0 * I;
    pd_complex64 a;
    pd_complex128 b;
    PD_ASSERT_EQ(sizeof a, sizeof zf);
    PD_ASSERT_EQ(sizeof b, sizeof zd);
    memcpy(&a, &zf, sizeof a);
    memcpy(&b, &zd, sizeof b);
    PD_EXPECT(a.re == 1.5f && a.im == -2.0f);
    PD_EXPECT(b.re == -3.25 && b.im == 4.0);
}
