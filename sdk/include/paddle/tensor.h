/*
 * paddle/tensor.h - paddle::Tensor over pdext's pd_tensor, with Paddle's DataType, Place,
 * PlaceType and element types (float16, bfloat16, complex64, complex128).
 *
 * A paddle::Tensor is a handle: a pointer to a pd_tensor that the running op call owns (an
 * input, an output, or a tensor made through the call: paddle::empty, cast, slice, ...). It
 * holds no reference of its own, so copying one costs a pointer and the runner releases
 * every tensor when the call ends, whether it succeeds or throws. A tensor therefore lives as
 * long as the call that made it, which is what Paddle's kernels rely on. Tensors are made
 * through the call running on this thread (detail::current_ctx), which the wrappers of
 * PD_KERNEL / PD_INFER_SHAPE set; making one outside an op call throws.
 *
 * Included through paddle/extension.h only.
 */
#ifndef PDEXT_PADDLE_TENSOR_H
#define PDEXT_PADDLE_TENSOR_H

#ifndef PDEXT_PADDLE_EXTENSION_H
#error "include paddle/extension.h, not paddle/tensor.h"
#endif

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <type_traits>
#include <vector>

/* The call running on this thread, for op code that makes tensors (one slot per module, like
 * pd__api; hidden, so each module keeps its own and no symbol is shared between modules). */
extern "C" __attribute__((weak, visibility("hidden"))) __thread pd_kernel_ctx *pd__paddle_ctx;
__attribute__((weak, visibility("hidden"))) __thread pd_kernel_ctx *pd__paddle_ctx = nullptr;

