// pd_test_main.cc - main() for every test program: registers the C test cases found in the
// "pd_tests" section as GoogleTest tests, then runs all tests (C and C++ alike).
#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <set>
#include <string>

#include "pd_test.h"

extern "C" {
#ifdef PD_TEST_ASAN_OPTIONS
// The ASan run's options (PDEXT_ASAN_OPTIONS, CMakeLists.txt) as this program's defaults, so
// that a ctest run by hand in an ASan build has them too; ASAN_OPTIONS still sets each.
__attribute__((visibility("default"), used)) const char *__asan_default_options()
{
    return PD_TEST_ASAN_OPTIONS;
}
#endif

extern const pd_test_case *const __start_pd_tests[] __attribute__((weak, visibility("hidden")));
extern const pd_test_case *const __stop_pd_tests[] __attribute__((weak, visibility("hidden")));

void pd_test_fail(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char buf[8192];
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    ADD_FAILURE_AT(file, line) << buf;
}

bool pd_test_contains(const char *haystack, const char *needle)
{
    return haystack && needle && std::strstr(haystack, needle) != nullptr;
}

const char *pd_test_path(const char *relative)
{
    static std::mutex lock;
    static std::set<std::string> interned;
    std::lock_guard<std::mutex> guard(lock);
    return interned.insert(std::string(PD_TEST_BINARY_DIR) + "/" + relative).first->c_str();
}

double pd_test_uniform(double lo, double hi)
{
    static std::mt19937_64 gen(20261122);
    static std::mutex lock;
    std::lock_guard<std::mutex> guard(lock);
    return std::uniform_real_distribution<double>(lo, hi)(gen);
}
}

namespace {
class CTest : public testing::Test {
public:
    explicit CTest(pd_test_fn fn) : fn_(fn) {}
    void TestBody() override { fn_(); }

private:
    pd_test_fn fn_;
};
} // namespace

int main(int argc, char **argv)
{
    /* The JIT's background job that precompiles paddle/extension.h outlives the build that
     * starts it, writing into that build's cache: a test that removes its temporary cache
     * when it ends would race it (ExamplesCheck.PaddleRelu did). Tests of the job itself
     * (paddle_jit_test.c) turn it back on. */
    setenv("PDEXT_JIT_PCH", "0", 1);
    for (const pd_test_case *const *p = __start_pd_tests; p && p < __stop_pd_tests; ++p) {
        const pd_test_case *tc = *p;
        testing::RegisterTest(tc->suite, tc->name, nullptr, nullptr, tc->file, tc->line,
                              [tc]() -> testing::Test * { return new CTest(tc->fn); });
    }
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
