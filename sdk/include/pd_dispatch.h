/*
 * pd_dispatch.h - Paddle's seven PD_DISPATCH_* macros: run a block once per supported dtype
 * with `data_t` bound to that dtype's C type.
 *
 *     PD_DISPATCH_FLOATING_TYPES(pd_dtype(x), "relu_forward", {
 *         const data_t *in = (const data_t *)pd_data(x);
 *         ...
 *     });
 *
 * The block is a statement list (commas are fine). A dtype outside the list ends the op call
 * with: function <name> is not implemented for data type `<dtype>`; it takes <the list>
 * (the runner prefixes the op's name and adds which input has that dtype).
 * They work in C, C++ and CUDA host code. float16 / bfloat16 / complex elements are the
 * structs of pd_dtype.h.
 */
#ifndef PD_DISPATCH_H
#define PD_DISPATCH_H

#include "pd_api.h"
#include "pd_dtype.h"

#define PD__CASE(enum_value, c_type, ...) \
    case enum_value: {                    \
        typedef c_type data_t;            \
        __VA_ARGS__                       \
    } break;

#define PD__DISPATCH_DEFAULT(dtype, name, accepted)                                       \
    default:                                                                              \
        PD_THROW("function %s is not implemented for data type `%s`; it takes " accepted, \
                 (const char *)(name), pd_dtype_name(dtype));

/* The case lists, one dtype per line (clang-format reflows these lists differently on each
 * pass, so they are kept as written). */
/* clang-format off */
#define PD__FLOATING_CASES(...) \
    PD__CASE(PD_FLOAT32, float, __VA_ARGS__) PD__CASE(PD_FLOAT64, double, __VA_ARGS__)
#define PD__HALF_CASES(...) \
    PD__CASE(PD_FLOAT16, pd_float16, __VA_ARGS__) PD__CASE(PD_BFLOAT16, pd_bfloat16, __VA_ARGS__)
#define PD__INTEGRAL_CASES(...)                                                              \
    PD__CASE(PD_INT32, int32_t, __VA_ARGS__) PD__CASE(PD_INT64, int64_t, __VA_ARGS__)        \
    PD__CASE(PD_INT8, int8_t, __VA_ARGS__) PD__CASE(PD_UINT8, uint8_t, __VA_ARGS__)          \
    PD__CASE(PD_INT16, int16_t, __VA_ARGS__)
#define PD__COMPLEX_CASES(...) \
    PD__CASE(PD_COMPLEX64, pd_complex64, __VA_ARGS__) PD__CASE(PD_COMPLEX128, pd_complex128, __VA_ARGS__)
/* clang-format on */

#define PD__DISPATCH(dtype, name, accepted, cases)                        \
    do {                                                                  \
        pd_data_type pd__dispatch_type = (dtype);                         \
        switch (pd__dispatch_type) {                                      \
            cases PD__DISPATCH_DEFAULT(pd__dispatch_type, name, accepted) \
        }                                                                 \
    } while (0)

#define PD__FLOATING_NAMES "float32, float64"
#define PD__HALF_NAMES ", float16, bfloat16"
#define PD__INTEGRAL_NAMES "int32, int64, int8, uint8, int16"
#define PD__COMPLEX_NAMES "complex64, complex128"

/* float32, float64 */
#define PD_DISPATCH_FLOATING_TYPES(dtype, name, ...) \
    PD__DISPATCH(dtype, name, PD__FLOATING_NAMES, PD__FLOATING_CASES(__VA_ARGS__))
/* float32, float64, float16, bfloat16 */
#define PD_DISPATCH_FLOATING_AND_HALF_TYPES(dtype, name, ...)    \
    PD__DISPATCH(dtype, name, PD__FLOATING_NAMES PD__HALF_NAMES, \
                 PD__FLOATING_CASES(__VA_ARGS__) PD__HALF_CASES(__VA_ARGS__))
/* int32, int64, int8, uint8, int16 (Paddle's integral list) */
#define PD_DISPATCH_INTEGRAL_TYPES(dtype, name, ...) \
    PD__DISPATCH(dtype, name, PD__INTEGRAL_NAMES, PD__INTEGRAL_CASES(__VA_ARGS__))
/* complex64, complex128 */
#define PD_DISPATCH_COMPLEX_TYPES(dtype, name, ...) \
    PD__DISPATCH(dtype, name, PD__COMPLEX_NAMES, PD__COMPLEX_CASES(__VA_ARGS__))
/* float32, float64 and the integral list */
#define PD_DISPATCH_FLOATING_AND_INTEGRAL_TYPES(dtype, name, ...)         \
    PD__DISPATCH(dtype, name, PD__FLOATING_NAMES ", " PD__INTEGRAL_NAMES, \
                 PD__FLOATING_CASES(__VA_ARGS__) PD__INTEGRAL_CASES(__VA_ARGS__))
/* float32, float64, complex64, complex128 */
#define PD_DISPATCH_FLOATING_AND_COMPLEX_TYPES(dtype, name, ...)         \
    PD__DISPATCH(dtype, name, PD__FLOATING_NAMES ", " PD__COMPLEX_NAMES, \
                 PD__FLOATING_CASES(__VA_ARGS__) PD__COMPLEX_CASES(__VA_ARGS__))
/* float32, float64, the integral list, complex64, complex128 */
#define PD_DISPATCH_FLOATING_AND_INTEGRAL_AND_COMPLEX_TYPES(dtype, name, ...)                    \
    PD__DISPATCH(dtype, name, PD__FLOATING_NAMES ", " PD__INTEGRAL_NAMES ", " PD__COMPLEX_NAMES, \
                 PD__FLOATING_CASES(__VA_ARGS__) PD__INTEGRAL_CASES(__VA_ARGS__)                 \
                     PD__COMPLEX_CASES(__VA_ARGS__))

#endif /* PD_DISPATCH_H */
