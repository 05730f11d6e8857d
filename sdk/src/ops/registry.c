/*
 * registry.c - the set of registered ops: lock-free lookup by name through an immutable
 * snapshot, listing, and the accessors of a registered op.
 *
 * pd_op_find sits on the by-name run path, so it does one atomic load, hashes the name and
 * probes an open-addressing table whose entries carry the hash and a private copy of the
 * name: no lock, no reference count, and nothing it reads is ever freed while the registry
 * lives (see pd_registry_internal.h). Loads and unloads are rare; they rebuild the whole
 * snapshot under the registry's mutex, which keeps the reader side trivially correct.
 */
#include "ops/pd_registry_internal.h"

#include <stdlib.h>
#include <string.h>

/* FNV-1a: short names, no need for anything stronger. */
uint64_t pd__name_hash(const char *name)
{
    uint64_t h = 14695981039346656037ull;
    for (const unsigned char *p = (const unsigned char *)name; *p; ++p) {
        h ^= *p;
        h *= 1099511628211ull;
    }
    return h;
}

const pd_op *pd__snapshot_find(const pd__snapshot *snap, const char *name)
{
    if (snap == NULL || snap->count == 0)
        return NULL;
    uint64_t h = pd__name_hash(name);
    for (uint32_t i = (uint32_t)h & snap->mask;; i = (i + 1) & snap->mask) {
        const pd__snap_entry *e = &snap->slots[i];
        if (e->op == NULL)
            return NULL;
        if (e->hash == h && strcmp(e->name, name) == 0)
            return e->op;
    }
}

static int compare_ops_by_name(const void *a, const void *b)
{
    return strcmp((*(const pd_op *const *)a)->name, (*(const pd_op *const *)b)->name);
}

/* Counts the ops a snapshot will index. */
static size_t count_ops(const pd_registry *reg, const pd_module *skip, const pd_module *extra,
                        size_t *name_bytes)
{
    size_t n = 0;
    *name_bytes = 0;
    for (const pd_module *m = reg->first; m; m = m->next) {
        if (m == skip)
            continue;
        for (int32_t i = 0; i < m->n_ops; ++i)
            *name_bytes += strlen(m->ops[i].name) + 1;
        n += (size_t)m->n_ops;
    }
    if (extra) {
        for (int32_t i = 0; i < extra->n_ops; ++i)
            *name_bytes += strlen(extra->ops[i].name) + 1;
        n += (size_t)extra->n_ops;
    }
    return n;
}

static void snapshot_insert(pd__snapshot *snap, const pd_op *op, char **pool)
{
    size_t len = strlen(op->name) + 1;
    memcpy(*pool, op->name, len);
    uint64_t h = pd__name_hash(op->name);
    uint32_t i = (uint32_t)h & snap->mask;
    while (snap->slots[i].op != NULL)
        i = (i + 1) & snap->mask;
    snap->slots[i].hash = h;
    snap->slots[i].name = *pool;
    snap->slots[i].op = op;
    snap->sorted[snap->count++] = op;
    *pool += len;
}

pd__snapshot *pd__snapshot_build(pd_registry *reg, const pd_module *skip, const pd_module *extra)
{
    size_t name_bytes;
    size_t n = count_ops(reg, skip, extra, &name_bytes);
    size_t cap = 8;
    while (cap < 2 * n)
        cap *= 2;
    /* One block: header, hash slots, sorted pointers, names. */
    size_t bytes = sizeof(pd__snapshot) + cap * sizeof(pd__snap_entry) + n * sizeof(pd_op *) +
                   name_bytes;
    pd__snapshot *snap = calloc(1, bytes);
    if (snap == NULL) {
        pd__fail(PD_ERR_OUT_OF_MEMORY, "out of memory indexing %zu ops", n);
        return NULL;
    }
    snap->mask = (uint32_t)(cap - 1);
    snap->slots = (pd__snap_entry *)(snap + 1);
    snap->sorted = (const pd_op **)(snap->slots + cap);
    char *pool = (char *)(snap->sorted + n);
    for (const pd_module *m = reg->first; m; m = m->next)
        if (m != skip)
            for (int32_t i = 0; i < m->n_ops; ++i)
                snapshot_insert(snap, &m->ops[i], &pool);
    if (extra)
        for (int32_t i = 0; i < extra->n_ops; ++i)
            snapshot_insert(snap, &extra->ops[i], &pool);
    if (n > 1)
        qsort(snap->sorted, n, sizeof(const pd_op *), compare_ops_by_name);
    return snap;
}

/* The op that `op` differentiates, or that differentiates `op`, by naming convention. */
static void link_op(const pd__snapshot *snap, pd_op *op)
{
    char name[PD__NAME_MAX + 8];
    const pd_op *forward = NULL;
    if (op->kind != PD_OP_FORWARD) {
        size_t len = strlen(op->name) - strlen("_grad"); /* x_grad -> x, x_grad_grad -> x_grad */
        memcpy(name, op->name, len);
        name[len] = '\0';
        forward = pd__snapshot_find(snap, name);
        if (forward && forward->kind + 1 != op->kind)
            forward = NULL;
    }
    const pd_op *grad = NULL;
    if (op->kind != PD_OP_DOUBLE_GRAD) {
        memcpy(name, op->name, strlen(op->name));
        strcpy(name + strlen(op->name), "_grad");
        grad = pd__snapshot_find(snap, name);
        if (grad && grad->kind != op->kind + 1) /* a forward op that happens to end in _grad */
            grad = NULL;
    }
    /* Written only when changed, so ops untouched by a load or unload are never written while
     * other threads may be running them. */
    if (op->forward != forward)
        op->forward = forward;
    if (op->grad != grad)
        op->grad = grad;
}

