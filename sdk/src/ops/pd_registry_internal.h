/*
 * pd_registry_internal.h - what opdef.c, registry.c and module.c share: the registry and
 * module structs, the immutable name -> op snapshot that lookups read without a lock, and
 * the parse step that turns one pd_op_def into a struct pd_op.
 *
 * Concurrency model. Readers (pd_op_find, pd_registry_op_at, the runner) load the current
 * snapshot through an atomic pointer and never take a lock. Writers (load, unload) hold the
 * registry's mutex, build a whole new snapshot, swap it in, and keep the old one on a retired
 * list until pd_registry_destroy, so a reader still walking it never touches freed memory.
 * A snapshot owns copies of the op names it indexes, so probing never dereferences an op of a
 * module that has since been unloaded.
 */
#ifndef PD_REGISTRY_INTERNAL_H
#define PD_REGISTRY_INTERNAL_H

#include "pd_internal.h"

#include <pthread.h>

/* One slot of a snapshot's hash table, and of its sorted listing. */
typedef struct pd__snap_entry {
    uint64_t hash;     /* pd__name_hash(name) */
    const char *name;  /* copy owned by the snapshot */
    const pd_op *op;
} pd__snap_entry;

/* An immutable index of the registered ops: one allocation, never changed once published. */
typedef struct pd__snapshot {
    struct pd__snapshot *retired_next; /* the registry's list of replaced snapshots */
    int32_t count;
    uint32_t mask;             /* hash capacity - 1 (capacity a power of two >= 2 * count) */
    pd__snap_entry *slots;     /* open addressing, linear probing; op == NULL: empty */
    const pd_op **sorted;      /* count ops sorted by name, for listing */
} pd__snapshot;

struct pd_module {
    pd_registry *reg;
    pd_module *prev, *next;   /* the registry's modules, in load order */
    char *path;               /* library path or the origin given to pd_module_load_info */
    void *handle;             /* dlopen handle; NULL for op tables loaded from an info block */
    pd_module_info info;      /* the module's info block, zero-filled past its struct_size */
    int32_t n_ops;
    pd_op *ops;               /* in table order */
};

struct pd_registry {
    pthread_mutex_t lock;                /* serializes loads and unloads */
    _Atomic(pd__snapshot *) current;     /* what readers see */
    pd__snapshot *retired;               /* replaced snapshots, freed on destroy */
    pd_module *first, *last;             /* loaded modules, oldest first */
};

/* --- opdef.c ------------------------------------------------------------------------------ */

/* Parses and validates one definition on its own (names, lists, attr declarations, inplace
 * map) into *op, whose module field is set to `module`. Cross-op checks (duplicates, grad
 * links) are module.c's. On failure the message names the op and the offending string;
 * the caller prefixes it with the function and module. */
pd_status pd__op_parse(const pd_op_def *def, int32_t index, pd_module *module, pd_op *op);

/* Parses an attr type spelling ("int64_t", "std::vector< int >", "int[]", ...); white space
 * is allowed anywhere except inside a word. PD_ATTR_UNDEFINED when unknown. */
pd_attr_type pd__attr_type_parse(const char *spelling);

/* The registered name of an op of `kind` for forward name `name` into buf (false: too long). */
bool pd__op_registered_name(const char *name, pd_op_kind kind, char *buf, size_t size);

/* --- registry.c --------------------------------------------------------------------------- */

uint64_t pd__name_hash(const char *name);
/* The op named `name` in snapshot `snap` (may be NULL), or NULL. */
const pd_op *pd__snapshot_find(const pd__snapshot *snap, const char *name);
/* A new snapshot indexing every op of the registry's modules except `skip` (may be NULL),
 * plus the ops of `extra` (may be NULL, not yet linked into the list). NULL on out of memory
 * (message set). Call with the lock held. */
pd__snapshot *pd__snapshot_build(pd_registry *reg, const pd_module *skip, const pd_module *extra);
/* Makes `snap` the current snapshot: recomputes every op's grad/forward links from it, swaps
 * it in and retires the previous one. Call with the lock held. */
void pd__snapshot_publish(pd_registry *reg, pd__snapshot *snap);

/* --- module.c ----------------------------------------------------------------------------- */

/* Unloads every module, newest first (so no grad op outlives the forward op it was checked
 * against); for pd_registry_destroy. */
void pd__module_unload_all(pd_registry *reg);

#endif /* PD_REGISTRY_INTERNAL_H */
