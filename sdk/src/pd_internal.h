/*
 * pd_internal.h - what libpdext's own files share and hosts never see: the storage block,
 * error reporting helpers and the internal entry points one runtime file offers another.
 */
#ifndef PD_INTERNAL_H
#define PD_INTERNAL_H

#define PDEXT_NO_MODULE_ENTRY 1 /* libpdext is not an op module */
#include "pdext.h"

#include "pd_device.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#define PD__USED_ON_MAX 2 /* streams besides its own a device block remembers (see below) */

/* A reference-counted memory block. Runtime allocations put this header and the data in one
 * 64-byte aligned allocation (data at `ptr`, right after the header); wrapped external
 * buffers point `ptr` at the caller's memory and call `deleter` once at the end. */
struct pd_storage {
    atomic_int_fast64_t refcount;
    void *ptr;             /* first byte of the buffer */
    size_t bytes;          /* its size */
    pd_place place;        /* where it lives */
    pd_deleter_fn deleter; /* external buffers: called once with (ptr, user); else NULL */
    void *user;
    bool external;   /* ptr is the caller's, not part of this allocation */
    void *block;     /* runtime allocations: what malloc returned (header and data) */
    size_t capacity; /* runtime allocations: usable data bytes at ptr (>= bytes) */
    /* Memory of a device table (device/device.c): ptr came from its alloc (or host_alloc for
     * GPU-pinned) and goes back through it; the header is a malloc of its own. NULL for
     * host memory from malloc and for wrapped buffers. */
    struct pd__device *device;
    /* Device memory: the device handle of the stream it was allocated on, which the device
     * cache (device/device_cache.c) reuses it on; the next cached block while cached. */
    void *stream;
    struct pd_storage *cache_next;
    /* Device memory: other streams of its device that work using it was queued on
     * (pd_tensor_record_stream, the executor's streams), under the device's lock; the cache
     * hands it to an allocation only once each of them is idle. `used_on_more`: more
     * streams than the slots hold (the cache then waits for all of the device's streams). */
    void *used_on[PD__USED_ON_MAX];
    bool used_on_more;
    /* The executor's completion for memory an async call fills (exec/pending.h): NULL for
     * memory that was never pending. One reference, dropped when the storage dies. */
    _Atomic(struct pd__completion *) pending;
};

/* libpdext_jit is a separate library on top of libpdext that needs these few internals; they
 * are exported from libpdext.so (under their reserved pd__ names, declared in no public header)
 * rather than compiled twice, which would give the JIT a second per-thread error state. */
#define PD__SIBLING_API __attribute__((visibility("default")))

/* Levenshtein distance of a and b (ASCII case folded with fold_case), for "did you mean"
 * suggestions on error paths; (size_t)-1 when either is PD__NAME_MAX characters or longer. */
PD__SIBLING_API size_t pd__edit_distance(const char *a, const char *b, bool fold_case);

/* --- status.c ---------------------------------------------------------------------------- */

/* Records `code` and the formatted message as this thread's last error; returns `code`. */
PD__SIBLING_API pd_status pd__fail(pd_status code, const char *fmt, ...) PD_PRINTF(2, 3);
pd_status pd__vfail(pd_status code, const char *fmt, va_list ap);
/* Prepends "prefix" to this thread's last message (keeps its status); returns the status. */
PD__SIBLING_API pd_status pd__fail_prefix(const char *fmt, ...) PD_PRINTF(1, 2);

/* --- storage.c --------------------------------------------------------------------------- */

/* A new block of `bytes` on `place`, refcount 1, 64-byte aligned. Fails (with a message
 * naming `who`) for GPU places without CUDA, undefined places, and out of memory. */
pd_status pd__storage_new(const char *who, pd_place place, size_t bytes, pd_storage **out);
/* pd__storage_new for a caller that has already accepted *place (pd__place_ok) and bounded
 * bytes (<= PTRDIFF_MAX): no checks, no message; NULL when out of memory. The runner's
 * output path, where both facts are known and every instruction counts. */