namespace paddle {

/* Paddle's data types, numbered as pdext's pd_data_type. */
enum class DataType : int {
    UNDEFINED = PD_UNDEFINED,
    BOOL = PD_BOOL,
    INT8 = PD_INT8,
    UINT8 = PD_UINT8,
    INT16 = PD_INT16,
    UINT16 = PD_UINT16,
    INT32 = PD_INT32,
    UINT32 = PD_UINT32,
    INT64 = PD_INT64,
    UINT64 = PD_UINT64,
    FLOAT16 = PD_FLOAT16,
    BFLOAT16 = PD_BFLOAT16,
    FLOAT32 = PD_FLOAT32,
    FLOAT64 = PD_FLOAT64,
    COMPLEX64 = PD_COMPLEX64,
    COMPLEX128 = PD_COMPLEX128
};

/* "float32", "int32", ... as Paddle prints them. */
inline std::ostream &operator<<(std::ostream &os, DataType t)
{
    return os << pd_dtype_name(static_cast<pd_data_type>(t));
}
inline pd_data_type to_pd(DataType t) { return static_cast<pd_data_type>(t); }

/* Paddle's element types for half and complex data, laid out as pdext's. */
struct float16 {
    uint16_t x = 0;
    float16() = default;
    float16(float f) : x(pd_float16_from_float(f).bits) {} // NOLINT: implicit as in Paddle
    operator float() const { return pd_float16_to_float(pd_float16{x}); }
};
struct bfloat16 {
    uint16_t x = 0;
    bfloat16() = default;
    bfloat16(float f) : x(pd_bfloat16_from_float(f).bits) {} // NOLINT: implicit as in Paddle
    operator float() const { return pd_bfloat16_to_float(pd_bfloat16{x}); }
};
template <class T> struct complex {
    T real = 0;
    T imag = 0;
    complex() = default;
    complex(T r, T i = 0) : real(r), imag(i) {} // NOLINT: implicit as in Paddle
};
template <class T> inline complex<T> operator+(complex<T> a, complex<T> b)
{
    return {a.real + b.real, a.imag + b.imag};
}
template <class T> inline complex<T> operator-(complex<T> a, complex<T> b)
{
    return {a.real - b.real, a.imag - b.imag};
}
template <class T> inline complex<T> operator*(complex<T> a, complex<T> b)
{
    return {a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real};
}
template <class T> inline complex<T> operator/(complex<T> a, complex<T> b)
{
    T d = b.real * b.real + b.imag * b.imag;
    return {(a.real * b.real + a.imag * b.imag) / d, (a.imag * b.real - a.real * b.imag) / d};
}
template <class T> inline bool operator==(complex<T> a, complex<T> b)
{
    return a.real == b.real && a.imag == b.imag;
}
template <class T> inline bool operator!=(complex<T> a, complex<T> b) { return !(a == b); }
template <class T> inline complex<T> conj(complex<T> a) { return {a.real, -a.imag}; }
using complex64 = complex<float>;
using complex128 = complex<double>;
static_assert(sizeof(float16) == 2 && sizeof(complex64) == 8 && sizeof(complex128) == 16,
              "paddle element types must have pdext's layouts");

/* The DataType of a C++ element type (DataType::UNDEFINED for any other type). */
template <class T> struct dtype_of {
    static constexpr DataType value =
        std::is_same<T, bool>::value                                             ? DataType::BOOL
        : std::is_same<T, int8_t>::value                                         ? DataType::INT8
        : std::is_same<T, uint8_t>::value                                        ? DataType::UINT8
        : std::is_same<T, int16_t>::value                                        ? DataType::INT16
        : std::is_same<T, uint16_t>::value                                       ? DataType::UINT16
        : std::is_same<T, int32_t>::value                                        ? DataType::INT32
        : std::is_same<T, uint32_t>::value                                       ? DataType::UINT32
        : (std::is_same<T, int64_t>::value || std::is_same<T, long long>::value) ? DataType::INT64
        : (std::is_same<T, uint64_t>::value || std::is_same<T, unsigned long long>::value)
            ? DataType::UINT64
        : (std::is_same<T, float16>::value || std::is_same<T, pd_float16>::value)
            ? DataType::FLOAT16
        : (std::is_same<T, bfloat16>::value || std::is_same<T, pd_bfloat16>::value)
            ? DataType::BFLOAT16
        : std::is_same<T, float>::value  ? DataType::FLOAT32
        : std::is_same<T, double>::value ? DataType::FLOAT64
        : (std::is_same<T, complex64>::value || std::is_same<T, pd_complex64>::value)
            ? DataType::COMPLEX64
        : (std::is_same<T, complex128>::value || std::is_same<T, pd_complex128>::value)
            ? DataType::COMPLEX128
            : DataType::UNDEFINED;
};

/* Paddle's legacy place kinds. */
enum class PlaceType { kUNK = -1, kCPU = 0, kGPU = 1 };
/* Paddle's AllocationType, as Place::GetType() returns it. */
enum class AllocationType : int8_t {
    UNDEFINED = PD_PLACE_UNDEFINED,
    CPU = PD_PLACE_CPU,
    GPU = PD_PLACE_GPU,
    GPUPINNED = PD_PLACE_GPU_PINNED,
    CUSTOM = PD_PLACE_CUSTOM_FIRST
};

/* Where a tensor lives: a pd_place. Compares with PlaceType as Paddle's legacy code does. */
class Place {
public:
    Place() : p_(pd_place_make(PD_PLACE_UNDEFINED, 0)) {}
    Place(pd_place p) : p_(p) {} // NOLINT: implicit, a pd_place is a place
    Place(PlaceType t)           // NOLINT: implicit, as Paddle's legacy API converts
        : p_(t == PlaceType::kCPU   ? pd_place_cpu()
             : t == PlaceType::kGPU ? pd_place_gpu(0)
                                    : pd_place_make(PD_PLACE_UNDEFINED, 0))
    {}
    AllocationType GetType() const
    {
        return p_.type >= PD_PLACE_CUSTOM_FIRST ? AllocationType::CUSTOM
                                                : static_cast<AllocationType>(p_.type);
    }
    int8_t GetDeviceId() const { return static_cast<int8_t>(p_.device_id); }
    std::string DebugString() const
    {
        std::string s = pd_place_type_name(&p_);
        if (p_.type == PD_PLACE_GPU)
            s += ":" + std::to_string(p_.device_id);
        return s;
    }
    const pd_place &pd() const { return p_; }
    bool operator==(const Place &o) const { return pd_place_equal(p_, o.p_); }
    bool operator!=(const Place &o) const { return !(*this == o); }
    bool operator==(PlaceType t) const { return *this == Place(t); }
    bool operator!=(PlaceType t) const { return !(*this == t); }

private:
    pd_place p_;
};
inline std::ostream &operator<<(std::ostream &os, const Place &p) { return os << p.DebugString(); }
/* Paddle's place classes: each is a Place (`paddle::CPUPlace()` makes one, as before). */
class CPUPlace : public Place {
public:
    CPUPlace() : Place(pd_place_cpu()) {}
};
class GPUPlace : public Place {
public:
    GPUPlace() : Place(pd_place_gpu(0)) {}
    explicit GPUPlace(int device_id) : Place(pd_place_gpu(device_id)) {}
};
class GPUPinnedPlace : public Place {
public:
    GPUPinnedPlace() : Place(pd_place_gpu_pinned()) {}
};
/* Paddle's current GPU. pdext runs a call on its inputs' device and has no process-wide
 * current device: device 0, as Paddle's default (kernels that care read x.place()). */
inline GPUPlace DefaultGPUPlace() { return GPUPlace(0); }
inline bool operator==(PlaceType t, const Place &p) { return p == t; }

namespace experimental {

/* Paddle's Scalar: a number handed to a function (an int, a float, a bool). */
class Scalar {
public:
    Scalar(double v = 0) : v_(v) {}                   // NOLINT: implicit, as Paddle's
    Scalar(float v) : v_(v) {}                        // NOLINT
    Scalar(int v) : v_(v) {}                          // NOLINT
    Scalar(int64_t v) : v_(static_cast<double>(v)) {} // NOLINT
    Scalar(bool v) : v_(v ? 1 : 0) {}                 // NOLINT
    template <class T> T to() const { return static_cast<T>(v_); }

private:
    double v_;
};

/* Paddle's IntArray: a list of ints (axes, sections, a shape). */
class IntArray {
public:
    IntArray() = default;
    IntArray(const std::vector<int64_t> &v) : v_(v) {}              // NOLINT: implicit, as Paddle's
    IntArray(const std::vector<int> &v) : v_(v.begin(), v.end()) {} // NOLINT
    IntArray(std::initializer_list<int64_t> v) : v_(v) {}           // NOLINT
    IntArray(int64_t v) : v_{v} {}                                  // NOLINT
    IntArray(int v) : v_{v} {}                                      // NOLINT
    const std::vector<int64_t> &GetData() const { return v_; }
    size_t size() const { return v_.size(); }

private:
    std::vector<int64_t> v_;
};

} // namespace experimental

namespace detail {

/* Throws pd::op_error(status) with a printf-style message. The error paths of the wrappers
 * and the tensor methods call this one function instead of building std::strings where they
 * fail: the same text, but compiled once per module, not once per template and call site
 * (string concatenation at -O3 was a large share of a Paddle module's compile). */
[[noreturn, gnu::cold, gnu::noinline]] inline void
vfail_at(const char *file, int line, pd_status status, const char *fmt, va_list ap)
{
    throw pd::op_error(pd__cxx_format(fmt, ap), file, line, status);
}
[[noreturn]] PD_PRINTF(2, 3) inline void fail(pd_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pd__va_end_guard end = {&ap};
    vfail_at(nullptr, 0, status, fmt, ap);
}
/* The same with the op code's [file:line]. */
[[noreturn]] PD_PRINTF(4, 5) inline void fail_at(const char *file, int line, pd_status status,
                                                 const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pd__va_end_guard end = {&ap};
    vfail_at(file, line, status, fmt, ap);
}

/* The running call; throws when op code makes a tensor outside one. */
inline pd_kernel_ctx *ctx()
{
    pd_kernel_ctx *c = pd__paddle_ctx;
    if (c == nullptr)
        throw pd::op_error("paddle::Tensor: tensors are made inside an op call (a kernel or an "
                           "infer function run by pdext)",
                           nullptr, 0, PD_ERR_INVALID_ARGUMENT);
    return c;
}

/* Sets the running call for the scope of a kernel or infer function, and restores the outer
 * one (an op may run other ops). */
class ctx_scope {
public:
    explicit ctx_scope(pd_kernel_ctx *c) : outer_(pd__paddle_ctx) { pd__paddle_ctx = c; }
    ~ctx_scope() { pd__paddle_ctx = outer_; }
    ctx_scope(const ctx_scope &) = delete;
    ctx_scope &operator=(const ctx_scope &) = delete;

private:
    pd_kernel_ctx *outer_;
};

inline int32_t ndim_of(const std::vector<int64_t> &shape)
{
    if (shape.size() > PD_MAX_DIMS)
        fail(PD_ERR_INVALID_ARGUMENT,
             "paddle::Tensor: shape has %zu dims; pdext tensors have at most %d", shape.size(),
             PD_MAX_DIMS);
    return static_cast<int32_t>(shape.size());
}

} // namespace detail

/* Paddle's tensor, as a handle on a pd_tensor of the running call (see the top of the file). */
class Tensor {
public:
    /* An undefined tensor. */
    Tensor() = default;
    /* A handle on `t` (a tensor of the running call). */
    explicit Tensor(const pd_tensor *t) : t_(const_cast<pd_tensor *>(t)) {}
    /* Paddle's legacy constructor: shape and place now, memory and dtype at mutable_data. */
    Tensor(const Place &place, const std::vector<int64_t> &shape) { init_pending(place, shape); }
    explicit Tensor(const Place &place) { init_pending(place, {}); }

