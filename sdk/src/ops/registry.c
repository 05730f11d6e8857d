/*
 * registry.c - the set of registered ops: lock-free lookup by name through an immutable
 * snapshot, listing, and the accessors of a registered op.
 *
 * pd_op_find sits on the by-name run path, so it pins the snapshot (one increment of a
 * counter its thread rarely shares), hashes the name and probes an open-addressing table
 * whose entries carry the hash and a private copy of the name: no lock, and nothing it reads
 * is freed while it is pinned (pd_registry_internal.h explains the reclamation). Loads and
 * unloads are rare; they rebuild the whole snapshot under the registry's mutex, grad links
 * included, so published ops are never written.
 */
#include "ops/pd_registry_internal.h"

#include <stdlib.h>
#include <string.h>

_Thread_local unsigned pd__reader_stripe __attribute__((tls_model("initial-exec")));

unsigned pd__reader_stripe_assign(void)
{
    static atomic_uint next;
    unsigned s = atomic_fetch_add_explicit(&next, 1, memory_order_relaxed) % PD__READER_STRIPES;
    pd__reader_stripe = s + 1;
    return s;
}

static atomic_llong live_snapshots;

int64_t pd__snapshot_live_count(void)
{
    return (int64_t)atomic_load_explicit(&live_snapshots, memory_order_relaxed);
}

static void snapshot_free(pd__snapshot *snap)
{
    if (snap == NULL)
        return;
    atomic_fetch_sub_explicit(&live_snapshots, 1, memory_order_relaxed);
    free(snap);
}

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

const pd__snap_entry *pd__snapshot_entry(const pd__snapshot *snap, const char *name)
{
    if (snap == NULL || snap->count == 0)
        return NULL;
    uint64_t h = pd__name_hash(name);
    for (uint32_t i = (uint32_t)h & snap->mask;; i = (i + 1) & snap->mask) {
        const pd__snap_entry *e = &snap->slots[i];
        if (e->op == NULL)
            return NULL;
        if (e->hash == h && strcmp(e->name, name) == 0)
            return e;
    }
}

const pd_op *pd__snapshot_find(const pd__snapshot *snap, const char *name)
{
    const pd__snap_entry *e = pd__snapshot_entry(snap, name);
    return e ? e->op : NULL;
}

const pd_op *pd__registry_lookup(const pd_registry *reg, const char *name)
{
    atomic_long *pin;
    const pd_op *op = pd__snapshot_find(pd__snapshot_pin(reg, &pin), name);
    pd__snapshot_unpin(pin);
    return op;
}

/* An op registered as `name` of exactly `kind`, in snap. */
static const pd_op *find_kind(const pd__snapshot *snap, const char *name, bool ok, int kind)
{
    const pd_op *op = ok ? pd__snapshot_find(snap, name) : NULL;
    return (op && (int)op->kind == kind) ? op : NULL;
}

/* Grad op `grad`'s binding to `fwd` (NULL: none) into *b: the one place the rule of pdext.h's
 * pd_grad_source is applied (the names are decl.c's to compare). */
static void bind_grad(pd__grad_binding *b, const pd_op *grad, const pd_op *fwd)
{
    for (int32_t i = 0; i < PD_MAX_INPUTS; ++i) {
        int32_t p = -1;
        pd_grad_source from = fwd && i < grad->n_inputs
                                  ? pd__decl_grad_input_source(fwd->inputs, fwd->n_inputs,
                                                               fwd->outputs, fwd->n_outputs,
                                                               grad->inputs[i].base, &p)
                                  : PD_GRAD_FROM_NONE;
        b->from[i] = (int16_t)from;
        b->from_index[i] = (int16_t)(from == PD_GRAD_FROM_NONE ? -1 : p);
    }
    for (int32_t o = 0; o < PD_MAX_OUTPUTS; ++o)
        b->target[o] = (int16_t)(fwd && o < grad->n_outputs
                                     ? pd__decl_grad_source(fwd->inputs, fwd->n_inputs,
                                                            &grad->outputs[o])
                                     : -1);
}

