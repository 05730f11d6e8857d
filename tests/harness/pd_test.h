/*
 * pd_test.h - a small C harness over GoogleTest: C test functions registered as gtest cases.
 *
 *     PD_TEST(Tensor, FullFillsEveryElement) {
 *         pd_tensor t;
 *         PD_ASSERT_OK(pd_tensor_full(&t, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){4}, 2.5));
 *         PD_EXPECT_NEAR(((float *)t.data)[3], 2.5, 0);
 *         pd_tensor_release(&t);
 *     }
 *
 * Like the op tables, test cases are const data in an ELF section ("pd_tests"); the harness's
 * main() registers each with gtest before running. EXPECT_* records a failure and goes on;
 * ASSERT_* records it and returns from the test function.
 */
#ifndef PD_TEST_H
#define PD_TEST_H

#include <stdbool.h>
#include <stdint.h>

#include <string.h>

#include "pdext.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef void (*pd_test_fn)(void);

typedef struct pd_test_case {
    const char *suite;
    const char *name;
    const char *file;
    int line;
    pd_test_fn fn;
} pd_test_case;

/* Records a failure at file:line with a formatted message (fatal only changes the wording:
 * the macros return themselves). */
void pd_test_fail(const char *file, int line, const char *fmt, ...) PD_PRINTF(3, 4);
/* true if `needle` occurs in `haystack` (NULLs never match). */
bool pd_test_contains(const char *haystack, const char *needle);
/* Absolute path of a file built next to the tests (see tests/CMakeLists.txt): modules,
 * sources. Returns a static buffer per call site is not needed: the string is interned. */
const char *pd_test_path(const char *relative);
/* A uniform random double in [lo, hi) from a fixed-seed generator (reproducible runs). */
double pd_test_uniform(double lo, double hi);

#define PD_TEST(suite, name)                                                                      \
    static void pd_test_##suite##_##name(void);                                                   \
    static const pd_test_case pd_test_case_##suite##_##name = {#suite, #name, __FILE__, __LINE__, \
                                                               pd_test_##suite##_##name};         \
    __attribute__((section("pd_tests"), used, aligned(sizeof(void *)))) static const pd_test_case \
        *const pd_test_ptr_##suite##_##name = &pd_test_case_##suite##_##name;                     \
    static void pd_test_##suite##_##name(void)

#define PD__TEST_CHECK(on_fail, cond, ...)                 \
    do {                                                   \
        if (!(cond)) {                                     \
            pd_test_fail(__FILE__, __LINE__, __VA_ARGS__); \
            on_fail;                                       \
        }                                                  \
    } while (0)

#define PD_EXPECT(cond) PD__TEST_CHECK((void)0, cond, "expected: %s", #cond)
#define PD_ASSERT(cond) PD__TEST_CHECK(return, cond, "expected: %s", #cond)

#define PD__TEST_INT(on_fail, a, b, op)                                                         \
    do {                                                                                        \
        long long pd__a = (long long)(a), pd__b = (long long)(b);                               \
        PD__TEST_CHECK(on_fail, pd__a op pd__b, "expected %s " #op " %s, got %lld vs %lld", #a, \
                       #b, pd__a, pd__b);                                                       \
    } while (0)
#define PD_EXPECT_EQ(a, b) PD__TEST_INT((void)0, a, b, ==)
#define PD_ASSERT_EQ(a, b) PD__TEST_INT(return, a, b, ==)
#define PD_EXPECT_NE(a, b) PD__TEST_INT((void)0, a, b, !=)

#define PD__TEST_NEAR(on_fail, a, b, tol)                                                       \
    do {                                                                                        \
        double pd__a = (double)(a), pd__b = (double)(b), pd__d = pd__a - pd__b;                 \
        PD__TEST_CHECK(on_fail, (pd__d < 0 ? -pd__d : pd__d) <= (double)(tol),                  \
                       "expected %s ~= %s (tol %g), got %.17g vs %.17g", #a, #b, (double)(tol), \
                       pd__a, pd__b);                                                           \
    } while (0)
#define PD_EXPECT_NEAR(a, b, tol) PD__TEST_NEAR((void)0, a, b, tol)
#define PD_ASSERT_NEAR(a, b, tol) PD__TEST_NEAR(return, a, b, tol)

#define PD__TEST_STREQ(on_fail, a, b)                                       \
    do {                                                                    \
        const char *pd__a = (a), *pd__b = (b);                              \
        PD__TEST_CHECK(on_fail, pd__a &&pd__b &&strcmp(pd__a, pd__b) == 0,  \
                       "expected %s == %s, got \"%s\" vs \"%s\"", #a, #b,   \
                       pd__a ? pd__a : "(null)", pd__b ? pd__b : "(null)"); \
    } while (0)
#define PD_EXPECT_STREQ(a, b) PD__TEST_STREQ((void)0, a, b)
#define PD_ASSERT_STREQ(a, b) PD__TEST_STREQ(return, a, b)

/* The message contains `needle`. */
#define PD_EXPECT_CONTAINS(haystack, needle)                                                \
    PD__TEST_CHECK((void)0, pd_test_contains(haystack, needle),                             \
                   "expected \"%s\" to contain \"%s\"", (haystack) ? (haystack) : "(null)", \
                   needle)

/* The pdext call returns PD_OK; otherwise the failure shows pd_last_error(). */
#define PD__TEST_OK(on_fail, expr)                                                                 \
    do {                                                                                           \
        pd_status pd__s = (expr);                                                                  \
        PD__TEST_CHECK(on_fail, pd__s == PD_OK, "%s failed: %s: %s", #expr, pd_status_name(pd__s), \
                       pd_last_error());                                                           \
    } while (0)
#define PD_EXPECT_OK(expr) PD__TEST_OK((void)0, expr)
#define PD_ASSERT_OK(expr) PD__TEST_OK(return, expr)

/* The pdext call fails with `status` and a message containing `needle`. */
#define PD_EXPECT_ERROR(expr, status, needle)                                             \
    do {                                                                                  \
        pd_status pd__s = (expr);                                                         \
        PD__TEST_CHECK((void)0, pd__s == (status), "%s: expected %s, got %s (%s)", #expr, \
                       pd_status_name(status), pd_status_name(pd__s), pd_last_error());   \
        if (pd__s != PD_OK)                                                               \
            PD_EXPECT_CONTAINS(pd_last_error(), needle);                                  \
    } while (0)

#ifdef __cplusplus
}
#endif

#endif /* PD_TEST_H */