    /* The underlying pd_tensor (NULL when undefined). */
    pd_tensor *pd() const { return t_; }

    std::vector<int64_t> shape() const
    {
        return t_ ? std::vector<int64_t>(t_->shape, t_->shape + t_->ndim) : std::vector<int64_t>();
    }
    std::vector<int64_t> dims() const { return shape(); }
    int64_t numel() const
    {
        if (t_ == nullptr)
            return 0;
        int64_t n = 1;
        for (int32_t d = 0; d < t_->ndim; ++d)
            n *= t_->shape[d];
        return n;
    }
    int64_t size() const { return numel(); }
    DataType dtype() const { return t_ ? static_cast<DataType>(t_->dtype) : DataType::UNDEFINED; }
    DataType type() const { return dtype(); }
    Place place() const { return t_ ? Place(t_->place) : Place(); }
    bool is_cpu() const { return t_ && t_->place.type == PD_PLACE_CPU; }
    bool is_gpu() const { return t_ && t_->place.type == PD_PLACE_GPU; }
    bool is_gpu_pinned() const { return t_ && t_->place.type == PD_PLACE_GPU_PINNED; }
    bool is_custom_device() const { return t_ && t_->place.type >= PD_PLACE_CUSTOM_FIRST; }
    bool defined() const { return t_ && t_->dtype != PD_UNDEFINED; }
    bool initialized() const { return defined() && t_->data != nullptr; }
    bool is_initialized() const { return initialized(); }
    bool is_dense_tensor() const { return true; }
    bool is_contiguous() const { return t_ == nullptr || t_->layout == PD_LAYOUT_DENSE; }
    /* The CUDA stream of the call; pdext op code runs on the default stream. */
#ifdef __CUDACC__
    cudaStream_t stream() const { return nullptr; }
#else
    void *stream() const { return nullptr; }
#endif

