/*
 * pd_registry_internal.h - what opdef.c, registry.c and module.c share: the registry and
 * module structs, the immutable name -> op snapshot that lookups read without a lock, and
 * the parse step that turns one pd_op_def into a struct pd_op.
 *
 * Concurrency model. Readers (pd_op_find, pd_registry_op_at, pd_op_grad, pd_run) pin the
 * current snapshot (pd__snapshot_pin), read it, and unpin it; they never take a lock.
 * Writers (load, unload) hold the registry's mutex, build a whole new snapshot (op names,
 * hash index, sorted listing and grad links, all resolved in the new snapshot: published ops
 * are never written), swap it in and retire the old one.
 *
 * Reclaiming retired snapshots. A pin is an increment of one of PD__READER_STRIPES counters
 * (each on its own cache line; a thread always uses the same one, so threads rarely share a
 * line) followed by the load of `current`; unpinning decrements it. After a swap the writer
 * reads every counter: if all are zero, no reader can still hold a retired snapshot (all four
 * operations are seq_cst, so a reader whose increment comes after the writer's read loads the
 * new `current`), and every retired snapshot is freed. Otherwise they stay on the retired list
 * and the next load, unload or pd_registry_destroy tries again. A pin lasts for one hash probe
 * (or one listing read), so a registry is rarely caught mid-lookup; a loop of loads and
 * unloads keeps at most one snapshot alive besides the current one.
 */
#ifndef PD_REGISTRY_INTERNAL_H
#define PD_REGISTRY_INTERNAL_H

#include "tensor/tensor_internal.h"

#include "ops/decl.h" /* parsed declarations: pd__arg_decl, pd__attr_decl */

#include <pthread.h>

/* --- A registered op (built by opdef.c / registry.c, read by the runner) ------------------- */

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
    uint32_t strided_inputs; /* bit i: input i may reach the kernel strided (opdef.c) */
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

/* opdef.c: validates pd_op_def.flags / strided_inputs of a parsed op and stores the mask of inputs
 * that may reach its kernel strided in op->strided_inputs. */
pd_status pd__op_parse_strided(const pd_op_def *def, pd_op *op);

/* The function table handed to every module the registry loads (same as pd_runtime_api()).
 * Defined at the top of the core (api/api_table.c, which names the implementations of every
 * layer); the module loader only passes the pointer on. */
const pd_api *pd__runtime_api(void);

/* Levenshtein distance of a and b (ASCII case folded with fold_case), for "did you mean"
 * suggestions on error paths; (size_t)-1 when either is PD__NAME_MAX characters or longer. */
PD__SIBLING_API size_t pd__edit_distance(const char *a, const char *b, bool fold_case);

/* A grad op's binding to the forward op it is linked to (pdext.h: pd_grad_source), computed
 * with the link (registry.c), so that it always describes the forward op pd_op_grad and the
 * tape see, also after a reload replaced that op; all PD_GRAD_FROM_NONE / -1 without one. */
typedef struct pd__grad_binding {
    int16_t from[PD_MAX_INPUTS];       /* per input: a pd_grad_source */
    int16_t from_index[PD_MAX_INPUTS]; /* per input: its position there, or -1 */
    int16_t target[PD_MAX_OUTPUTS];    /* per output: the forward input, or -1 */
} pd__grad_binding;

/* One slot of a snapshot's hash table. */
typedef struct pd__snap_entry {
    uint64_t hash;    /* pd__name_hash(name) */
    const char *name; /* copy owned by the snapshot */
    const pd_op *op;
    const pd_op *grad;    /* the op registered as <name>_grad of the next kind, or NULL */
    const pd_op *forward; /* for grad ops: the op they differentiate, or NULL */
    /* With `forward`: how the grad op binds to it (in the snapshot's bindings, kept out of the
     * slot so that a by-name probe reads no more memory); else NULL. */
    const pd__grad_binding *binding;
} pd__snap_entry;

/* An immutable index of the registered ops: one allocation, never changed once published. */
typedef struct pd__snapshot {
    struct pd__snapshot *retired_next; /* the registry's list of replaced snapshots */
    int32_t count;
    uint32_t mask;              /* hash capacity - 1 (capacity a power of two >= 2 * count) */
    pd__snap_entry *slots;      /* open addressing, linear probing; op == NULL: empty */
    const pd_op **sorted;       /* count ops sorted by name, for listing */
    pd__grad_binding *bindings; /* room for count; the linked grad ops' use the first ones */
} pd__snapshot;

struct pd_module {
    pd_registry *reg;
    pd_module *prev, *next; /* the registry's modules, in load order */
    char *path;             /* library path or the origin given to pd_module_load_info */
    void *handle;           /* dlopen handle; NULL for op tables loaded from an info block */
    pd_module_info info;    /* the module's info block, zero-filled past its struct_size */
    int32_t n_ops;
    pd_op *ops; /* in table order */
    /* What owns the op table of a module registered by an adapter (pd__module_load_owned):
     * released after the module is closed. NULL otherwise. */
    void (*release)(void *owner);
    void *owner;
    /* Executor calls of its ops queued or running (exec/submit.c): unloading waits for them,
     * since a worker reads the op and runs the module's code until its call retires. */
    atomic_long in_flight;
};