void pd__snapshot_publish(pd_registry *reg, pd__snapshot *snap)
{
    for (int32_t i = 0; i < snap->count; ++i)
        link_op(snap, (pd_op *)snap->sorted[i]);
    pd__snapshot *old = atomic_exchange_explicit(&reg->current, snap, memory_order_acq_rel);
    if (old) {
        old->retired_next = reg->retired;
        reg->retired = old;
    }
}

/* Levenshtein distance, capped: only for suggestions on the error path. */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la >= PD__NAME_MAX || lb >= PD__NAME_MAX)
        return (size_t)-1;
    size_t row[PD__NAME_MAX + 1];
    for (size_t j = 0; j <= lb; ++j)
        row[j] = j;
    for (size_t i = 1; i <= la; ++i) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; ++j) {
            size_t up = row[j];
            size_t best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

static const pd_op *closest_op(const pd__snapshot *snap, const char *name)
{
    const pd_op *best = NULL;
    size_t best_d = strlen(name) / 3 + 1; /* no suggestion unless fairly close */
    for (int32_t i = 0; snap && i < snap->count; ++i) {
        size_t d = edit_distance(name, snap->sorted[i]->name);
        if (d <= best_d && (best == NULL || d < best_d)) {
            best = snap->sorted[i];
            best_d = d;
        }
    }
    return best;
}

/* --- Public ------------------------------------------------------------------------------- */

pd_status pd_registry_create(pd_registry **out)
{
    if (out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_registry_create: out is NULL");
    pd_registry *reg = calloc(1, sizeof *reg);
    if (reg == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_registry_create: out of memory");
    if (pthread_mutex_init(&reg->lock, NULL) != 0) {
        free(reg);
        return pd__fail(PD_ERR_INTERNAL, "pd_registry_create: cannot create a mutex");
    }
    atomic_init(&reg->current, NULL);
    *out = reg;
    return PD_OK;
}

void pd_registry_destroy(pd_registry *reg)
{
    if (reg == NULL)
        return;
    /* Newest first, so no grad op outlives the forward op it was checked against. */
    pd__module_unload_all(reg);
    free(atomic_load(&reg->current));
    while (reg->retired) {
        pd__snapshot *next = reg->retired->retired_next;
        free(reg->retired);
        reg->retired = next;
    }
    pthread_mutex_destroy(&reg->lock);
    free(reg);
}

const pd_op *pd_op_find(const pd_registry *reg, const char *name)
{
    if (reg == NULL || name == NULL) {
        pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_op_find: %s is NULL", reg ? "name" : "reg");
        return NULL;
    }
    const pd__snapshot *snap =
        atomic_load_explicit(&((pd_registry *)reg)->current, memory_order_acquire);
    const pd_op *op = pd__snapshot_find(snap, name);
    if (op != NULL)
        return op;
    const pd_op *near = closest_op(snap, name);
    if (near)
        pd__fail(PD_ERR_NOT_FOUND,
                 "pd_op_find: no op named '%s' is registered (did you mean '%s'?)", name,
                 near->name);
    else
        pd__fail(PD_ERR_NOT_FOUND, "pd_op_find: no op named '%s' is registered", name);
    return NULL;
}

int32_t pd_registry_op_count(const pd_registry *reg)
{
    if (reg == NULL)
        return 0;
    const pd__snapshot *snap =
        atomic_load_explicit(&((pd_registry *)reg)->current, memory_order_acquire);
    return snap ? snap->count : 0;
}

const pd_op *pd_registry_op_at(const pd_registry *reg, int32_t index)
{
    const pd__snapshot *snap =
        reg ? atomic_load_explicit(&((pd_registry *)reg)->current, memory_order_acquire) : NULL;
    int32_t count = snap ? snap->count : 0;
    if (index < 0 || index >= count) {
        pd__fail(PD_ERR_INVALID_ARGUMENT,
                 "pd_registry_op_at: index %d is out of range; the registry has %d ops",
                 (int)index, (int)count);
        return NULL;
    }
    return snap->sorted[index];
}

const char *pd_op_name(const pd_op *op) { return op ? op->name : NULL; }
pd_op_kind pd_op_get_kind(const pd_op *op) { return op ? op->kind : PD_OP_FORWARD; }
const pd_op_def *pd_op_definition(const pd_op *op) { return op ? op->def : NULL; }
const pd_op *pd_op_grad(const pd_op *op) { return op ? op->grad : NULL; }
const pd_module *pd_op_module(const pd_op *op) { return op ? op->module : NULL; }
int32_t pd_op_input_count(const pd_op *op) { return op ? op->n_inputs : 0; }
int32_t pd_op_output_count(const pd_op *op) { return op ? op->n_outputs : 0; }
int32_t pd_op_attr_count(const pd_op *op) { return op ? op->n_attrs : 0; }

const char *pd_op_attr_name(const pd_op *op, int32_t index)
{
    return (op && index >= 0 && index < op->n_attrs) ? op->attrs[index].name : NULL;
}

pd_attr_type pd_op_attr_type(const pd_op *op, int32_t index)
{
    return (op && index >= 0 && index < op->n_attrs) ? op->attrs[index].type : PD_ATTR_UNDEFINED;
}