    /* Typed element pointer (also on a const tensor, as Paddle allows); the wrong T throws,
     * naming both types. NULL for a tensor without memory. */
    template <class T> T *data() const
    {
        if (t_ == nullptr || t_->data == nullptr)
            return nullptr;
        check_type<T>("data");
        return static_cast<T *>(t_->data);
    }
    void *data() const { return t_ ? t_->data : nullptr; }

    /* The elements as T on `place`: allocates when the tensor has no memory, another dtype
     * (re-typing an empty_like tensor) or another place; keeps the shape. */
    template <class T> T *mutable_data(const Place &place)
    {
        static_assert(dtype_of<T>::value != DataType::UNDEFINED,
                      "mutable_data<T>: T is no element type of a tensor");
        pd_data_type want = static_cast<pd_data_type>(dtype_of<T>::value);
        if (t_ == nullptr)
            init_pending(place, {});
        if (t_->data == nullptr || t_->dtype != want || !pd_place_equal(t_->place, place.pd()))
            t_ = pd_empty(detail::ctx(), want, place.pd(), t_->ndim, t_->shape);
        return static_cast<T *>(t_->data);
    }
    template <class T> T *mutable_data() { return mutable_data<T>(t_ ? place() : CPUPlace()); }

    /* Sets the shape of a tensor without memory (Paddle's reshape-before-mutable_data), or
     * makes this a view of the same storage with that shape (one dim may be -1). */
    void reshape(const std::vector<int64_t> &shape)
    {
        int32_t nd = detail::ndim_of(shape);
        if (t_ == nullptr || t_->data == nullptr) {
            init_pending(t_ ? place() : CPUPlace(), shape);
            return;
        }
        t_ = pd_reshape(detail::ctx(), t_, nd, shape.data());
    }

