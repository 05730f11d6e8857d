/*
 * pdext.h - the host API of libpdext: errors, tensors, the op registry, modules and the
 * runner. Link with `pkg-config --libs pdext`.
 *
 * Conventions:
 *   - Every function that can fail returns a pd_status (PD_OK == 0). On failure it also
 *     leaves a message on the calling thread, read with pd_last_error(), that names the op,
 *     the argument and what was expected. A failed call changes nothing: no half-made
 *     tensor, no half-registered module, nothing leaked.
 *   - Out-parameters are written only on success.
 *   - Nothing here prints, exits or aborts.
 *   - Thread safety: tensors are values; share them read-only. Registries are safe to use
 *     from many threads at once: lookups and runs take no lock; loads and unloads serialize
 *     among themselves. Unloading a module while one of its ops runs is the host's bug.
 */
#ifndef PDEXT_H
#define PDEXT_H

#include "pd_api.h"
#include "pd_base.h"
#include "pd_dtype.h"
#include "pd_module.h"
#include "pd_op.h"
#include "pd_place.h"
#include "pd_tensor.h"

PD_EXTERN_C_BEGIN
/* libpdext is built with hidden visibility; exactly the functions declared here are exported. */
#pragma GCC visibility push(default)
#include "pd_device.h" /* device tables and streams: exported too */

/* --- Errors and versions ----------------------------------------------------------------- */

/* Message of the last failed call on this thread; "" if none failed yet. Valid until the
 * next failing call on this thread. */
const char *pd_last_error(void);
/* Status of the last failed call on this thread (PD_OK if none). */
pd_status pd_last_status(void);
/* "PD_ERR_NOT_FOUND" ... for a status value. */
const char *pd_status_name(pd_status status);
/* PD_VERSION_STRING of the library (may differ from the headers'). */
const char *pd_version(void);
/* The function table the runtime hands to modules (hosts rarely need it). */
const pd_api *pd_runtime_api(void);

/* --- Tensors ------------------------------------------------------------------------------ */
/* Each constructor writes a new defined tensor holding one reference to *out; release it with
 * pd_tensor_release. CPU memory is 64-byte aligned. Other places allocate through their
 * device table (pd_device.h): GPU places load the CUDA plug-in on first use and fail with
 * PD_ERR_UNAVAILABLE naming what is missing (plug-in, driver, device); a custom type without a
 * table fails the same way; device OOM is PD_ERR_OUT_OF_MEMORY. Undefined places, device ids
 * out of range, bad dtypes, negative dims, ndim > PD_MAX_DIMS and sizes that overflow fail
 * with PD_ERR_INVALID_ARGUMENT. The data of a device tensor is a device address: read it on
 * the host through pd_tensor_copy_to(..., pd_place_cpu()), which waits for the device. */

pd_status pd_tensor_empty(pd_tensor *out, pd_data_type dtype, pd_place place, int32_t ndim,
                          const int64_t *shape);
/* Every element is `value` (converted to dtype; complex: value + 0i; bool: value != 0). */
pd_status pd_tensor_full(pd_tensor *out, pd_data_type dtype, pd_place place, int32_t ndim,
                         const int64_t *shape, double value);
pd_status pd_tensor_zeros(pd_tensor *out, pd_data_type dtype, pd_place place, int32_t ndim,
                          const int64_t *shape);
pd_status pd_tensor_ones(pd_tensor *out, pd_data_type dtype, pd_place place, int32_t ndim,
                         const int64_t *shape);
/* Same dtype, place and shape as `like`. */
pd_status pd_tensor_empty_like(pd_tensor *out, const pd_tensor *like);
pd_status pd_tensor_full_like(pd_tensor *out, const pd_tensor *like, double value);

/* Called exactly once, when the last reference to a wrapped buffer goes. */
typedef void (*pd_deleter_fn)(void *data, void *user);

/* Wraps `data` (dense row-major, of the given dtype/shape, on `place`) without copying. The
 * deleter (may be NULL: the buffer is borrowed) runs once when the last reference goes. On
 * failure the deleter is NOT called: the caller still owns the buffer. */