/* Resolves every entry's grad and forward links by naming convention, within the snapshot
 * being built (before anyone can read it), and binds each grad op to its forward op. A
 * forward op that happens to end in _grad is not taken for a grad op: kinds must follow each
 * other. */
static void link_ops(pd__snapshot *snap)
{
    char name[PD__NAME_MAX + 8];
    int32_t bound = 0;
    for (uint32_t i = 0; i <= snap->mask; ++i) {
        pd__snap_entry *e = &snap->slots[i];
        if (e->op == NULL)
            continue;
        pd_op_kind kind = e->op->kind;
        e->forward = find_kind(snap, name, pd__op_forward_name(e->name, kind, name, sizeof name),
                               (int)kind - 1);
        e->grad = find_kind(snap, name, pd__op_grad_name(e->name, kind, name, sizeof name),
                            (int)kind + 1);
        if (e->forward) {
            bind_grad(&snap->bindings[bound], e->op, e->forward);
            e->binding = &snap->bindings[bound++];
        }
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
    /* One block: header, hash slots, grad bindings, sorted pointers, names. */
    size_t bytes = sizeof(pd__snapshot) + cap * sizeof(pd__snap_entry) +
                   n * sizeof(pd__grad_binding) + n * sizeof(pd_op *) + name_bytes;
    pd__snapshot *snap = calloc(1, bytes);
    if (snap == NULL) {
        pd__fail(PD_ERR_OUT_OF_MEMORY, "out of memory indexing %zu ops", n);
        return NULL;
    }
    snap->mask = (uint32_t)(cap - 1);
    snap->slots = (pd__snap_entry *)(snap + 1);
    snap->bindings = (pd__grad_binding *)(snap->slots + cap);
    snap->sorted = (const pd_op **)(snap->bindings + n);
    char *pool = (char *)(snap->sorted + n);
    for (const pd_module *m = reg->first; m; m = m->next)
        if (m != skip)
            for (int32_t i = 0; i < m->n_ops; ++i)
                snapshot_insert(snap, &m->ops[i], &pool);
    if (extra)
        for (int32_t i = 0; i < extra->n_ops; ++i)
            snapshot_insert(snap, &extra->ops[i], &pool);
    if (n > 1)
        qsort(snap->sorted, n, sizeof *snap->sorted, compare_ops_by_name);
    link_ops(snap);
    atomic_fetch_add_explicit(&live_snapshots, 1, memory_order_relaxed);
    return snap;
}

/* Frees every retired snapshot if no reader holds a pin (pd_registry_internal.h). */
static void reclaim_retired(pd_registry *reg)
{
    for (int k = 0; k < PD__READER_STRIPES; ++k)
        if (atomic_load_explicit(&reg->readers[k].pins, memory_order_seq_cst) != 0)
            return;
    while (reg->retired) {
        pd__snapshot *next = reg->retired->retired_next;
        snapshot_free(reg->retired);
        reg->retired = next;
    }
}

void pd__snapshot_publish(pd_registry *reg, pd__snapshot *snap)
{
    pd__snapshot *old = atomic_exchange_explicit(&reg->current, snap, memory_order_seq_cst);
    if (old) {
        old->retired_next = reg->retired;
        reg->retired = old;
    }
    reclaim_retired(reg);
}

size_t pd__edit_distance(const char *a, const char *b, bool fold_case)
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
            int ca = (unsigned char)a[i - 1], cb = (unsigned char)b[j - 1];
            if (fold_case) {
                ca |= 0x20;
                cb |= 0x20;
            }
            size_t best = diag + (ca != cb);
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

/* The registered name closest to `name`, or NULL. Reads only the snapshot's own copies of
 * the names: an op of a module unloaded since the snapshot was pinned is freed memory. */
static const char *closest_name(const pd__snapshot *snap, const char *name)
{
    const char *best = NULL;
    size_t best_d = strlen(name) / 3 + 1; /* no suggestion unless fairly close */
    for (uint32_t i = 0; snap && snap->count && i <= snap->mask; ++i) {
        const pd__snap_entry *e = &snap->slots[i];
        if (e->op == NULL)
            continue;
        size_t d = pd__edit_distance(name, e->name, false);
        if (d <= best_d && (best == NULL || d < best_d || strcmp(e->name, best) < 0)) {
            best = e->name;
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
    /* No reader may use a registry being destroyed, so nothing is pinned any more. */
    snapshot_free(atomic_load(&reg->current));
    while (reg->retired) {
        pd__snapshot *next = reg->retired->retired_next;
        snapshot_free(reg->retired);
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
    atomic_long *pin;
    const pd__snapshot *snap = pd__snapshot_pin(reg, &pin);
    const pd_op *op = pd__snapshot_find(snap, name);
    if (op == NULL) {
        const char *near = closest_name(snap, name);
        if (near)
            pd__fail(PD_ERR_NOT_FOUND,
                     "pd_op_find: no op named '%s' is registered (did you mean '%s'?)", name, near);
        else
            pd__fail(PD_ERR_NOT_FOUND, "pd_op_find: no op named '%s' is registered", name);
    }
    pd__snapshot_unpin(pin);
    return op;
}

int32_t pd_registry_op_count(const pd_registry *reg)
{
    if (reg == NULL)
        return 0;
    atomic_long *pin;
    const pd__snapshot *snap = pd__snapshot_pin(reg, &pin);
    int32_t count = snap ? snap->count : 0;
    pd__snapshot_unpin(pin);
    return count;
}

const pd_op *pd_registry_op_at(const pd_registry *reg, int32_t index)
{
    atomic_long *pin = NULL;
    const pd__snapshot *snap = reg ? pd__snapshot_pin(reg, &pin) : NULL;
    int32_t count = snap ? snap->count : 0;
    const pd_op *op = (index >= 0 && index < count) ? snap->sorted[index] : NULL;
    if (pin)
        pd__snapshot_unpin(pin);
    if (op == NULL)
        pd__fail(PD_ERR_INVALID_ARGUMENT,
                 "pd_registry_op_at: index %d is out of range; the registry has %d ops", (int)index,
                 (int)count);
    return op;
}

const char *pd_op_name(const pd_op *op) { return op ? op->name : NULL; }
pd_op_kind pd_op_get_kind(const pd_op *op) { return op ? op->kind : PD_OP_FORWARD; }
const pd_op_def *pd_op_definition(const pd_op *op) { return op ? op->def : NULL; }
/* op's link of the given direction in its registry's current snapshot. */
static const pd_op *linked(const pd_op *op, bool grad)
{
    if (op == NULL)
        return NULL;
    atomic_long *pin;
    const pd__snap_entry *e = pd__snapshot_entry(pd__snapshot_pin(op->module->reg, &pin), op->name);
    const pd_op *link = (e && e->op == op) ? (grad ? e->grad : e->forward) : NULL;
    pd__snapshot_unpin(pin);
    return link;
}

const pd_op *pd_op_grad(const pd_op *op) { return linked(op, true); }
const pd_op *pd__op_forward(const pd_op *op) { return linked(op, false); }
const pd_module *pd_op_module(const pd_op *op) { return op ? op->module : NULL; }
int32_t pd_op_input_count(const pd_op *op) { return op ? op->n_inputs : 0; }
int32_t pd_op_output_count(const pd_op *op) { return op ? op->n_outputs : 0; }
int32_t pd_op_attr_count(const pd_op *op) { return op ? op->n_attrs : 0; }

int32_t pd_op_output_mirrors(const pd_op *op, int32_t index)
{
    return (op && index >= 0 && index < op->n_outputs) ? op->default_source[index] : -1;
}

/* Item `index` of grad op `grad`'s binding in its registry's current snapshot: input source
 * and position (input) or output target (!input); false when there is none. */
static bool bound(const pd_op *grad, bool input, int32_t index, int32_t *from, int32_t *p)
{
    if (grad == NULL || index < 0 || index >= (input ? grad->n_inputs : grad->n_outputs))
        return false;
    atomic_long *pin;
    const pd__snap_entry *e = pd__snapshot_entry(pd__snapshot_pin(grad->module->reg, &pin),
                                                 grad->name);
    bool ok = e && e->op == grad && e->binding;
    if (ok && input) {
        *from = e->binding->from[index];
        *p = e->binding->from_index[index];
    } else if (ok) {
        *p = e->binding->target[index];
    }
    pd__snapshot_unpin(pin);
    return ok;
}

pd_grad_source pd_op_grad_input_source(const pd_op *grad, int32_t index, int32_t *position)
{
    int32_t from = PD_GRAD_FROM_NONE, p = -1;
    (void)bound(grad, true, index, &from, &p);
    if (position)
        *position = p;
    return (pd_grad_source)from;
}

int32_t pd_op_grad_output_target(const pd_op *grad, int32_t index)
{
    int32_t from = PD_GRAD_FROM_NONE, p = -1;
    (void)bound(grad, false, index, &from, &p);
    return p;
}

const char *pd_op_attr_name(const pd_op *op, int32_t index)
{
    return (op && index >= 0 && index < op->n_attrs) ? op->attrs[index].name : NULL;
}

pd_attr_type pd_op_attr_type(const pd_op *op, int32_t index)
{
    return (op && index >= 0 && index < op->n_attrs) ? op->attrs[index].type : PD_ATTR_UNDEFINED;
}

/* pd_op_input_info / pd_op_output_info: declaration `index` of `decls` (the op's `n` inputs or
 * outputs, `what` in messages) into *out. */
static pd_status arg_info(const char *who, const char *what, const pd_op *op,
                          const pd__arg_decl *decls, int32_t n, int32_t index, pd_arg_info *out)
{
    if (op == NULL || out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, op ? "out" : "op");
    if (index < 0 || index >= n)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: %s index %d is out of range; the op declares %d", who, op->name,
                        what, (int)index, (int)n);
    out->name = decls[index].base;
    out->decl = decls[index].decl;
    out->is_vector = decls[index].is_vector;
    out->is_optional = decls[index].is_optional;
    return PD_OK;
}

pd_status pd_op_input_info(const pd_op *op, int32_t index, pd_arg_info *out)
{
    return arg_info("pd_op_input_info", "input", op, op ? op->inputs : NULL, op ? op->n_inputs : 0,
                    index, out);
}

pd_status pd_op_output_info(const pd_op *op, int32_t index, pd_arg_info *out)
{
    return arg_info("pd_op_output_info", "output", op, op ? op->outputs : NULL,
                    op ? op->n_outputs : 0, index, out);
}

pd_status pd_op_attr_info(const pd_op *op, int32_t index, pd_attr_info *out)
{
    if (op == NULL || out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_op_attr_info: %s is NULL", op ? "out" : "op");
    if (index < 0 || index >= op->n_attrs)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "pd_op_attr_info: %s: attr index %d is out of range; the op declares %d",
                        op->name, (int)index, (int)op->n_attrs);
    const pd__attr_decl *a = &op->attrs[index];
    out->name = a->name;
    out->decl = a->decl;
    out->type = a->type;
    out->has_default = a->has_default;
    out->default_text = a->has_default ? a->default_text : NULL;
    if (a->has_default)
        out->default_value = a->default_value;
    else
        memset(&out->default_value, 0, sizeof out->default_value);
    out->default_value.name = a->name;
    return PD_OK;
}