    /* A copy on `place` (blocking is accepted for Paddle's signature; copies complete before
     * they return). */
    Tensor copy_to(const Place &place, bool blocking = true) const
    {
        (void)blocking;
        return Tensor(pd_copy_to(detail::ctx(), checked("copy_to"), place.pd()));
    }
    template <class T> Tensor copy_to(const Place &place) const
    {
        Tensor c = copy_to(place, true);
        c.check_type<T>("copy_to");
        return c;
    }
    Tensor cast(DataType dtype) const
    {
        return Tensor(pd_cast(detail::ctx(), checked("cast"), to_pd(dtype)));
    }
    /* Rows [begin, end) along axis 0, sharing storage. */
    Tensor slice(int64_t begin, int64_t end) const
    {
        return Tensor(pd_slice(detail::ctx(), checked("slice"), begin, end));
    }
    /* A dense copy of a strided view (itself when already dense). */
    Tensor contiguous() const
    {
        if (is_contiguous())
            return *this;
        return Tensor(pd_contiguous(detail::ctx(), t_));
    }
    /* Paddle's tensor method spellings of the free functions (paddle/tensor_ops.h,
     * paddle/tensor_methods.h). */
    Tensor operator-() const;
    Tensor operator~() const;
    Tensor abs() const;
    Tensor exp() const;
    Tensor floor() const;
    Tensor log() const;
    Tensor add(const Tensor &y) const;
    Tensor subtract(const Tensor &y) const;
    Tensor multiply(const Tensor &y) const;
    Tensor divide(const Tensor &y) const;
    Tensor add(const experimental::Scalar &y) const;
    Tensor subtract(const experimental::Scalar &y) const;
    Tensor multiply(const experimental::Scalar &y) const;
    Tensor divide(const experimental::Scalar &y) const;
    Tensor maximum(const Tensor &y) const;
    Tensor minimum(const Tensor &y) const;
    Tensor equal(const Tensor &y) const;
    Tensor not_equal(const Tensor &y) const;
    Tensor greater_equal(const Tensor &y) const;
    Tensor greater_than(const Tensor &y) const;
    Tensor less_equal(const Tensor &y) const;
    Tensor less_than(const Tensor &y) const;
    Tensor bitwise_and(const Tensor &y) const;
    Tensor bitwise_or(const Tensor &y) const;
    Tensor bitwise_xor(const Tensor &y) const;
    Tensor bitwise_not() const;
    Tensor pow(const experimental::Scalar &y) const;
    Tensor matmul(const Tensor &y, bool transpose_x = false, bool transpose_y = false) const;
    Tensor max(const experimental::IntArray &axis = {}, bool keepdim = false) const;
    Tensor sum(const experimental::IntArray &axis = {}, DataType dtype = DataType::UNDEFINED,
               bool keepdim = false) const;
    Tensor scale(const experimental::Scalar &scale = 1.0, const experimental::Scalar &bias = 0.0,
                 bool bias_after_scale = true) const;
    Tensor tile(const experimental::IntArray &repeat_times = {}) const;
    bool has_allocation() const { return t_ != nullptr && t_->data != nullptr; }