pd_storage *pd__storage_alloc(const pd_place *place, size_t bytes);
void pd__storage_retain(pd_storage *s);
void pd__storage_release(pd_storage *s);

/* --- tensor.c ---------------------------------------------------------------------------- */

/* Zeroes *t (PD_TENSOR_UNDEFINED) in parts of at most 64 bytes, which compilers emit as vector
 * stores: a single memset of the whole struct becomes `rep stos`, whose start-up costs more
 * than that, and every op call's output goes through here (made, and released by the host). */
_Static_assert(sizeof(pd_tensor) > 128 && sizeof(pd_tensor) <= 192, "three parts of <= 64 bytes");
static inline void pd__tensor_clear(pd_tensor *t)
{
    memset(t, 0, 64);
    memset((char *)t + 64, 0, 64);
    memset((char *)t + 128, 0, sizeof *t - 128);
}

/* Validates dtype, ndim and shape and computes the byte size without overflow; the message
 * names `who` and the offending argument. */
/* ndim in [0, PD_MAX_DIMS] and a shape array to go with it; else a message naming `who`. */
pd_status pd__rank_check(const char *who, int32_t ndim, const int64_t *shape);
PD__SIBLING_API pd_status pd__shape_check(const char *who, pd_data_type dtype, int32_t ndim,
                                          const int64_t *shape, size_t *bytes);
/* pd__shape_check's verdict, without a message: true, with the byte size in *bytes, for a data
 * type, ndim in [0, PD_MAX_DIMS], a shape (when ndim > 0) of dims >= 0 and a byte size (of
 * the non-zero dims) within PTRDIFF_MAX. Inline for the runner's output path; pd__shape_check
 * starts with it and only works out a message once it says no. */
static inline bool pd__shape_bytes(pd_data_type dtype, int32_t ndim, const int64_t *shape,
                                   size_t *bytes)
{
    if ((unsigned)dtype - 1u >= PD_NUM_DTYPES - 1u || (uint32_t)ndim > PD_MAX_DIMS ||
        (ndim > 0 && shape == NULL))
        return false;
    uint64_t total = pd_dtype_size(dtype);
    bool empty = false;
    for (int32_t d = 0; d < ndim; ++d) {
        if (shape[d] <= 0) {
            if (shape[d] < 0)
                return false;
            empty = true;
        } else if (__builtin_mul_overflow(total, (uint64_t)shape[d], &total) ||
                   total > (uint64_t)PTRDIFF_MAX) {
            return false;
        }
    }
    *bytes = empty ? 0 : (size_t)total;
    return true;
}

/* --- layout.c: strides, byte ranges, strided copies ---------------------------------------- */

/* The row-major strides of `shape` into strides[0..PD_MAX_DIMS) (0 past ndim). Inline: the
 * runner fills them for every output it makes. A zero dim counts as 1, so that the strides
 * before it stay those of the other dims. */
static inline void pd__dense_strides(int32_t ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int32_t d = PD_MAX_DIMS - 1; d >= 0; --d) {
        strides[d] = d < ndim ? s : 0;
        if (d < ndim && shape[d] > 0)
            s *= shape[d];
    }
}
/* t's strides as its layout means them (dense ones for PD_LAYOUT_DENSE), 0 past ndim. */
void pd__tensor_strides(const pd_tensor *t, int64_t *strides);
/* `strides` address `shape` row-major without gaps (axes of size 1 and empty shapes aside). */
bool pd__strides_are_dense(int32_t ndim, const int64_t *shape, const int64_t *strides);
/* Sets t's layout and strides from `strides` for t's shape: dense (with the dense strides)
 * when they describe a dense tensor, strided otherwise. */
void pd__tensor_set_layout(pd_tensor *t, const int64_t *strides);
/* Bytes from t->data to the lowest element t reaches (*lo <= 0) and to one past the end of
 * the highest (*hi); both 0 for a tensor without elements. False if they overflow. */
