/*
 * paddle/extension.h - the Paddle C++ front: PaddlePaddle custom-operator sources written
 * against `paddle/extension.h` compile unchanged against pdext.
 *
 * Everything maps onto pdext's C core (../extension.h): a PD_BUILD_OP builder fills a
 * pd_op_def placed in the same "pd_ops" section the loader reads, PD_KERNEL / PD_INFER_SHAPE /
 * PD_INFER_DTYPE make functions of pdext's one kernel signature out of Paddle's typed ones,
 * paddle::Tensor is a handle on a pd_tensor owned by the running call, and errors (PD_CHECK,
 * PD_THROW, any C++ exception) come back through the module's invoke hook as the op's status
 * and message. No second runner, no second registry. C++17 or later, with exceptions.
 *
 *   paddle/tensor.h      paddle::Tensor, DataType, Place, float16 / complex element types
 *   paddle/tensor_ops.h  empty, full, zeros, ones, arithmetic, matmul, sum, transpose, ...
 *   paddle/api_math.h    Paddle's API functions: exp, log, sqrt, tanh, pow, scale, clip,
 *                        mean, max, min, cumsum, ... (Scalar, IntArray)
 *   paddle/api_index.h   argsort, topk, gather, concat, stack, split, flatten, squeeze,
 *                        tile, flip, where, tril, one_hot, argmax, ...
 *   paddle/tensor_methods.h  x.exp(), x.add(y), x.sum({1}), ...: the functions as methods
 *   paddle/check.h       PD_CHECK, PD_THROW, PD_DISPATCH_* (Paddle's stream-style messages)
 *   paddle/enforce.h     PADDLE_ENFORCE_*, PADDLE_THROW, phi::errors / common::errors builders
 *   paddle/kernel.h      PD_KERNEL, PD_INFER_SHAPE, PD_INFER_DTYPE (kernel_params.h: how
 *                        they read parameters)
 *   paddle/op_builder.h  PD_BUILD_OP, PD_BUILD_GRAD_OP, PD_BUILD_DOUBLE_GRAD_OP, Grad, Vec, ...
 *
 * The C macros of the same names (PD_BUILD_OP, PD_CHECK, PD_THROW, PD_DISPATCH_*) keep their
 * C meaning in ../extension.h: the two headers do not meet in one translation unit.
 */
#ifndef PDEXT_PADDLE_EXTENSION_H
#define PDEXT_PADDLE_EXTENSION_H

#if !defined(__cplusplus) || __cplusplus < 201703L
#error \
    "paddle/extension.h is the Paddle C++ front and needs C++17 or later; C op code includes extension.h"
#endif
#if defined(PDEXT_EXTENSION_H)
#error \
    "paddle/extension.h and pdext's C extension.h cannot be included in one translation unit: their PD_BUILD_OP, PD_CHECK, PD_THROW and PD_DISPATCH_* macros have the same names (include one of them)"
#endif
#if !defined(__cpp_exceptions) && !defined(__EXCEPTIONS)
#error \
    "paddle/extension.h needs C++ exceptions (PD_CHECK and PD_THROW throw); remove -fno-exceptions"
#endif

/* The C core, with its module entry (pd__api, pdext_module_info, pd__cxx_invoke). */
#define PD__PADDLE_FRONT 1
#include "../extension.h"
#undef PD__PADDLE_FRONT

/* The C spellings give way to Paddle's. */
#undef PD_BUILD_OP
#undef PD_BUILD_GRAD_OP
#undef PD_BUILD_DOUBLE_GRAD_OP
#undef PD_CHECK
#undef PD_THROW
#undef PD_DISPATCH_FLOATING_TYPES
#undef PD_DISPATCH_FLOATING_AND_HALF_TYPES
#undef PD_DISPATCH_INTEGRAL_TYPES
#undef PD_DISPATCH_COMPLEX_TYPES
#undef PD_DISPATCH_FLOATING_AND_INTEGRAL_TYPES
#undef PD_DISPATCH_FLOATING_AND_COMPLEX_TYPES
#undef PD_DISPATCH_FLOATING_AND_INTEGRAL_AND_COMPLEX_TYPES

/* What Paddle's header makes visible and its users' sources rely on. */
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <numeric>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

/* In dependency order. */
// clang-format off
#include "tensor.h"
#include "check.h"
#include "enforce.h"
#include "tensor_ops.h"
#include "api_math.h"
#include "api_index.h"
#include "tensor_methods.h"
#include "kernel.h"
#include "op_builder.h"
// clang-format on

#endif /* PDEXT_PADDLE_EXTENSION_H */