pd_status pd_tensor_from_buffer(pd_tensor *out, void *data, pd_data_type dtype, pd_place place,
                                int32_t ndim, const int64_t *shape, pd_deleter_fn deleter,
                                void *user);

/* A dense copy of src's elements (src may be strided) on `place`, between any two places,
 * on the thread's streams of the devices involved (pd_device.h); returns once host memory on
 * either side is done with (device-to-device copies stay queued on the stream). */
pd_status pd_tensor_copy_to(pd_tensor *out, const pd_tensor *src, pd_place place);
/* A new dense tensor of `dtype` with src's values (src may be strided) converted like C
 * conversions (floating -> integral truncates toward zero; real -> complex sets im = 0;
 * complex -> real keeps re; -> bool is != 0). Casting to the same dtype copies. */
pd_status pd_tensor_cast(pd_tensor *out, const pd_tensor *src, pd_data_type dtype);

/* --- Views: new tensors sharing src's storage (no element is copied) ----------------------
 * A view is dense when its elements happen to be (pd_is_contiguous), strided otherwise. Each
 * function takes its own reference to the storage; release the view like any tensor. */

/* Rows [begin, end) along axis 0. Requires ndim >= 1 and 0 <= begin <= end <= shape[0]. */
pd_status pd_tensor_slice(pd_tensor *out, const pd_tensor *src, int64_t begin, int64_t end);
/* Elements begin, begin + step, ... along `axis` (negative counts from the end), as numpy's
 * a[begin:end:step]: step > 0 takes begin <= i < end with 0 <= begin <= end <= shape[axis];
 * step < 0 walks backwards, taking begin >= i > end with -1 <= end <= begin < shape[axis]
 * (end -1: down to element 0), and gives negative strides. step 0 is an error. */
pd_status pd_tensor_slice_step(pd_tensor *out, const pd_tensor *src, int32_t axis, int64_t begin,
                               int64_t end, int64_t step);
/* Axes reordered: axis d of the result is axis dims[d] of src; dims is a permutation of
 * 0 .. ndim-1 (negative entries count from the end) and ndim must be src's. */
pd_status pd_tensor_permute(pd_tensor *out, const pd_tensor *src, int32_t ndim,
                            const int32_t *dims);
/* Axes a and b swapped (negative counts from the end). */
pd_status pd_tensor_transpose(pd_tensor *out, const pd_tensor *src, int32_t a, int32_t b);
/* src broadcast to `shape` by numpy's rules (src's axes align with the last ones of shape;
 * each is either equal or 1, and a 1 may grow); grown and new axes get stride 0, so every
 * element of an expanded axis is the same memory. -1 keeps src's size. */
pd_status pd_tensor_expand(pd_tensor *out, const pd_tensor *src, int32_t ndim,
                           const int64_t *shape);
/* Any view of src's storage: element [i...] at storage base + offset + sum(i[d] *
 * strides[d]) elements. Every element the view can reach must lie inside the storage, else
 * the call fails naming the axis and the bytes. For host code that knows the layout it asks
 * for (e.g. from DLPack); strides may be 0 or negative. */
pd_status pd_tensor_as_strided(pd_tensor *out, const pd_tensor *src, int32_t ndim,
                               const int64_t *shape, const int64_t *strides, int64_t offset);
/* View with a new shape of the same numel; one dimension may be -1. A strided src can be
 * reshaped only where its strides allow it (merged axes must be laid out as one); otherwise
 * the call fails and says to make it contiguous first (pd_tensor_contiguous). */
pd_status pd_tensor_reshape(pd_tensor *out, const pd_tensor *src, int32_t ndim,
                            const int64_t *shape);
/* A dense tensor with src's values: a new reference to src's storage when src is already
 * dense, else a dense copy. */
pd_status pd_tensor_contiguous(pd_tensor *out, const pd_tensor *src);