bool pd__tensor_span(const pd_tensor *t, int64_t *lo, int64_t *hi);
/* PD_OK unless t has storage and reaches bytes outside it; the message names who (NULL: no
 * "who: " prefix) and arg. */
pd_status pd__tensor_check_bounds(const char *who, const char *arg, const pd_tensor *t);
/* "[2, 3]" into buf, for messages. */
PD__SIBLING_API const char *pd__dims_text(int32_t ndim, const int64_t *dims, char *buf,
                                          size_t size);
/* Writes src's elements (any layout, host memory) densely in C order to dst as dst_type. */
void pd__copy_to_dense(void *dst, pd_data_type dst_type, const pd_tensor *src);

/* --- tensor.c: checks the host tensor functions share (views in view.c) ------------------- */

/* out is not NULL. */
pd_status pd__tensor_check_out(const char *who, const void *out);
/* `t` is a defined, initialized tensor with a valid dtype and rank, inside its storage. */
pd_status pd__tensor_check_source(const char *who, const char *arg, const pd_tensor *t);
/* A view of src over its storage (a new reference) with the given shape, strides (elements)
 * and data address; layout and offset follow from them. */
pd_tensor pd__tensor_view(const pd_tensor *src, void *data, int32_t ndim, const int64_t *shape,
                          const int64_t *strides);

/* --- device/place_types.c: custom device type names ---------------------------------------- */

/* The registered name of custom type `type`, or the name an undefined place made from an
 * unregistered name remembers (device_id < 0); NULL otherwise. */
const char *pd__place_custom_name(pd_place place);
/* pd_device_type_name, or "undefined" for a number that is no registered custom type: the
 * function table's device_type_name. */
const char *pd__device_type_label(int32_t type);

/* --- device/device.c, device/stream.c: device tables, streams ------------------------------- */

#define PD__DEVICE_IDS 64 /* devices of one type pdext addresses */

/* One device type as the runtime holds it: its table and what was learnt from it once. */
typedef struct pd__device {
    const pd_device_table *table;
    int32_t type;  /* place type number (PD_PLACE_GPU serves GPU-pinned too) */
    int32_t count; /* devices present when the entry was made (at most PD__DEVICE_IDS) */
    pthread_mutex_t lock;
    _Atomic(struct pd_stream_t *) defaults[PD__DEVICE_IDS]; /* default streams, made lazily */
    /* The cache of freed blocks per device (device_cache.c), under `lock`. */
    struct pd_storage *cached[PD__DEVICE_IDS];
    size_t cached_bytes[PD__DEVICE_IDS];
    struct pd_storage *pinned; /* the cache of pinned host memory (GPU-pinned places) */
    size_t pinned_bytes;
    /* Handles of the streams of this type that exist (under `lock`): a block whose stream is
     * gone (destroyed after finishing its work) is idle, and its handle must never reach
     * stream_query again. */
    void **live_streams;
    int32_t n_live_streams, cap_live_streams;
} pd__device;

/* The member `m` lies inside table `t` as its plug-in compiled it (struct_size), and is set. */
#define PD__DEVICE_HAS(t, m) \
    ((t)->struct_size >= offsetof(pd_device_table, m) + sizeof((t)->m) && (t)->m)

/* The device entry serving `place` (loading the CUDA plug-in for GPU places), with its
 * device id checked; NULL with a message naming `who` (what is missing, what to install). */
pd__device *pd__device_of(const char *who, pd_place place);
/* Whether custom type number `type` has a device table. */
bool pd__device_registered(int32_t type);
/* Records "who: <op> on <place> failed (...)" with status st; returns st. */
pd_status pd__device_failed(const char *who, const pd__device *d, pd_place place, const char *op,
                            pd_status st);
/* `bytes` of place's memory (device memory, or pinned host memory for GPU-pinned). */
pd_status pd__device_alloc(const char *who, pd__device *d, pd_place place, size_t bytes,
                           void **ptr);
