/*
 * custom_aot_extra.h - MindSpore's AOT custom-operator interface (AotExtra, AotKernelData),
 * as pdext provides it: a kernel written for MindSpore includes this header unchanged and runs
 * through pdext's MindSpore adapter (pdext_aot.h).
 *
 * ABI contract. A kernel compiles this header itself and calls its inline members, while the
 * object behind `AotExtra *` is built by the host (MindSpore, or pdext). Both sides must agree
 * on the class layout and the order of the virtual functions, exactly as written here:
 *   vtable: ~AotExtra (complete and deleting), HasAttr, GetAttrBool, GetAttrInt,
 *           GetAttrFloat, GetAttrStr, GetAttrIntVec, GetAttrFloatVec, GetAttrInt2DVec,
 *           GetAttrFloat2DVec;
 *   data:   the vtable pointer, std::vector<size_t> workspace_, AotKernelData *kernel_data_.
 * Do not reorder, add or remove members. Attr names cross the boundary as std::string, so the
 * host hands each library an AotExtra built with that library's libstdc++ string ABI
 * (_GLIBCXX_USE_CXX11_ABI); pdext detects it per library.
 *
 * The kernel functions themselves are plain extern "C" functions (see pdext_aot.h):
 *   int F(int nparam, void **params, int *ndims, int64_t **shapes, const char **dtypes,
 *         void *stream, void *extra);
 *   int FInit(int *ndims, int64_t **shapes, const char **dtypes, AotExtra *extra);
 *   std::vector<int64_t> FInferShape(int *ndims, int64_t **shapes, AotExtra *extra);
 *   TypeId FInferType(std::vector<TypeId> input_types, AotExtra *extra);
 *
 * C++ only (it is a C++ interface); with a C compiler the header is empty.
 */
#ifndef CUSTOM_AOT_EXTRA_H
#define CUSTOM_AOT_EXTRA_H

#ifdef __cplusplus

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

/* Data a kernel's Init attaches to its AotExtra (SetKernelData) and reads back in every call
 * (KernelData). The host destroys it through this virtual destructor when the op's state for
 * that input-shape signature is dropped. */
class AotKernelData {
public:
    AotKernelData() = default;
    virtual ~AotKernelData() = default;
};

/* What a kernel receives as `extra`: the op's attrs, its workspace request and kernel data. */
class AotExtra {
public:
    AotExtra() = default;
    virtual ~AotExtra() = default;
    /* True if the op was given an attr of this name. */
    virtual bool HasAttr(std::string name) = 0;

    /* The attr `name` read as T: bool, int64_t, float, std::string, std::vector<int64_t>,
     * std::vector<float>, std::vector<std::vector<int64_t>>, std::vector<std::vector<float>>
     * (specialised below). Numbers convert between int64_t, float and bool; lists of numbers
     * read as vectors of int64_t or float. A missing attr or one that cannot be read as T
     * throws (the host reports it as the op call's error, naming the attr). Other T: T(). */
    template <typename T> inline T Attr(std::string name)
    {
        (void)name;
        return T();
    }

    /* Init declares the workspaces F gets after its inputs and outputs, in bytes; the host
     * rounds each up to a multiple of 512 bytes, as MindSpore's memory pool does. */
    void SetWorkSpace(const std::vector<size_t> &workspace) { workspace_ = workspace; }
    const std::vector<size_t> &WorkSpace() const { return workspace_; }

    /* Kernel data: owned by the AotExtra from SetKernelData on (see AotKernelData). */
    void SetKernelData(AotKernelData *kernel_data) { kernel_data_ = kernel_data; }
    AotKernelData *KernelData() const { return kernel_data_; }

    /* Deletes the kernel data through its virtual destructor; the host calls it. */
    void DestructKernelData()
    {
        delete kernel_data_;
        kernel_data_ = nullptr;
    }

private:
    virtual bool GetAttrBool(std::string name) = 0;
    virtual int64_t GetAttrInt(std::string name) = 0;
    virtual float GetAttrFloat(std::string name) = 0;
    virtual std::string GetAttrStr(std::string name) = 0;

    virtual std::vector<int64_t> GetAttrIntVec(std::string name) = 0;
    virtual std::vector<float> GetAttrFloatVec(std::string name) = 0;
    virtual std::vector<std::vector<int64_t>> GetAttrInt2DVec(std::string name) = 0;
    virtual std::vector<std::vector<float>> GetAttrFloat2DVec(std::string name) = 0;

    std::vector<size_t> workspace_;
    AotKernelData *kernel_data_{nullptr};
};

template <> inline bool AotExtra::Attr(std::string name) { return GetAttrBool(name); }

template <> inline int64_t AotExtra::Attr(std::string name) { return GetAttrInt(name); }

template <> inline float AotExtra::Attr(std::string name) { return GetAttrFloat(name); }

template <> inline std::string AotExtra::Attr(std::string name) { return GetAttrStr(name); }

template <> inline std::vector<int64_t> AotExtra::Attr(std::string name)
{
    return GetAttrIntVec(name);
}

template <> inline std::vector<float> AotExtra::Attr(std::string name)
{
    return GetAttrFloatVec(name);
}

template <> inline std::vector<std::vector<int64_t>> AotExtra::Attr(std::string name)
{
    return GetAttrInt2DVec(name);
}

template <> inline std::vector<std::vector<float>> AotExtra::Attr(std::string name)
{
    return GetAttrFloat2DVec(name);
}

#endif /* __cplusplus */

#endif /* CUSTOM_AOT_EXTRA_H */