/* *dst becomes another owner of src's storage (dst must not hold a reference). */
void pd_tensor_retain(pd_tensor *dst, const pd_tensor *src);
/* Drops t's reference and makes *t undefined. NULL and undefined tensors are fine. */
void pd_tensor_release(pd_tensor *t);
/* How many references share t's storage (0 if undefined); for tests and debugging. */
int64_t pd_tensor_use_count(const pd_tensor *t);
/* Frees the big blocks (>= 1 MiB) that the runtime keeps after their tensors die, for reuse
 * by the next allocation of a similar size (at most 4 blocks and PDEXT_STORAGE_CACHE_MB MiB,
 * default 256; 0 disables the cache). Call it to give that memory back early. */
void pd_storage_cache_clear(void);

/* --- Device types and places ----------------------------------------------------------------
 * pd_place_custom and pd_place_type_name are documented in pd_place.h; op code calls the same
 * spellings through the function table (pd_api.h), hosts the functions below. */
#undef pd_place_custom
#undef pd_place_type_name
pd_place pd_place_custom(const char *type_name, int32_t device_id);
const char *pd_place_type_name(const pd_place *p);

/* Registers custom device type `name` and writes its number (>= PD_PLACE_CUSTOM_FIRST) to
 * *type; a name registered before gives its number again. Names are 1 to
 * PD_PLACE_CUSTOM_NAME_MAX characters of [A-Za-z0-9_] and not a built-in type's name; at
 * most 64 custom types exist per process. Thread-safe; lookups never wait for it. */
pd_status pd_device_type_register(const char *name, int32_t *type);
/* The registered name of custom device type number `type`, or NULL. */
const char *pd_device_type_name(int32_t type);

/* --- Registry and modules ----------------------------------------------------------------- */

typedef struct pd_registry pd_registry; /* a set of registered ops */
typedef struct pd_module pd_module;     /* a loaded library (or linked op table) */
typedef struct pd_op pd_op;             /* one registered op; valid until its module unloads */

pd_status pd_registry_create(pd_registry **out);
/* Unloads every module of the registry and frees it. NULL is fine. */
void pd_registry_destroy(pd_registry *reg);

/* Loads the shared library at `path` as a module: checks its ABI version (same major, minor
 * not newer than the runtime's), hands it the function table, validates every op definition
 * and registers them all, or none (the registry is left exactly as before on any error). */
pd_status pd_module_load(pd_registry *reg, const char *path, pd_module **out);
/* Registers the op table described by `info` (a static bundle, the program's linked ops);
 * `origin` names it in messages. Same checks as pd_module_load. */
pd_status pd_module_load_info(pd_registry *reg, const pd_module_info *info, const char *origin,
                              pd_module **out);
/* Removes the module's ops from its registry, then closes the library. NULL is fine. */
pd_status pd_module_unload(pd_module *module);
/* Library path, or the origin given to pd_module_load_info. */
const char *pd_module_path(const pd_module *module);
/* Ops of the module, in table order. */
int32_t pd_module_op_count(const pd_module *module);
const pd_op *pd_module_op(const pd_module *module, int32_t index);
/* The module's own info block (ABI version, SDK version, compiler). */
const pd_module_info *pd_module_get_info(const pd_module *module);

/* Registers the ops linked into the calling program (or library) itself: the "pd_ops"
 * section of the unit that calls it. Returns PD_OK with no module (*out = NULL) when there
 * are none. */
static inline pd_status pd_register_linked_ops(pd_registry *reg, pd_module **out)
{
    pd_module_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.abi_major = PD_ABI_MAJOR;
    info.abi_minor = PD_ABI_MINOR;
    info.ops_begin = __start_pd_ops;
    info.ops_end = __stop_pd_ops;
    info.api_slot = &pd__api;
    info.sdk_version = PD_VERSION_STRING;
    info.compiler = PD__COMPILER_ID;
    info.invoke = pd__cxx_invoke;
    if (out)
        *out = NULL;
    if (info.ops_begin == info.ops_end)
        return PD_OK;
    return pd_module_load_info(reg, &info, "(linked into the program)", out);
}