void pd__device_free(pd__device *d, pd_place place, void *ptr, size_t bytes);
/* memset of `bytes` at ptr on any place, on the thread's stream of the device. */
pd_status pd__device_memset(const char *who, pd_place place, void *ptr, int value, size_t bytes);
/* Copies `bytes` between any two places (host memory included) on the thread's streams;
 * returns once host memory on either side may be used again. */
pd_status pd__device_copy(const char *who, pd_place dst_place, void *dst, pd_place src_place,
                          const void *src, size_t bytes);
/* The stream this thread made current for place's device (pd_stream_set_current), or NULL
 * when it uses the device's default stream (stream.c). */
struct pd_stream_t *pd__stream_chosen(pd_place place);
/* The device handle of this thread's stream for place's device (current, else default). */
pd_status pd__device_stream_of(const char *who, pd__device *d, pd_place place,
                               pd_device_stream *handle);
/* src's elements densely, as dst_type, to dst on dst_place, by the device's convert member
 * on the thread's stream when src is on that same device and the table has one; *done
 * false (and PD_OK) when the caller must stage through host memory instead. */
pd_status pd__device_convert(const char *who, pd_place dst_place, void *dst, pd_data_type dst_type,
                             const pd_tensor *src, bool *done);
/* --- device/device_cache.c: the caching device allocator ----------------------------------- */

/* A block of `bytes` on place's device (or of pinned host memory for GPU-pinned) from the
 * cache or the table: a storage header with ptr, capacity, device and stream set. On out of
 * memory that cache is released and the allocation tried once more. */
pd_status pd__device_block_new(const char *who, pd__device *d, pd_place place, size_t bytes,
                               pd_storage **out);
/* Takes a dead block back (into the cache, or to the table when the cache is full). */
void pd__device_block_free(pd_storage *s);
/* A stream of d was made / is being destroyed (after its work is done): the cache tracks
 * which stream handles exist, so that blocks of a destroyed stream count as idle. */
pd_status pd__device_stream_born(pd__device *d, void *stream);
void pd__device_stream_gone(pd__device *d, void *stream);
/* Notes that work using device block s was queued on `stream` (a device handle of s's
 * device): the cache reuses s only once that stream is idle (device_cache.c). Host and
 * pinned memory are left alone. */
void pd__device_record_stream(pd_storage *s, void *stream);

/* Refuses a place no device serves: the message says why (not registered, no table, ...). */
pd_status pd__place_refuse(const char *who, pd_place place);

/* --- tensor/cross_place.c ------------------------------------------------------------------ */

/* Writes src's elements (any place, any layout) densely in C order as dst_type to dst, on
 * dst_place: host loops for host memory, device copies otherwise (staged through host
 * memory when a strided or converting copy involves a device). */
pd_status pd__copy_across(const char *who, void *dst, pd_place dst_place, pd_data_type dst_type,
                          const pd_tensor *src);

/* --- call/strided_inputs.c: what the runner does with strided and hand-made inputs --------- */

/* Validates pd_op_def.flags / strided_inputs of a parsed op and stores the mask of inputs
 * that may reach its kernel strided in op->strided_inputs. */
pd_status pd__op_parse_strided(const pd_op_def *def, pd_op *op);
/* Before infer and kernel: refuses an input that reaches outside its storage, makes strided
 * inputs of the op's dense inputs contiguous (call-owned copies) and gives strided-accepting
 * inputs filled strides. Throws (the runner's frame must be armed) with a message naming the
 * input. */
void pd__ctx_prepare_inputs(pd_kernel_ctx *ctx);

/* --- A registered op (built by opdef.c / registry.c, read by the runner) ------------------- */

#include "ops/decl.h" /* parsed declarations: pd__arg_decl, pd__attr_decl */

/* An op as registered: parsed once from its definition and never written again once its
 * module is published (grad links live in the registry's snapshot, not here), so any number
 * of threads may read it without a lock. */
