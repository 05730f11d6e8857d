/*
 * pd_base.h - versions, status codes and the portability macros every other pdext header uses.
 *
 * Part of the op author's single include (extension.h). Speaks C11, C++ and CUDA C++.
 *
 * Versioning. PD_VERSION_* is the SDK release. PD_ABI_MAJOR / PD_ABI_MINOR version the binary
 * contract between libpdext and op modules (the function table pd_api, pd_op_def,
 * pd_module_info, pd_tensor, pd_place, pd_attr):
 *   - a MINOR bump only appends: new members at the end of pd_api or pd_op_def, new enum
 *     values. A module built against minor m runs on any runtime of the same major and
 *     minor >= m; a runtime refuses a module that needs a newer minor than it provides.
 *   - a MAJOR bump means a layout changed; modules of another major are refused.
 */
#ifndef PD_BASE_H
#define PD_BASE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#define PD_VERSION_MAJOR 0
#define PD_VERSION_MINOR 2
#define PD_VERSION_PATCH 0
#define PD_VERSION_STRING "0.2.0"

/* ABI 2.0: strided tensors (pd_tensor.strides, offset, layout) and the 8-byte place (type +
 * device id; custom device types are registered numbers). Modules built against ABI 1.x must
 * be rebuilt; their sources compile unchanged (CHANGELOG.md lists the few exceptions).
 * ABI 2.1 appends pd_api.stream (pd_stream(ctx)). ABI 2.2 appends pd_api.workspace
 * (pd_workspace(ctx)), pd_op_def.workspace and the tensor functions (pd_math.h). ABI 2.3 appends
 * pd_api.paddle_op_check (pd_paddle_op.h). */
#define PD_ABI_MAJOR 2
#define PD_ABI_MINOR 3

#ifdef __cplusplus
#define PD_EXTERN_C_BEGIN extern "C" {
#define PD_EXTERN_C_END }
#else
#define PD_EXTERN_C_BEGIN
#define PD_EXTERN_C_END
#endif

/* Marks inline helpers that CUDA device code may call too. */
#if defined(__CUDACC__)
#define PD_HOST_DEVICE __host__ __device__
#else
#define PD_HOST_DEVICE
#endif

#define PD_NORETURN_ATTR __attribute__((noreturn))
#define PD_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#define PD_UNUSED __attribute__((unused))

/* A compile-time check at file scope, in C11, C++ and CUDA C++ alike. */
#ifdef __cplusplus
#define PD_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define PD_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#define PD__STR2(x) #x
#define PD__STR(x) PD__STR2(x)
#define PD__CAT2(a, b) a##b
#define PD__CAT(a, b) PD__CAT2(a, b)

/* The compiler that built a translation unit, recorded in each module's info block. */
#if defined(__clang__)
#define PD__COMPILER_ID "clang " __clang_version__
#elif defined(__GNUC__)
#define PD__COMPILER_ID \
    "gcc " PD__STR(__GNUC__) "." PD__STR(__GNUC_MINOR__) "." PD__STR(__GNUC_PATCHLEVEL__)
#else
#define PD__COMPILER_ID "unknown"
#endif

PD_EXTERN_C_BEGIN

/* Outcome of every host API call. PD_OK is 0; a failed call also leaves a message for
 * pd_last_error() on the calling thread. Values are part of the ABI and never renumbered. */
typedef enum pd_status {
    PD_OK = 0,
    PD_ERR_INVALID_ARGUMENT = 1, /* a caller's argument is wrong: the message names it */
    PD_ERR_NOT_FOUND = 2,        /* no such op, file, symbol or name */
    PD_ERR_ALREADY_EXISTS = 3,   /* an op name is registered already */
    PD_ERR_OUT_OF_MEMORY = 4,    /* an allocation failed */
    PD_ERR_UNAVAILABLE = 5,      /* a facility is missing here (CUDA, a compiler, ninja) */
    PD_ERR_ABI_MISMATCH = 6,     /* a module needs an ABI this runtime cannot serve */
    PD_ERR_OP_FAILED = 7,        /* PD_CHECK / PD_THROW inside an op ended the call */
    PD_ERR_IO = 8,               /* reading or writing a file failed */
    PD_ERR_BUILD = 9,            /* compiling or linking a module failed */
    PD_ERR_INVALID_MODULE = 10,  /* a library's op table or definitions are malformed */
    PD_ERR_INTERNAL = 11         /* a bug in pdext: please report it */
} pd_status;

PD_EXTERN_C_END

#endif /* PD_BASE_H */
