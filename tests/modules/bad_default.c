/*
 * bad_default.c - one op whose attr default is not a value of its declared type, chosen by a
 * BAD_* macro (decl.cmake builds one module per case): registration must refuse it.
 */
#include "extension.h"

static void kernel(pd_kernel_ctx *ctx) { (void)ctx; }

#if defined(BAD_INT64)
#define BAD_ATTR "axis: int64_t = abc"
#elif defined(BAD_INT_RANGE)
#define BAD_ATTR "axis: int = 3000000000"
#elif defined(BAD_BOOL)
#define BAD_ATTR "flag: bool = yes"
#elif defined(BAD_STRING)
#define BAD_ATTR "mode: std::string = sum"
#elif defined(BAD_VECTOR)
#define BAD_ATTR "dims: std::vector<int> = 1, 2"
#elif defined(BAD_ELEMENT)
#define BAD_ATTR "dims: std::vector<int64_t> = {1, x}"
#elif defined(BAD_FLOAT)
#define BAD_ATTR "scale: float = 1.5x"
#elif defined(BAD_STRINGS)
#define BAD_ATTR "tags: std::vector<std::string> = {\"a\", b}"
#endif

PD_BUILD_OP(td_bad, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {BAD_ATTR}, .kernel = kernel);