struct pd_op {
    const pd_op_def *def;    /* the module's definition (read only up to def->struct_size) */
    char name[PD__NAME_MAX]; /* registered name: name, name_grad or name_grad_grad */
    pd_op_kind kind;
    pd_module *module;
    int32_t n_inputs, n_outputs, n_attrs;
    pd__arg_decl inputs[PD_MAX_INPUTS];
    pd__arg_decl outputs[PD_MAX_OUTPUTS];
    pd__attr_decl attrs[PD_MAX_ATTRS];
    int32_t inplace_input[PD_MAX_OUTPUTS];         /* per output: the input it aliases, or -1 */
    pd_kernel_fn kernel, infer_shape, infer_dtype; /* copied from def (NULL past struct_size) */
    pd_workspace_fn workspace;                     /* copied from def (NULL past struct_size) */
    pd_invoke_fn invoke; /* the module's C++ invoke hook (NULL: call op code directly) */
    /* Facts the runner's binder needs on every call, computed once by pd__op_parse (opdef.c)
     * so that a call does no string work and no per-declaration tests for them. */
    int32_t default_source[PD_MAX_OUTPUTS]; /* per output: the input the default inference
                                             * mirrors (see opdef.c), or -1 */
    uint32_t strided_inputs; /* bit i: input i may reach the kernel strided (strided_inputs.c) */
    uint32_t plain_inputs;   /* bit i: input i takes exactly one tensor (not @VECTOR, not
                              * @OPTIONAL), so a positional pd_arg of one good tensor is all
                              * its binding needs */
    uint32_t required_attrs; /* bit i: attr i has no default, so a call must give it */
    bool setup_outputs;      /* some output's item count or tensors come from its input
                              * (vector, inplace, or mirroring an optional input) */
    bool plain_infer;        /* no infer functions and no setup_outputs: the default
                              * inference is one copy per mirroring output */
    bool may_block;          /* PD_OP_MAY_BLOCK: never run on a thread that must not wait */
};

/* --- registry.c / module.c ----------------------------------------------------------------- */

/* Like pd_module_load, but the ops of `replace` (a module of the same registry, may be NULL)
 * count as absent during validation, and `replace` is unloaded once the new module is in:
 * the JIT's "reload in the same process". On failure `replace` stays loaded, untouched. */
PD__SIBLING_API pd_status pd__module_load_replacing(pd_registry *reg, const char *path,
                                                    pd_module *replace, pd_module **out);

/* An adapter's ownership of the op table it registers (the MindSpore AOT adapter): release(owner)
 * runs once the module is unloaded (pd_module_unload, pd_registry_destroy). */
typedef struct pd__module_owner {
    void (*release)(void *owner);
    void *owner;
} pd__module_owner;
/* pd_module_load_info for an adapter: on success the module owns `owner` (released with it);
 * on failure nothing is released and the caller still owns it. */
PD__SIBLING_API pd_status pd__module_load_owned(pd_registry *reg, const pd_module_info *info,
                                                const char *origin, const pd__module_owner *owner,
                                                pd_module **out);

/* --- api_table.c / runner.c ---------------------------------------------------------------- */

/* The function table handed to every module (same as pd_runtime_api()). */
const pd_api *pd__runtime_api(void);

/* --- tensor runtime: storage.c / cast.c (appended by the tensor runtime) -------------------- */

/* "cpu", "gpu:0", "gpu_pinned", "npu:1" (custom), "undefined (type 7)": for messages. */
void pd__place_format(pd_place place, char *buf, size_t size);
/* PD_OK if memory can be held on `place`: the CPU, or a place a device table serves
 * (device/device.c). Otherwise PD_ERR_UNAVAILABLE (no CUDA plug-in, driver or device; a
 * custom type without a table) or PD_ERR_INVALID_ARGUMENT (undefined, a device id out of
 * range, a CPU place with a device id), with a message naming `who` and the place. */
pd_status pd__place_check(const char *who, pd_place place);
/* The CPU case of pd__place_check, inline and without a message: for hot paths, which take
 * the general path (device places, or the message) only once this says no. */
