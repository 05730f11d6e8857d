/*
 * pd_math.h - tensor functions op code composes through its context: elementwise arithmetic,
 * bitwise operators and comparisons with numpy broadcasting (tensor-tensor and
 * tensor-scalar), matmul, sum and fill. Views (pd_transpose, pd_permute, pd_expand) and
 * pd_cast are in pd_api.h.
 *
 *     pd_tensor *y = pd_add(ctx, pd_matmul(ctx, x, w), bias);   // x @ w + bias, bias [n]
 *     pd_tensor *g = pd_sum(ctx, grad, 0, false);               // column sums
 *
 * Every function makes a new dense tensor that belongs to the call (as pd_empty does); its
 * operands may be any layout (strided views are read through their strides). Both operands
 * of a binary function must have one dtype: cast one first (pd_cast). The functions compute
 * in host memory: an operand on a device ends the call with PD_ERR_UNAVAILABLE. Bad input
 * (shapes that do not broadcast, a dtype an operator has no meaning for, an axis out of
 * range, integer division by zero) ends the call with a message naming the function.
 *
 * Integer arithmetic wraps modulo 2^bits; integer division truncates toward zero. On bool,
 * + is or, * is and, - is xor, and / is refused. Halves compute in float. Complex numbers
 * take + - * / == != only. maximum / minimum propagate NaN.
 *
 * Needs a runtime of ABI 2.2 or newer (PD_API_HAS(api, binary) tells).
 */
#ifndef PD_MATH_H
#define PD_MATH_H

#include "pd_api.h"

PD_EXTERN_C_BEGIN

/* The binary functions (pd_binary's `op`). Values are part of the ABI. */
typedef enum pd_binary_op {
    PD_BINARY_ADD = 1,
    PD_BINARY_SUBTRACT = 2,
    PD_BINARY_MULTIPLY = 3,
    PD_BINARY_DIVIDE = 4,
    PD_BINARY_MAXIMUM = 5,
    PD_BINARY_MINIMUM = 6,
    PD_BINARY_BITWISE_AND = 7, /* integers and bool */
    PD_BINARY_BITWISE_OR = 8,
    PD_BINARY_BITWISE_XOR = 9,
    PD_BINARY_LESS_THAN = 10, /* comparisons: the result is bool */
    PD_BINARY_LESS_EQUAL = 11,
    PD_BINARY_EQUAL = 12,
    PD_BINARY_NOT_EQUAL = 13,
    PD_BINARY_GREATER_THAN = 14,
    PD_BINARY_GREATER_EQUAL = 15
} pd_binary_op;

/* pd_sum's `axis` for a sum over every axis. */
#define PD_ALL_AXES INT32_MIN

/* op(a, b) elementwise over the broadcast shape of a and b (numpy's rules). */
static inline pd_tensor *pd_binary(pd_kernel_ctx *ctx, pd_binary_op op, const pd_tensor *a,
                                   const pd_tensor *b)
{
    return PD__CALL(ctx, binary(ctx, (int32_t)op, a, b));
}
/* op(a, value), or op(value, a) when scalar_first; value is converted to a's dtype first. */
static inline pd_tensor *pd_binary_scalar(pd_kernel_ctx *ctx, pd_binary_op op, const pd_tensor *a,
                                          double value, bool scalar_first)
{
    return PD__CALL(ctx, binary_scalar(ctx, (int32_t)op, a, value, scalar_first));
}

#define PD__MATH_BINARY(name, op)                                                                  \
    static inline pd_tensor *pd_##name(pd_kernel_ctx *ctx, const pd_tensor *a, const pd_tensor *b) \
    {                                                                                              \
        return PD__CALL(ctx, binary(ctx, (int32_t)(op), a, b));                                    \
    }                                                                                              \
    static inline pd_tensor *pd_##name##_scalar(pd_kernel_ctx *ctx, const pd_tensor *a,            \
                                                double value)                                      \
    {                                                                                              \
        return PD__CALL(ctx, binary_scalar(ctx, (int32_t)(op), a, value, false));                  \
    }
/* pd_add(ctx, a, b) = a + b, pd_add_scalar(ctx, a, v) = a + v; likewise for the others. */
PD__MATH_BINARY(add, PD_BINARY_ADD)
PD__MATH_BINARY(subtract, PD_BINARY_SUBTRACT)
PD__MATH_BINARY(multiply, PD_BINARY_MULTIPLY)
PD__MATH_BINARY(divide, PD_BINARY_DIVIDE)
PD__MATH_BINARY(maximum, PD_BINARY_MAXIMUM)
PD__MATH_BINARY(minimum, PD_BINARY_MINIMUM)
PD__MATH_BINARY(bitwise_and, PD_BINARY_BITWISE_AND)
PD__MATH_BINARY(bitwise_or, PD_BINARY_BITWISE_OR)
PD__MATH_BINARY(bitwise_xor, PD_BINARY_BITWISE_XOR)
PD__MATH_BINARY(less_than, PD_BINARY_LESS_THAN)
PD__MATH_BINARY(less_equal, PD_BINARY_LESS_EQUAL)
PD__MATH_BINARY(equal, PD_BINARY_EQUAL)
PD__MATH_BINARY(not_equal, PD_BINARY_NOT_EQUAL)
PD__MATH_BINARY(greater_than, PD_BINARY_GREATER_THAN)
PD__MATH_BINARY(greater_equal, PD_BINARY_GREATER_EQUAL)
#undef PD__MATH_BINARY

/* a @ b over the last two dims, batch dims broadcast (numpy's matmul): a 1-D a is a row,
 * a 1-D b a column, and their unit dim is dropped from the result. transpose_a / transpose_b
 * swap an operand's last two dims first (free: read through strides). */
static inline pd_tensor *pd_matmul_t(pd_kernel_ctx *ctx, const pd_tensor *a, const pd_tensor *b,
                                     bool transpose_a, bool transpose_b)
{
    return PD__CALL(ctx, matmul(ctx, a, b, transpose_a, transpose_b));
}
static inline pd_tensor *pd_matmul(pd_kernel_ctx *ctx, const pd_tensor *a, const pd_tensor *b)
{
    return PD__CALL(ctx, matmul(ctx, a, b, false, false));
}

/* The sum over `naxes` axes (negative ones count from the end; naxes 0: every axis), the
 * summed axes kept as 1s with keepdim. The result has `dtype`, or with PD_UNDEFINED x's
 * dtype (int64 for bool and int32, as Paddle). Integers accumulate in 64 bits, reals in
 * double. */
static inline pd_tensor *pd_sum_axes(pd_kernel_ctx *ctx, const pd_tensor *x, int32_t naxes,
                                     const int64_t *axes, bool keepdim, pd_data_type dtype)
{
    return PD__CALL(ctx, sum(ctx, x, naxes, axes, keepdim, dtype));
}
/* The sum over one axis, or over all with PD_ALL_AXES. */
static inline pd_tensor *pd_sum(pd_kernel_ctx *ctx, const pd_tensor *x, int32_t axis, bool keepdim)
{
    int64_t ax = axis;
    return PD__CALL(ctx, sum(ctx, x, axis == PD_ALL_AXES ? 0 : 1, &ax, keepdim, PD_UNDEFINED));
}

/* Sets every element of t (any layout, host memory) to value converted to t's dtype. */
static inline void pd_fill(pd_kernel_ctx *ctx, pd_tensor *t, double value)
{
    PD__CALL_VOID(ctx, fill(ctx, t, value));
}

PD_EXTERN_C_END

#endif /* PD_MATH_H */
