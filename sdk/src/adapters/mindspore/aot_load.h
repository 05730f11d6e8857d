/*
 * aot_load.h - the C half of the MindSpore AOT adapter: the state of one registered AOT
 * function (pd_aoti_op), shared by registration (aot_load.c), the kernel and infer
 * trampolines (aot_kernel.c) and the library checks (aot_elf.c).
 *
 * An AOT op is an ordinary op of the registry: pd_aoti_op begins with the pd_op_def the
 * registry parsed, so the trampolines find their state from the running call's definition.
 * Its module owns it (pd__module_load_owned) and releases it on unload.
 */
#ifndef PD_AOT_LOAD_H
#define PD_AOT_LOAD_H

#include "adapters/mindspore/aot_internal.h"
#include "call/kernel_ctx.h"
#include "pd_internal.h"
#include "pdext_aot.h"
#include "pdext_aot_bundle.h"

#include <pthread.h>

/* Workspaces are rounded up to this, as MindSpore's memory pool rounds every block. */
#define PD_AOTI_WORKSPACE_ALIGN 512

/* What FInit made for one signature (input dtypes and shapes, attr values). Entries are
 * published on a list that only grows while the op lives, so a call reads it without a lock. */
typedef struct pd_aoti_entry {
    struct pd_aoti_entry *next;
    void *extra;        /* the AotExtra handed to every function for this signature */
    _Atomic bool ready; /* FInit (if any) succeeded; workspace sizes below are valid */
    int32_t n_workspaces;
    size_t *workspace_offsets; /* n_workspaces offsets into one block */
    size_t workspace_bytes;    /* the block: every size rounded up to 512 */
    size_t key_size;
    unsigned char key[];
} pd_aoti_entry;

typedef struct pd_aoti_op {
    pd_op_def def; /* first: ctx->op->def is &op->def */
    const pd_op_def *table[1];
    const pd_api *api_slot;
    void *handle; /* the library, RTLD_LAZY | RTLD_LOCAL */
    char *spec;   /* "library:function", the module's origin */
    char *library, *function, *name;
    pd_aoti_kernel_fn fn;
    pd_aoti_init_fn init;
    void *infer_shape, *infer_type;
    bool cxx11;
    bool cuda; /* a GPU kernel (.cu, or it calls the CUDA runtime) */
    /* The place type name its inputs must have ("gpu", "sim"), NULL for a CPU kernel: a
     * device kernel gets the call's stream and device pointers (aot_device.c). */
    const char *device;
    int32_t n_inputs, n_outputs, n_attrs;
    pd_aot_output outputs[PD_MAX_OUTPUTS];
    char *input_names[PD_MAX_INPUTS];
    char *output_names[PD_MAX_OUTPUTS];
    char *attr_decls[PD_MAX_ATTRS];
    char *attr_names[PD_MAX_ATTRS];
    pthread_mutex_t lock;             /* serializes adding entries and running FInit */
    _Atomic(pd_aoti_entry *) entries; /* newest first */
    _Atomic int64_t init_count;
} pd_aoti_op;

/* aot_elf.c: the library's string ABI (*cxx11: the new one), whether it calls the CUDA
 * runtime (*cuda) or launches on the simulated device (*sim); fails naming the library when
 * it is missing or not a 64-bit ELF shared object. */
pd_status pd_aoti_elf_abi(const char *who, const char *path, bool *cxx11, bool *cuda, bool *sim);
/* Up to 5 exported functions of the library named like `name`, ", "-separated, into buf. */
void pd_aoti_elf_similar(const char *path, const char *name, char *buf, size_t cap);
/* The type (STT_OBJECT, STT_TLS, ...) of the symbol `name` the library defines, when it is not
 * code (STT_FUNC, STT_GNU_IFUNC); NULL when it is code, undefined or unreadable. dlsym finds
 * data symbols too, and calling one runs its bytes. */
const char *pd_aoti_elf_not_code(const char *path, const char *name);

/* aot_kernel.c: the trampolines the op's definition points at, and the entry cleanup. */
void pd_aoti_kernel(pd_kernel_ctx *ctx);
void pd_aoti_infer_shape(pd_kernel_ctx *ctx);
void pd_aoti_infer_dtype(pd_kernel_ctx *ctx);
void pd_aoti_entries_free(pd_aoti_op *op);
/* The one entry of a function without FInit, made at registration. */
pd_status pd_aoti_entry_add_single(pd_aoti_op *op);

/* aot_device.c: checks that the call's inputs are on the places the kernel runs on (CPU
 * memory for a CPU kernel, the kernel's device type for a device kernel; ends the call naming
 * the input and both otherwise) and returns the stream to hand it: NULL for a CPU kernel,
 * pd_stream(ctx) for a device kernel. */
void *pd_aoti_call_stream(pd_kernel_ctx *ctx, const pd_aoti_op *op);
/* `bytes` of workspace for the call, on the kernel's place, freed when the call ends. */
void *pd_aoti_workspace(pd_kernel_ctx *ctx, const pd_aoti_op *op, size_t bytes);

/* Output j was given a shape at registration and FInferShape answered (ndim, shape) too (its
 * -1 dims taken from the given shape): ends the call naming both when they differ. */
void pd_aoti_check_given_shape(const pd_aoti_op *op, int32_t j, int32_t ndim, const int64_t *shape);

/* aot_load.c: registration steps shared with bundle ops (aot_bundle.c). pd_aoti_op_free takes
 * a half-made op too. pd_aoti_op_ready ends an op's set-up, given the status of the steps so
 * far: every output has a shape and a dtype from somewhere, and a function without Init gets
 * its single entry; any failure (earlier or there) frees the op and is returned. */
void pd_aoti_op_free(void *op);
pd_status pd_aoti_fill_names(pd_aoti_op *op, const pd_aot_options *o);
pd_status pd_aoti_op_ready(pd_aoti_op *op, pd_status s);

/* aot_bundle.c: the state of a bundle's AOT op (*out), made on first use (status + message
 * on failure). */
pd_status pd_aoti_bundle_state_get(pd_aot_bundle_op *b, pd_aoti_op **out);
/* The same for a running call: ends the call with the error when it cannot be made. */
pd_aoti_op *pd_aoti_bundle_state(const pd_op_def *def);

/* The state of the running call's op: pd_aot_load's ops carry it after their definition,
 * a bundle's get it from pd_aoti_bundle_state (one compare on pd_aot_load's path). */
static inline pd_aoti_op *pd_aoti_op_of(const pd_kernel_ctx *ctx)
{
    const pd_op_def *def = ctx->op->def;
    return def->kernel == pd_aoti_kernel ? (pd_aoti_op *)(uintptr_t)def : pd_aoti_bundle_state(def);
}

#endif /* PD_AOT_LOAD_H */
