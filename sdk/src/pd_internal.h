/*
 * pd_internal.h - what libpdext's own files share and hosts never see: the storage block,
 * error reporting helpers and the internal entry points one runtime file offers another.
 */
#ifndef PD_INTERNAL_H
#define PD_INTERNAL_H

#define PDEXT_NO_MODULE_ENTRY 1 /* libpdext is not an op module */
#include "pdext.h"

#include <stdatomic.h>

/* A reference-counted memory block. Runtime allocations put this header and the data in one
 * 64-byte aligned allocation (data at `ptr`, right after the header); wrapped external
 * buffers point `ptr` at the caller's memory and call `deleter` once at the end. */
struct pd_storage {
    atomic_int_fast64_t refcount;
    void *ptr;              /* first byte of the buffer */
    size_t bytes;           /* its size */
    pd_place place;         /* where it lives */
    pd_deleter_fn deleter;  /* external buffers: called once with (ptr, user); else NULL */
    void *user;
    bool external;          /* ptr is the caller's, not part of this allocation */
    void *block;            /* runtime allocations: what malloc returned (header and data) */
    size_t capacity;        /* runtime allocations: usable data bytes at ptr (>= bytes) */
};

/* libpdext_jit is a separate library on top of libpdext that needs these few internals; they
 * are exported from libpdext.so (under their reserved pd__ names, declared in no public header)
 * rather than compiled twice, which would give the JIT a second per-thread error state. */
#define PD__SIBLING_API __attribute__((visibility("default")))

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

/* Validates dtype, ndim and shape and computes the byte size without overflow; the message
 * names `who` and the offending argument. */
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

/* --- A registered op (built by opdef.c / registry.c, read by the runner) ------------------- */

#include "ops/decl.h" /* parsed declarations: pd__arg_decl, pd__attr_decl */

/* An op as registered: parsed once from its definition and never written again once its
 * module is published (grad links live in the registry's snapshot, not here), so any number
 * of threads may read it without a lock. */
struct pd_op {
    const pd_op_def *def;     /* the module's definition (read only up to def->struct_size) */
    char name[PD__NAME_MAX];  /* registered name: name, name_grad or name_grad_grad */
    pd_op_kind kind;
    pd_module *module;
    int32_t n_inputs, n_outputs, n_attrs;
    pd__arg_decl inputs[PD_MAX_INPUTS];
    pd__arg_decl outputs[PD_MAX_OUTPUTS];
    pd__attr_decl attrs[PD_MAX_ATTRS];
    int32_t inplace_input[PD_MAX_OUTPUTS]; /* per output: the input it aliases, or -1 */
    pd_kernel_fn kernel, infer_shape, infer_dtype; /* copied from def (NULL past struct_size) */
    pd_invoke_fn invoke;      /* the module's C++ invoke hook (NULL: call op code directly) */
    /* Facts the runner's binder needs on every call, computed once by pd__op_parse (opdef.c)
     * so that a call does no string work and no per-declaration tests for them. */
    int32_t default_source[PD_MAX_OUTPUTS]; /* per output: the input the default inference
                                             * mirrors (see opdef.c), or -1 */
    uint32_t plain_inputs;    /* bit i: input i takes exactly one tensor (not @VECTOR, not
                               * @OPTIONAL), so a positional pd_arg of one good tensor is all
                               * its binding needs */
    uint32_t required_attrs;  /* bit i: attr i has no default, so a call must give it */
    bool setup_outputs;       /* some output's item count or tensors come from its input
                               * (vector, inplace, or mirroring an optional input) */
    bool plain_infer;         /* no infer functions and no setup_outputs: the default
                               * inference is one copy per mirroring output */
};

/* --- registry.c / module.c ----------------------------------------------------------------- */

/* Like pd_module_load, but the ops of `replace` (a module of the same registry, may be NULL)
 * count as absent during validation, and `replace` is unloaded once the new module is in:
 * the JIT's "reload in the same process". On failure `replace` stays loaded, untouched. */
PD__SIBLING_API pd_status pd__module_load_replacing(pd_registry *reg, const char *path, pd_module *replace,
                                    pd_module **out);

/* --- api_table.c / runner.c ---------------------------------------------------------------- */

/* The function table handed to every module (same as pd_runtime_api()). */
const pd_api *pd__runtime_api(void);

/* --- tensor runtime: storage.c / cast.c (appended by the tensor runtime) -------------------- */

/* "cpu", "gpu:0", "gpu_pinned", "npu:1" (custom), "undefined (type 7)": for messages. */
void pd__place_format(pd_place place, char *buf, size_t size);
/* PD_OK if this build can hold memory on `place`: CPU only for now. Otherwise
 * PD_ERR_UNAVAILABLE (GPU, GPU-pinned, custom) or PD_ERR_INVALID_ARGUMENT (undefined, or a
 * CPU place with a device id), with a message naming `who` and the place. */
pd_status pd__place_check(const char *who, pd_place place);
/* The accepting case of pd__place_check, inline and without a message: for hot paths, which
 * call pd__place_check only once this says no (to get the message). */
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
/* Converts n elements of src_type at src into dst_type at dst (both valid dtypes, buffers not
 * overlapping) with pd_tensor_cast's rules; same dtype copies the bytes. */
void pd__cast_elements(void *dst, pd_data_type dst_type, const void *src, pd_data_type src_type,
                       size_t n);

/* --- npy.c / npz.c (NumPy files) ------------------------------------------------------------ */

#include <stdio.h>

/* Longest .npy preamble + header dict pdext writes (8 dims of 20 digits fit easily). */
#define PD__NPY_HEADER_MAX 512

/* A file being written under a temporary name next to `path`, renamed over it on commit. */
typedef struct pd__atomic_file {
    FILE *fp;
    char *tmp;        /* malloc'd temporary path */
    const char *path; /* the target (borrowed) */
} pd__atomic_file;

PD__SIBLING_API pd_status pd__atomic_open(const char *who, const char *path, pd__atomic_file *f);
/* Flushes, syncs and renames; on failure removes the temporary file. Either way f is done. */
PD__SIBLING_API pd_status pd__atomic_commit(const char *who, pd__atomic_file *f);
/* Closes and removes the temporary file. */
PD__SIBLING_API void pd__atomic_abort(pd__atomic_file *f);
/* Fails, naming `who`, unless t is a defined host tensor of a dtype numpy has. */
PD__SIBLING_API pd_status pd__npy_check_savable(const char *who, const pd_tensor *t);
/* Writes t's .npy preamble and header (64-byte aligned total) into buf; returns its length,
 * 0 if it does not fit. t must have passed pd__npy_check_savable. */
PD__SIBLING_API size_t pd__npy_header_format(const pd_tensor *t, char *buf, size_t cap);
/* Parses a whole .npy image in memory into a new CPU tensor; messages name who and origin. */
PD__SIBLING_API pd_status pd__npy_parse(const char *who, const char *origin, const void *data, size_t size,
                        pd_tensor *out);

#endif /* PD_INTERNAL_H */