static inline bool pd__place_ok(const pd_place *place)
{
    return place->type == PD_PLACE_CPU && place->device_id == 0;
}
/* Wraps the caller's buffer: refcount 1; `deleter(ptr, user)` (if not NULL) runs when the
 * last reference goes. On failure the deleter is not called. */
pd_status pd__storage_wrap(const char *who, pd_place place, void *ptr, size_t bytes,
                           pd_deleter_fn deleter, void *user, pd_storage **out);
/* References to s (0 for NULL). */
int64_t pd__storage_use_count(const pd_storage *s);
/* --- exec/pending.c: tensors an async call has not computed yet ----------------------------- */
/* Drops the storage's completion (its last reference is going). */
void pd__storage_pending_drop(pd_storage *s);
/* Blocks until the storage's async call is done; its error (as the last error) if it failed. */
pd_status pd__storage_wait(const pd_storage *s);
/* What every host function that reads element data calls first: PD_OK at once for memory no
 * async call writes (one load), else pd__storage_wait. */
static inline pd_status pd__tensor_ready(const pd_tensor *t)
{
    if (t->storage == NULL ||
        atomic_load_explicit(&t->storage->pending, memory_order_acquire) == NULL)
        return PD_OK;
    return pd__storage_wait(t->storage);
}
/* exec/executor.c: the executor's number, which completions carry. */
struct pd_executor;
uint64_t pd__executor_id(const struct pd_executor *ex);
/* Converts n elements of src_type at src into dst_type at dst (both valid dtypes, buffers not
 * overlapping) with pd_tensor_cast's rules; same dtype copies the bytes. */
void pd__cast_elements(void *dst, pd_data_type dst_type, const void *src, pd_data_type src_type,
                       size_t n);

/* --- npy.c / npz.c (NumPy files) ------------------------------------------------------------ */

#include <stdio.h>
#include <sys/types.h>

/* Longest .npy preamble + header dict pdext writes (8 dims of 20 digits fit easily). */
#define PD__NPY_HEADER_MAX 512

/* --- io/atomic_file.c: files replaced whole (temporary file + rename) ------------------------ */

/* A file being written under a temporary name next to `path`, renamed over it on commit. */
typedef struct pd__atomic_file {
    FILE *fp;
    char *tmp;        /* malloc'd temporary path */
    const char *path; /* the target (borrowed) */
} pd__atomic_file;

/* Creates the temporary file with `mode` (less the umask), e.g. 0666 for data files, 0600
 * for private cache files. */
PD__SIBLING_API pd_status pd__atomic_open(const char *who, const char *path, mode_t mode,
                                          pd__atomic_file *f);
/* Flushes, syncs and renames; on failure removes the temporary file. Either way f is done. */
PD__SIBLING_API pd_status pd__atomic_commit(const char *who, pd__atomic_file *f);
/* Closes and removes the temporary file. */
PD__SIBLING_API void pd__atomic_abort(pd__atomic_file *f);
/* Writes `data` to `path` atomically (open, write, commit); PD_ERR_IO naming `who` and the
 * path on failure. */
PD__SIBLING_API pd_status pd__write_atomic(const char *who, const char *path, const void *data,
                                           size_t len, mode_t mode);
/* Fails, naming `who`, unless t is a defined host tensor of a dtype numpy has. */
PD__SIBLING_API pd_status pd__npy_check_savable(const char *who, const pd_tensor *t);
/* Writes t's .npy preamble and header (64-byte aligned total) into buf; returns its length,
 * 0 if it does not fit. t must have passed pd__npy_check_savable. */
PD__SIBLING_API size_t pd__npy_header_format(const pd_tensor *t, char *buf, size_t cap);
/* Parses a whole .npy image in memory into a new CPU tensor; messages name who and origin. */
PD__SIBLING_API pd_status pd__npy_parse(const char *who, const char *origin, const void *data,
                                        size_t size, pd_tensor *out);

#endif /* PD_INTERNAL_H */