#define PD__READER_STRIPES 16

/* One reader counter, alone on its cache line. */
typedef struct pd__reader_stripe {
    _Alignas(64) atomic_long pins;
} pd__reader_counter;

struct pd_registry {
    pthread_mutex_t lock;                           /* serializes loads and unloads */
    _Atomic(pd__snapshot *) current;                /* what readers see */
    pd__snapshot *retired;                          /* replaced snapshots not yet freed */
    pd_module *first, *last;                        /* loaded modules, oldest first */
    pd__reader_counter readers[PD__READER_STRIPES]; /* pins in progress (see above) */
};

/* This thread's reader stripe plus one (0 until its first pin), and the slow path that
 * assigns it (round robin over the stripes). */
extern _Thread_local unsigned pd__reader_stripe __attribute__((tls_model("initial-exec")));
unsigned pd__reader_stripe_assign(void);
static inline unsigned pd__reader_stripe_index(void)
{
    unsigned s = pd__reader_stripe;
    return s ? s - 1 : pd__reader_stripe_assign();
}

/* Pins and returns the current snapshot (may be NULL) for a lock-free read; *pin receives
 * what pd__snapshot_unpin needs. Keep the pin short: a writer frees retired snapshots only
 * when no pin is held. */
static inline const pd__snapshot *pd__snapshot_pin(const pd_registry *reg, atomic_long **pin)
{
    pd_registry *r = (pd_registry *)reg; /* the counters are the only part a reader writes */
    atomic_long *c = &r->readers[pd__reader_stripe_index()].pins;
    atomic_fetch_add_explicit(c, 1, memory_order_seq_cst);
    *pin = c;
    return atomic_load_explicit(&r->current, memory_order_seq_cst);
}
static inline void pd__snapshot_unpin(atomic_long *pin)
{
    atomic_fetch_sub_explicit(pin, 1, memory_order_release);
}

/* The current snapshot, for a writer holding the registry's lock (nothing frees it then). */
static inline const pd__snapshot *pd__registry_snapshot(const pd_registry *reg)
{
    return atomic_load_explicit(&((pd_registry *)reg)->current, memory_order_relaxed);
}

/* Snapshots allocated and not yet freed, over all registries; for tests. */
int64_t pd__snapshot_live_count(void);

/* --- opdef.c ------------------------------------------------------------------------------ */

/* Parses and validates one definition on its own (names, lists, attr declarations, inplace
 * map) into *op, whose module field is set to `module`. Cross-op checks (duplicates, grad
 * links) are module.c's. On failure the message names the op and the offending string;
 * the caller prefixes it with the function and module. */
pd_status pd__op_parse(const pd_op_def *def, int32_t index, pd_module *module, pd_op *op);

/* Frees what pd__op_parse allocated for the op (its attr defaults); the op stays readable. */
void pd__op_free(pd_op *op);

/* --- registry.c --------------------------------------------------------------------------- */

uint64_t pd__name_hash(const char *name);
/* The entry of the op named `name` in snapshot `snap` (may be NULL), or NULL. */
const pd__snap_entry *pd__snapshot_entry(const pd__snapshot *snap, const char *name);
/* Its op, or NULL. */
const pd_op *pd__snapshot_find(const pd__snapshot *snap, const char *name);
/* The op named `name` in reg's current snapshot (pinned for the probe only), or NULL without
 * a message: the runner's by-name lookup. */
const pd_op *pd__registry_lookup(const pd_registry *reg, const char *name);
/* The forward op of a registered grad op in its registry's current snapshot, or NULL. */
const pd_op *pd__op_forward(const pd_op *op);
/* A new snapshot indexing every op of the registry's modules except `skip` (may be NULL),
 * plus the ops of `extra` (may be NULL, not yet linked into the list), with grad links
 * resolved among them. NULL on out of memory (message set). Call with the lock held. */
pd__snapshot *pd__snapshot_build(pd_registry *reg, const pd_module *skip, const pd_module *extra);
/* Makes `snap` the current snapshot, retires the previous one and frees the retired ones no
 * reader can hold (see above). Call with the lock held. */
void pd__snapshot_publish(pd_registry *reg, pd__snapshot *snap);

/* --- module.c ----------------------------------------------------------------------------- */

/* Unloads every module, newest first (so no grad op outlives the forward op it was checked
 * against); for pd_registry_destroy. */
void pd__module_unload_all(pd_registry *reg);
/* The module of reg registered from the op table that `info` describes (same ops_begin and
 * ops_end, no library), or NULL: what makes pd_bundle_register idempotent. Takes the lock. */
pd_module *pd__registry_find_table(pd_registry *reg, const pd_module_info *info);

#endif /* PD_REGISTRY_INTERNAL_H */