/* The op registered under `name` ("custom_relu", "custom_relu_grad", ...), or NULL with a
 * PD_ERR_NOT_FOUND message. Lock-free. */
const pd_op *pd_op_find(const pd_registry *reg, const char *name);
/* Number of registered ops and the index-th of them (sorted by name); for listing. */
int32_t pd_registry_op_count(const pd_registry *reg);
const pd_op *pd_registry_op_at(const pd_registry *reg, int32_t index);

/* What an op is: its registered name, kind, definition and grad ops (NULL if none). */
const char *pd_op_name(const pd_op *op);
pd_op_kind pd_op_get_kind(const pd_op *op);
const pd_op_def *pd_op_definition(const pd_op *op);
const pd_op *pd_op_grad(const pd_op *op);
const pd_module *pd_op_module(const pd_op *op);
/* Declared inputs/outputs/attrs, counted (the def's lists end at the first NULL). */
int32_t pd_op_input_count(const pd_op *op);
int32_t pd_op_output_count(const pd_op *op);
int32_t pd_op_attr_count(const pd_op *op);
/* The input whose shape and dtype output `index` takes when the op's infer functions leave
 * them unset (the runner's default inference: the input an in-place output aliases, "X" for
 * "X@GRAD", the one input of a one-in one-out op, input 0 under PD_OP_OUTPUTS_LIKE_INPUT0);
 * -1 when none. Hosts that carry symbolic sizes through the default inference read it here
 * instead of repeating the rule. */
int32_t pd_op_output_mirrors(const pd_op *op, int32_t index);
/* How a grad op binds to the op it differentiates (its forward op: "x" for "x_grad", "x_grad"
 * for "x_grad_grad"), computed once when the registry links the two (the grad op's load, and
 * any later load or unload that changes which op its forward op is), never per call; the
 * tape, pd_gradcheck and every framework front read it. Each input of the grad op is, by its
 * name (without @VECTOR / @OPTIONAL):
 *   - "<out>@GRAD" where <out> is a forward output: the gradient of that output
 *     (PD_GRAD_FROM_OUTPUT_GRAD, position = the output's index);
 *   - else the name of a forward input: that input's value (PD_GRAD_FROM_INPUT);
 *   - else the name of a forward output: that output's value (PD_GRAD_FROM_OUTPUT);
 *   - else none of these (PD_GRAD_FROM_NONE, position -1): the tape and gradcheck refuse to
 *     run such a grad op, naming the input.
 * Each output "<in>@GRAD" of the grad op is the gradient of forward input <in>. The order of
 * the grad op's declarations is free. Values are stable (ABI-minor rule: new ones get new
 * numbers). */
typedef enum pd_grad_source {
    PD_GRAD_FROM_NONE = 0,
    PD_GRAD_FROM_OUTPUT_GRAD = 1,
    PD_GRAD_FROM_INPUT = 2,
    PD_GRAD_FROM_OUTPUT = 3
} pd_grad_source;
/* Where input `index` of grad op `grad` comes from, and its position there in *position (may
 * be NULL). PD_GRAD_FROM_NONE with -1 for a forward op, a grad op whose forward op is not
 * registered (any more), a NULL op or an index out of range. Lock-free. */
pd_grad_source pd_op_grad_input_source(const pd_op *grad, int32_t index, int32_t *position);
/* The forward input whose gradient output `index` of grad op `grad` is ("X@GRAD" -> the
 * position of "X"), or -1 when it is none (or for a forward op, a NULL op, a bad index). */
int32_t pd_op_grad_output_target(const pd_op *grad, int32_t index);
/* Attr index's name (without ": type") and type. */
const char *pd_op_attr_name(const pd_op *op, int32_t index);
pd_attr_type pd_op_attr_type(const pd_op *op, int32_t index);

/* A declared input or output as the runtime parsed it. Strings belong to the op (valid until
 * its module unloads). */
