/*
 * ms_extension/api.h - the MindSpore CustomOpBuilder front: sources written against
 * MindSpore's `ms_extension/api.h` (a PyboostRunner subclass with CalcWorkspace and
 * LaunchKernel, ms::Tensor, PyboostRunner::Call<N>, PYBIND11_MODULE(MS_EXTENSION_NAME, m))
 * compile unchanged against pdext and run through pdext's executor, without MindSpore.
 * pdext.CustomOpBuilder(name, sources, backend="CPU").load() builds and imports them.
 *
 *   ms_extension/bridge.h   the table pdext's Python extension lends the module
 *   ms_extension/type_id.h  mindspore::TypeId / ms::TypeId and the map to pdext dtypes
 *   ms_extension/tensor.h   ms::Tensor, ms::tensor, ms::ones, ms::zeros
 *   ms_extension/tensor_ops.h  index_select, repeat, repeat_interleave, AssignTensor
 *   ms_extension/runner.h   ms::pynative::PyboostRunner over pdext's executor
 *   ms_extension/python.h   the ms::Tensor type caster and PyboostRunner::Call<N>
 *
 * What a source may rely on (MindSpore's header makes it visible): pybind11 with its STL
 * conversions, the alias `py`, ShapeVector / ShapeValueDType / ShapeArray, and the standard
 * headers below. Ascend-only parts (CUSTOM_ASCEND_OP, CUSTOM_ENABLE_ATB) and MindSpore's
 * autograd Function are not provided. C++17 or later, with exceptions; the module links
 * libpdext (pdext.CustomOpBuilder passes -lpdext).
 */
#ifndef PDEXT_MS_EXTENSION_API_H
#define PDEXT_MS_EXTENSION_API_H

#if !defined(__cplusplus) || __cplusplus < 201703L
#error "ms_extension/api.h is MindSpore's C++ custom-op API and needs C++17 or later"
#endif
#if !defined(__cpp_exceptions) && !defined(__EXCEPTIONS)
#error \
    "ms_extension/api.h needs C++ exceptions (errors travel as exceptions); remove -fno-exceptions"
#endif
#if defined(CUSTOM_ASCEND_OP) || defined(CUSTOM_ENABLE_ATB)
#error \
    "pdext's ms_extension does not support the Ascend-only API (CUSTOM_ASCEND_OP / CUSTOM_ENABLE_ATB: aclnn and ATB runners); build with backend=\"CPU\""
#endif
#if defined(PDEXT_PADDLE_EXTENSION_H)
#error "ms_extension/api.h and paddle/extension.h cannot be included in one translation unit"
#endif

/* pybind11 first: it includes Python.h, which must come before the standard headers. */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

/* The C core: the host API (libpdext) and the op-module entry the runner's ops use. */
#include "../extension.h"
#include "../pdext.h"
#include "../pdext_executor.h"
#include "bridge.h"

namespace py = pybind11;

using ShapeValueDType = int64_t;
using ShapeVector = std::vector<ShapeValueDType>;
using ShapeArray = std::vector<ShapeVector>;

// clang-format off
#include "type_id.h"
#include "tensor.h"
#include "tensor_ops.h"
#include "runner.h"
#include "python.h"
// clang-format on

#endif /* PDEXT_MS_EXTENSION_API_H */