    /* Throws unless the tensor holds T elements. */
    template <class T> void check_type(const char *what) const
    {
        DataType want = dtype_of<T>::value;
        if (t_ != nullptr && static_cast<DataType>(t_->dtype) != want)
            detail::fail(PD_ERR_INVALID_ARGUMENT,
                         "paddle::Tensor::%s<%s>() called on a tensor of data type %s", what,
                         want == DataType::UNDEFINED ? "a type that is no tensor element type"
                                                     : pd_dtype_name(to_pd(want)),
                         pd_dtype_name(t_->dtype));
    }
    /* The tensor, or an error naming `what` when it is undefined. */
    pd_tensor *checked(const char *what) const
    {
        if (!defined())
            detail::fail(PD_ERR_INVALID_ARGUMENT, "paddle::Tensor::%s: the tensor is undefined",
                         what);
        return t_;
    }

private:
    /* A call-owned pd_tensor with shape and place but no dtype or memory yet. */
    void init_pending(const Place &place, const std::vector<int64_t> &shape)
    {
        int32_t nd = detail::ndim_of(shape);
        pd_tensor *t = static_cast<pd_tensor *>(pd_scratch(detail::ctx(), sizeof(pd_tensor)));
        std::memset(static_cast<void *>(t), 0, sizeof *t);
        t->ndim = nd;
        for (int32_t d = 0; d < nd; ++d)
            t->shape[d] = shape[static_cast<size_t>(d)];
        t->place = place.pd();
        t_ = t;
    }

    pd_tensor *t_ = nullptr;
};

/* Paddle's optional (paddle::optional<Tensor>, of a vector, of shapes and dtypes): a
 * std::optional with Paddle's accessors. */
template <class T> class optional : public std::optional<T> {
public:
    using std::optional<T>::optional;
    optional() = default;
    optional(const std::optional<T> &o) : std::optional<T>(o) {} // NOLINT: implicit
    bool is_initialized() const { return this->has_value(); }
    const T &get() const { return this->value(); }
    T &get() { return this->value(); }
    const T *get_ptr() const { return this->has_value() ? &**this : nullptr; }
    T *get_ptr() { return this->has_value() ? &**this : nullptr; }
};

namespace experimental {
using paddle::AllocationType;
using paddle::CPUPlace;
using paddle::DataType;
using paddle::GPUPinnedPlace;
using paddle::GPUPlace;
using paddle::Place;
using paddle::Tensor;
} // namespace experimental

} // namespace paddle

/* Paddle defines these in phi and re-exports them in paddle; sources use either spelling. */
namespace phi {
using paddle::AllocationType;
using paddle::CPUPlace;
using paddle::DataType;
using paddle::GPUPinnedPlace;
using paddle::GPUPlace;
using paddle::Place;
namespace dtype {
using paddle::bfloat16;
using paddle::complex;
using paddle::float16;
} // namespace dtype
} // namespace phi

#endif /* PDEXT_PADDLE_TENSOR_H */