typedef struct pd_arg_info {
    const char *name; /* the name a host binds by: the declaration without its @VECTOR and
                       * @OPTIONAL segments ("X", "Out@GRAD"); other segments, including
                       * unknown ones such as "@VECTORS", stay part of it */
    const char *decl; /* as declared ("X@VECTOR") */
    bool is_vector;   /* declared with @VECTOR: takes any number of tensors */
    bool is_optional; /* declared with @OPTIONAL: may be absent */
} pd_arg_info;

/* A declared attr as the runtime parsed it ("axis: int64_t = -1"). */
typedef struct pd_attr_info {
    const char *name;         /* "axis" */
    const char *decl;         /* as declared */
    pd_attr_type type;        /* PD_ATTR_INT64 */
    bool has_default;         /* declared with "= value": a call may leave it out */
    const char *default_text; /* the default as written, trimmed ("-1"); NULL if none */
    pd_attr default_value;    /* the value a call that leaves it out gets (name set; type
                               * PD_ATTR_UNDEFINED when there is no default); vector and
                               * string values point into the op */
} pd_attr_info;

/* Input / output / attr `index` of op (declared order) into *out. PD_ERR_INVALID_ARGUMENT for
 * a NULL argument or an index out of range. */
pd_status pd_op_input_info(const pd_op *op, int32_t index, pd_arg_info *out);
pd_status pd_op_output_info(const pd_op *op, int32_t index, pd_arg_info *out);
pd_status pd_op_attr_info(const pd_op *op, int32_t index, pd_attr_info *out);

/* Whether `name` is a C identifier (a letter or '_', then letters, digits and '_'; ASCII): the
 * one rule for the names of ops and attrs, static bundles, `pdext new` and the function of an
 * AOT spec (pd_aot_spec_split). False for NULL. */
bool pd_name_is_identifier(const char *name);

/* The directory of the file libpdext's code was loaded from (libpdext.so, or the program that
 * links it statically), without a trailing '/', into dir; false when unknown or longer than
 * size. Where pdext's plug-ins are looked for first (the build and the install put them there):
 * the CUDA plug-in, the MindSpore AOT adapter. */
bool pd_runtime_dir(char *dir, size_t size);

/* --- Running ops -------------------------------------------------------------------------- */

/* One argument slot of a call: the tensors bound to one declared input or output. */
typedef struct pd_arg {
    const char *name;   /* declared name ("X", "Out@GRAD"; @VECTOR / @OPTIONAL may be left
                         * off) or NULL to bind by position */
    pd_tensor *tensors; /* inputs: the tensors (an inplace op writes into them);
                         * outputs: where the runner writes results (caller-owned array), or
                         * NULL (with count 0) to have the runner make an array of exactly as
                         * many items as the output has: see pd_arg_release */
    int32_t count;      /* inputs: how many (0 for an absent optional); outputs: capacity of
                         * `tensors` on entry, how many were written on return */
} pd_arg;

/* Outputs whose item count the host cannot know before the call (a vector output: a split,
 * an op whose kernel decides) need no guessed room: an output pd_arg given tensors NULL and
 * count 0 receives, on success, an array the runner allocated with exactly `count` items
 * (tensors stays NULL when the output has none; on failure nothing is allocated). The host
 * owns it: pd_arg_release(&arg) releases its tensors, frees the array and sets the pd_arg
 * back to NULL / 0. Only for such runner-made arrays: a host's own array is the host's to
 * free. Works with pd_op_run, pd_run, pd_op_run_into (an output given no tensors is made as
 * pd_op_run makes it) and pd_run_async; pd_op_infer instead says how many items each output
 * has when a slot is too small (call it again with that room). */
void pd_arg_release(pd_arg *a);

