/*
 * ms_extension/type_id.h - MindSpore's type enum (mindspore::TypeId, aliased ms::TypeId) with
 * its numbering, and the map between its number types and pdext's dtypes.
 *
 * The values follow MindSpore's declaration order (so a number a source stored or printed
 * means the same type here); only the number types have pdext dtypes. The width-less generic
 * names (kNumberTypeInt, UInt, Float, Double, Complex) and the 8-bit float formats have none
 * and are refused with a message naming them.
 */
#ifndef PDEXT_MS_EXTENSION_TYPE_ID_H
#define PDEXT_MS_EXTENSION_TYPE_ID_H

#include <stdexcept>
#include <string>

namespace mindspore {
enum TypeId : int {
    kTypeUnknown = 0,
    kMetaTypeBegin = kTypeUnknown,
    kMetaTypeType,
    kMetaTypeAny,
    kMetaTypeObject,
    kMetaTypeTypeType,
    kMetaTypeProblem,
    kMetaTypeExternal,
    kMetaTypeNone,
    kMetaTypeNull,
    kMetaTypeEllipsis,
    kMetaTypeEnd,
    kObjectTypeBegin = kMetaTypeEnd,
    kObjectTypeNumber,
    kObjectTypeString,
    kObjectTypeList,
    kObjectTypeTuple,
    kObjectTypeSlice,
    kObjectTypeKeyword,
    kObjectTypeTensorType,
    kObjectTypeRowTensorType,
    kObjectTypeCOOTensorType,
    kObjectTypeUndeterminedType,
    kObjectTypeClass,
    kObjectTypeDictionary,
    kObjectTypeFunction,
    kObjectTypeJTagged,
    kObjectTypeSymbolicKeyType,
    kObjectTypeEnvType,
    kObjectTypeRefKey,
    kObjectTypeRef,
    kObjectTypeEnd,
    kNumberTypeBegin = kObjectTypeEnd,
    kNumberTypeBool,
    kNumberTypeInt,
    kNumberTypeInt8,
    kNumberTypeInt16,
    kNumberTypeInt32,
    kNumberTypeInt64,
    kNumberTypeUInt,
    kNumberTypeUInt8,
    kNumberTypeUInt16,
    kNumberTypeUInt32,
    kNumberTypeUInt64,
    kNumberTypeFloat,
    kNumberTypeFloat16,
    kNumberTypeFloat32,
    kNumberTypeFloat64,
    kNumberTypeBFloat16,
    kNumberTypeFloat8E4M3FN,
    kNumberTypeFloat8E5M2,
    kNumberTypeHiFloat8,
    kNumberTypeDouble,
    kNumberTypeComplex,
    kNumberTypeComplex64,
    kNumberTypeComplex128,
    kNumberTypeInt4,
    kNumberTypeGLUInt,
    kNumberTypeEnd,
};
/* The values sources may have stored: a mismatch here would silently change types. */
static_assert(kNumberTypeBegin == 29 && kNumberTypeInt32 == 34 && kNumberTypeFloat32 == 43 &&
                  kNumberTypeBFloat16 == 45 && kNumberTypeComplex128 == 52 && kNumberTypeEnd == 55,
              "mindspore::TypeId must keep MindSpore's numbering");
} // namespace mindspore

namespace ms {
using TypeId = mindspore::TypeId;

namespace detail {

/* The pdext dtype of a MindSpore type; PD_UNDEFINED when pdext has none. */
inline pd_data_type to_pd_dtype(TypeId t)
{
    switch (t) {
    case TypeId::kNumberTypeBool: return PD_BOOL;
    case TypeId::kNumberTypeInt8: return PD_INT8;
    case TypeId::kNumberTypeInt16: return PD_INT16;
    case TypeId::kNumberTypeInt32: return PD_INT32;
    case TypeId::kNumberTypeInt64: return PD_INT64;
    case TypeId::kNumberTypeUInt8: return PD_UINT8;
    case TypeId::kNumberTypeUInt16: return PD_UINT16;
    case TypeId::kNumberTypeUInt32: return PD_UINT32;
    case TypeId::kNumberTypeUInt64: return PD_UINT64;
    case TypeId::kNumberTypeFloat16: return PD_FLOAT16;
    case TypeId::kNumberTypeFloat32: return PD_FLOAT32;
    case TypeId::kNumberTypeFloat64: return PD_FLOAT64;
    case TypeId::kNumberTypeBFloat16: return PD_BFLOAT16;
    case TypeId::kNumberTypeComplex64: return PD_COMPLEX64;
    case TypeId::kNumberTypeComplex128: return PD_COMPLEX128;
    default: return PD_UNDEFINED;
    }
}

/* The MindSpore type of a pdext dtype (kTypeUnknown for PD_UNDEFINED). */
inline TypeId from_pd_dtype(pd_data_type d)
{
    switch (d) {
    case PD_BOOL: return TypeId::kNumberTypeBool;
    case PD_INT8: return TypeId::kNumberTypeInt8;
    case PD_INT16: return TypeId::kNumberTypeInt16;
    case PD_INT32: return TypeId::kNumberTypeInt32;
    case PD_INT64: return TypeId::kNumberTypeInt64;
    case PD_UINT8: return TypeId::kNumberTypeUInt8;
    case PD_UINT16: return TypeId::kNumberTypeUInt16;
    case PD_UINT32: return TypeId::kNumberTypeUInt32;
    case PD_UINT64: return TypeId::kNumberTypeUInt64;
    case PD_FLOAT16: return TypeId::kNumberTypeFloat16;
    case PD_FLOAT32: return TypeId::kNumberTypeFloat32;
    case PD_FLOAT64: return TypeId::kNumberTypeFloat64;
    case PD_BFLOAT16: return TypeId::kNumberTypeBFloat16;
    case PD_COMPLEX64: return TypeId::kNumberTypeComplex64;
    case PD_COMPLEX128: return TypeId::kNumberTypeComplex128;
    default: return TypeId::kTypeUnknown;
    }
}

/* The pdext dtype of `t`, or std::invalid_argument naming `who` and the type number. */
inline pd_data_type require_dtype(TypeId t, const char *who)
{
    pd_data_type d = to_pd_dtype(t);
    if (d == PD_UNDEFINED)
        throw std::invalid_argument(
            std::string(who) + ": TypeId " + std::to_string(static_cast<int>(t)) +
            " has no pdext dtype (pdext's ms_extension takes the sized number types: "
            "kNumberTypeBool, Int8..Int64, UInt8..UInt64, Float16, Float32, Float64, "
            "BFloat16, Complex64, Complex128)");
    return d;
}

} // namespace detail
} // namespace ms

#endif /* PDEXT_MS_EXTENSION_TYPE_ID_H */