/* Runs `op`. Inputs are bound by name or position; every non-optional input needs a defined
 * tensor (vector inputs one or more). Attrs are matched by name to the declared ones; a
 * missing attr takes its declared default, and one without a default, an unknown or a wrongly
 * typed attr is an error naming it. Infer functions run first,
 * then the kernel; outputs are checked against the inferred shapes and dtypes. On success each
 * output slot's tensors are new references the caller releases (an output the op made as a
 * view may be strided: pd_is_contiguous tells, pd_tensor_contiguous makes it dense); an input
 * whose shape, strides or data reach outside its storage is refused, naming it; on failure nothing
 * is written (an output slot given an undefined tensor may come back cleared to
 * PD_TENSOR_UNDEFINED) and everything the call made is freed. Safe to call from many threads at
 * once. */
pd_status pd_op_run(const pd_op *op, const pd_arg *inputs, int32_t n_inputs, const pd_attr *attrs,
                    int32_t n_attrs, pd_arg *outputs, int32_t n_outputs);
/* The same, finding the op by name in `reg` first. */
pd_status pd_run(const pd_registry *reg, const char *name, const pd_arg *inputs, int32_t n_inputs,
                 const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs, int32_t n_outputs);

/* pd_op_run writing the results into the host's own memory: an output whose pd_arg's first
 * tensor is defined (dtype set; data, shape and place filled in, storage NULL or the host's own
 * reference) is written into the pd_arg's tensors (a vector output: one per item), which must be
 * dense and of the dtype, shape and place the call makes; an output given PD_TENSOR_UNDEFINED
 * is made as pd_op_run makes it. So hosts that own the output memory (XLA, ONNX Runtime, a
 * framework's preallocated tensor) get results without a copy: the kernel's pd_output is a
 * view of that memory. An output the kernel sets another way (pd_set_output, an inplace
 * output) is copied in. The given tensors themselves are never changed (on return the
 * pd_arg's count says how many items were written); a destination that does not fit is
 * refused before the kernel writes to it, naming the output, what was given and what the call
 * makes. On failure the destinations' memory may hold partial results. Unlike pd_op_run, every
 * output tensor must be initialised: defined, or PD_TENSOR_UNDEFINED (pd_op_run accepts any
 * contents, as it only writes them). Not for pd_run_async, which makes its outputs itself. */
pd_status pd_op_run_into(const pd_op *op, const pd_arg *inputs, int32_t n_inputs,
                         const pd_attr *attrs, int32_t n_attrs, pd_arg *outputs, int32_t n_outputs);

/* What a call of `op` on these inputs and attrs would output, without running it: for each of
 * the first n_outputs declared outputs (by position), outputs[o].tensors[0..count-1] receive
 * the items' dtype, rank, shape and dense strides, on the place the call would use; their data
 * is NULL and they hold no storage (nothing to release). On entry outputs[o].count is the room
 * in outputs[o].tensors; on return, the item count (a vector output's may be larger than one; an
 * optional output the op would leave unset comes back undefined). When a slot has too little
 * room, nothing is written, every outputs[o].count is set to the items that output has, and
 * PD_ERR_INVALID_ARGUMENT is returned: call again with that much room. The inputs need dtype, shape
 * and place only: their data is not read by the runtime and may be NULL (an infer function that
 * reads an input's data must not be asked this way). Infer functions, attr defaults and the
 * checks run exactly as in pd_op_run, with the same messages; an output whose shape only the
 * kernel knows is refused, naming it. This is what hosts use for their trace-time shapes (torch
 * fake kernels, JAX, ONNX Runtime shape inference). Safe from many threads at once. */
pd_status pd_op_infer(const pd_op *op, const pd_arg *inputs, int32_t n_inputs, const pd_attr *attrs,
                      int32_t n_attrs, pd_arg *outputs, int32_t n_outputs);

/* Argument slot builders: one tensor by position, or a named list. */
static inline pd_arg pd_arg_of(pd_tensor *t)
{
    pd_arg a = {NULL, t, 1};
    return a;
}
static inline pd_arg pd_arg_named(const char *name, pd_tensor *tensors, int32_t count)
{
    pd_arg a = {name, tensors, count};
    return a;
}

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_H */
