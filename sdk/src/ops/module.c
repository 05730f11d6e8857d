/*
 * module.c - loading and unloading modules: dlopen a library, read its info block, check its
 * ABI version, validate every op definition against each other and against the registry,
 * then publish them all at once; or refuse the whole module and change nothing.
 *
 * Order matters for "all or nothing": everything that can fail (parsing, cross-op checks,
 * building the new snapshot) happens before the first visible change (storing the function
 * table into the module, linking it into the registry, swapping the snapshot).
 */
#include "ops/pd_registry_internal.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* More ops than this in one table means it is not a table (a bad ops_begin/ops_end). */
#define MODULE_MAX_OPS 1000000

/* The smallest info block that still says which ABI it speaks. */
#define INFO_MIN_SIZE (offsetof(pd_module_info, abi_minor) + sizeof(uint32_t))

static char *copy_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

static void module_free(pd_module *m)
{
    if (m == NULL)
        return;
    for (int32_t i = 0; m->ops && i < m->n_ops; ++i)
        pd__op_free(&m->ops[i]);
    free(m->ops);
    free(m->path);
    free(m);
}

/* Same major, and a minor no newer than ours. */
static pd_status check_abi(const char *who, const char *origin, const pd_module_info *info)
{
    if (info->abi_major != PD_ABI_MAJOR)
        return pd__fail(PD_ERR_ABI_MISMATCH,
                        "%s: %s was built against pdext ABI %u.%u, but this runtime (pdext %s) "
                        "provides ABI %d.%d and cannot load another major version: rebuild the "
                        "module against this SDK: rebuild against pdext %d (sources written "
                        "for pdext 0.1 compile unchanged)",
                        who, origin, (unsigned)info->abi_major, (unsigned)info->abi_minor,
                        PD_VERSION_STRING, PD_ABI_MAJOR, PD_ABI_MINOR, PD_ABI_MAJOR);
    if (info->abi_minor > PD_ABI_MINOR)
        return pd__fail(PD_ERR_ABI_MISMATCH,
                        "%s: %s was built against pdext ABI %u.%u (SDK %s), but this runtime "
                        "(pdext %s) provides ABI %d.%d: upgrade pdext to a release with ABI "
                        "%u.%u or newer, or rebuild the module against this SDK",
                        who, origin, (unsigned)info->abi_major, (unsigned)info->abi_minor,
                        info->sdk_version ? info->sdk_version : "unknown", PD_VERSION_STRING,
                        PD_ABI_MAJOR, PD_ABI_MINOR, (unsigned)info->abi_major,
                        (unsigned)info->abi_minor);
    return PD_OK;
}

/* Copies the module's info block, reading no field past its struct_size, and checks it. */
static pd_status read_info(const char *who, const char *origin, const pd_module_info *raw,
                           pd_module_info *info)
{
    if (raw == NULL)
        return pd__fail(PD_ERR_INVALID_MODULE, "%s: %s: its " PD_MODULE_ENTRY "() returned NULL",
                        who, origin);
    if (raw->struct_size < INFO_MIN_SIZE)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: %s: its module info block has struct_size %u, smaller than the %zu "
                        "bytes every version has",
                        who, origin, (unsigned)raw->struct_size, INFO_MIN_SIZE);
    memset(info, 0, sizeof *info);
    memcpy(info, raw, raw->struct_size < sizeof *info ? raw->struct_size : sizeof *info);
    pd_status s = check_abi(who, origin, info);
    if (s != PD_OK)
        return s;
    if (info->ops_begin == NULL || info->ops_end == NULL || info->ops_end <= info->ops_begin)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: %s contains no ops: was it built from sources that use "
                        "PD_BUILD_OP?",
                        who, origin);
    if (info->ops_end - info->ops_begin > MODULE_MAX_OPS)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: %s: its op table bounds are corrupt (%td "
                        "entries)",
                        who, origin, info->ops_end - info->ops_begin);
    if (info->api_slot == NULL)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: %s has ops but no api_slot for the runtime's function table", who,
                        origin);
    return PD_OK;
}

/* The op named `name` among the first `n` ops of m. */
static const pd_op *module_find(const pd_module *m, int32_t n, const char *name)
{
    for (int32_t i = 0; i < n; ++i)
        if (strcmp(m->ops[i].name, name) == 0)
            return &m->ops[i];
    return NULL;
}

/* The op named `name` as the registry would be after loading m in place of `replace`. */
static const pd_op *visible_find(const pd_registry *reg, const pd_module *m,
                                 const pd_module *replace, const char *name)
{
    const pd_op *op = module_find(m, m->n_ops, name);
    if (op)
        return op;
    op = pd__snapshot_find(pd__registry_snapshot(reg), name);
    return (op && op->module != replace) ? op : NULL;
}

static const char *def_file(const pd_op *op) { return op->def->file ? op->def->file : "?"; }

/* A grad op's attrs must be a subset (name and type) of those of the op it differentiates,
 * because the runner hands it the forward call's attrs. */
static pd_status check_grad_attrs(const pd_op *grad, const pd_op *fwd)
{
    for (int32_t i = 0; i < grad->n_attrs; ++i) {
        const pd__attr_decl *a = &grad->attrs[i];
        int32_t j = pd__decl_attr_find(fwd->attrs, fwd->n_attrs, a->name);
        if (j < 0)
            return pd__fail(PD_ERR_INVALID_MODULE,
                            "op '%s' (%s:%d): attr \"%s\" is not an attr of '%s'; a grad op's "
                            "attrs must be a subset of its forward op's",
                            grad->name, def_file(grad), (int)grad->def->line, grad->def->attrs[i],
                            fwd->name);
        if (fwd->attrs[j].type != a->type)
            return pd__fail(PD_ERR_INVALID_MODULE,
                            "op '%s' (%s:%d): attr \"%s\" has type %s, but '%s' declares "
                            "\"%s\" (%s); a grad op's attrs must match its forward op's",
                            grad->name, def_file(grad), (int)grad->def->line, grad->def->attrs[i],
                            pd_attr_type_name(a->type), fwd->name, fwd->def->attrs[j],
                            pd_attr_type_name(fwd->attrs[j].type));
    }
    return PD_OK;
}

/* Checks of each op against the others and against the registry. */
static pd_status check_module_ops(const pd_registry *reg, const pd_module *m,
                                  const pd_module *replace)
{
    const pd__snapshot *snap = pd__registry_snapshot(reg);
    for (int32_t i = 0; i < m->n_ops; ++i) {
        const pd_op *op = &m->ops[i];
        const pd_op *twin = module_find(m, i, op->name);
        if (twin)
            return pd__fail(PD_ERR_INVALID_MODULE,
                            "op '%s' is defined twice in this module: at %s:%d and at %s:%d",
                            op->name, def_file(twin), (int)twin->def->line, def_file(op),
                            (int)op->def->line);
        const pd_op *old = pd__snapshot_find(snap, op->name);
        if (old && old->module != replace)
            return pd__fail(PD_ERR_ALREADY_EXISTS,
                            "op '%s' is already registered by %s; unload that module first or "
                            "rename the op",
                            op->name, old->module->path);
    }
    for (int32_t i = 0; i < m->n_ops; ++i) {
        const pd_op *op = &m->ops[i];
        if (op->kind == PD_OP_FORWARD)
            continue;
        char fwd_name[PD__NAME_MAX];
        (void)pd__op_registered_name(op->def->name, (pd_op_kind)(op->kind - 1), fwd_name,
                                     sizeof fwd_name);
        const pd_op *fwd = visible_find(reg, m, replace, fwd_name);
        if (fwd == NULL || fwd->kind + 1 != op->kind)
            return pd__fail(PD_ERR_INVALID_MODULE,
                            "op '%s' (%s:%d) has no forward op '%s': define it in this module, "
                            "or load the module that has it first",
                            op->name, def_file(op), (int)op->def->line, fwd_name);
        pd_status s = check_grad_attrs(op, fwd);
        if (s != PD_OK)
            return s;
    }
    return PD_OK;
}

/* Source position of an op for ordering: the table position of the first op defined in the
 * same file, then the line. */
typedef struct op_rank {
    int32_t file_group;
    int32_t line;
    int32_t index;
} op_rank;

static int op_rank_cmp(const void *a, const void *b)
{
    const op_rank *x = a, *y = b;
    if (x->file_group != y->file_group)
        return x->file_group < y->file_group ? -1 : 1;
    if (x->line != y->line)
        return x->line < y->line ? -1 : 1;
    return x->index < y->index ? -1 : (x->index > y->index);
}

/* Puts the module's ops in source order. The linker keeps each file's table entries together
 * but GCC emits one file's definitions in reverse, so listings and messages would otherwise
 * show custom_relu_grad before custom_relu. Runs before anything points at the ops. */
static bool ops_sort_by_source(pd_module *m)
{
    int32_t n = m->n_ops;
    op_rank *rank = malloc(sizeof *rank * (size_t)n);
    pd_op *sorted = malloc(sizeof *sorted * (size_t)n);
    if (rank == NULL || sorted == NULL) {
        free(rank);
        free(sorted);
        return false;
    }
    for (int32_t i = 0; i < n; ++i) {
        int32_t g = i;
        for (int32_t j = 0; j < i && g == i; ++j)
            if (strcmp(def_file(&m->ops[j]), def_file(&m->ops[i])) == 0)
                g = rank[j].file_group;
        rank[i] = (op_rank){g, m->ops[i].def->line, i};
    }
    qsort(rank, (size_t)n, sizeof *rank, op_rank_cmp);
    for (int32_t i = 0; i < n; ++i)
        sorted[i] = m->ops[rank[i].index];
    memcpy(m->ops, sorted, sizeof *sorted * (size_t)n);
    free(sorted);
    free(rank);
    return true;
}

/* Parses every definition of the info block into a new, unpublished module. */
static pd_status module_build(const pd_module_info *info, const char *origin, void *handle,
                              pd_registry *reg, pd_module **out)
{
    pd_module *m = calloc(1, sizeof *m);
    if (m != NULL)
        atomic_init(&m->in_flight, 0);
    int32_t n = (int32_t)(info->ops_end - info->ops_begin);
    if (m == NULL || (m->ops = calloc((size_t)n, sizeof *m->ops)) == NULL ||
        (m->path = copy_string(origin)) == NULL) {
        module_free(m);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "out of memory");
    }
    m->reg = reg;
    m->handle = handle;
    m->info = *info;
    m->n_ops = n;
    for (int32_t i = 0; i < n; ++i) {
        pd_status s = pd__op_parse(info->ops_begin[i], i, m, &m->ops[i]);
        if (s != PD_OK) {
            module_free(m);
            return s;
        }
        m->ops[i].invoke = info->invoke; /* NULL for C modules and older info blocks */
    }
    if (!ops_sort_by_source(m)) {
        module_free(m);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "out of memory");
    }
    *out = m;
    return PD_OK;
}

static void list_append(pd_registry *reg, pd_module *m)
{
    m->prev = reg->last;
    m->next = NULL;
    if (reg->last)
        reg->last->next = m;
    else
        reg->first = m;
    reg->last = m;
}

static void list_remove(pd_registry *reg, pd_module *m)
{
    if (m->prev)
        m->prev->next = m->next;
    else
        reg->first = m->next;
    if (m->next)
        m->next->prev = m->prev;
    else
        reg->last = m->prev;
    m->prev = m->next = NULL;
}

/* Waits until no executor call of m's ops is queued or running: a worker reads the op and
 * runs its kernel until the call retires (pdext_executor.h: a pending call keeps its module).
 * Polled, as unloading with calls in flight is rare and its wait is the kernel's own time. */
static void wait_in_flight(pd_module *m)
{
    struct timespec nap = {0, 200000}; /* 0.2 ms */
    while (atomic_load_explicit(&m->in_flight, memory_order_acquire) > 0)
        nanosleep(&nap, NULL);
}

/* Closes the library (if any) and frees an unlinked module, once its calls are done. */
static void module_close(pd_module *m)
{
    wait_in_flight(m);
    void (*release)(void *) = m->release;
    void *owner = m->owner;
    if (m->handle)
        dlclose(m->handle);
    module_free(m);
    if (release)
        release(owner);
}

/* Validates the module described by `raw` and publishes it in place of `replace`. On failure
 * nothing changed; the caller still owns `handle`. */
static pd_status register_info(const char *who, pd_registry *reg, const pd_module_info *raw,
                               const char *origin, void *handle, pd_module *replace,
                               const pd__module_owner *owner, pd_module **out)
{
    pd_module_info info;
    pd_status s = read_info(who, origin, raw, &info);
    if (s != PD_OK)
        return s;
    pd_module *m = NULL;
    s = module_build(&info, origin, handle, reg, &m);
    if (s != PD_OK)
        return pd__fail_prefix("%s: %s: ", who, origin);

    pthread_mutex_lock(&reg->lock);
    pd__snapshot *snap = NULL;
    s = check_module_ops(reg, m, replace);
    if (s == PD_OK && (snap = pd__snapshot_build(reg, replace, m)) == NULL)
        s = pd_last_status();
    if (s != PD_OK) {
        pthread_mutex_unlock(&reg->lock);
        module_free(m);
        return pd__fail_prefix("%s: %s: ", who, origin);
    }
    if (owner) {
        m->release = owner->release;
        m->owner = owner->owner;
    }
    /* The table goes in before any thread can find the module's ops. */
    *info.api_slot = pd__runtime_api();
    if (replace)
        list_remove(reg, replace);
    list_append(reg, m);
    pd__snapshot_publish(reg, snap);
    pthread_mutex_unlock(&reg->lock);
    if (replace)
        module_close(replace);
    if (out)
        *out = m;
    return PD_OK;
}

static pd_status load_library(const char *who, pd_registry *reg, const char *path,
                              pd_module *replace, pd_module **out)
{
    if (reg == NULL || path == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s is NULL", who, reg ? "path" : "reg");
    if (replace && replace->reg != reg)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the module to replace (%s) belongs to another registry", who,
                        replace->path);
    struct stat st;
    if (stat(path, &st) != 0)
        return pd__fail(errno == ENOENT ? PD_ERR_NOT_FOUND : PD_ERR_IO, "%s: cannot open '%s': %s",
                        who, path, strerror(errno));
    void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *err = dlerror();
        return pd__fail(PD_ERR_INVALID_MODULE, "%s: cannot load '%s': %s", who, path,
                        err ? err : "dlopen failed");
    }
    pd_module_entry_fn entry;
    *(void **)&entry = dlsym(handle, PD_MODULE_ENTRY);
    if (entry == NULL) {
        dlclose(handle);
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "%s: %s has no entry point " PD_MODULE_ENTRY "(): build it from sources "
                        "that include extension.h",
                        who, path);
    }
    pd_status s = register_info(who, reg, entry(), path, handle, replace, NULL, out);
    if (s != PD_OK)
        dlclose(handle);
    return s;
}

/* Unlinks m and publishes a snapshot without its ops. `force` (registry teardown, when no
 * reader can be left) unlinks even when the new snapshot cannot be allocated. */
static pd_status module_remove(pd_module *m, bool force)
{
    pd_registry *reg = m->reg;
    pthread_mutex_lock(&reg->lock);
    pd__snapshot *snap = pd__snapshot_build(reg, m, NULL);
    if (snap == NULL && !force) {
        pthread_mutex_unlock(&reg->lock);
        return pd__fail_prefix("pd_module_unload: %s: ", m->path);
    }
    list_remove(reg, m);
    if (snap)
        pd__snapshot_publish(reg, snap);
    pthread_mutex_unlock(&reg->lock);
    module_close(m);
    return PD_OK;
}

/* --- Public ------------------------------------------------------------------------------- */

pd_status pd_module_load(pd_registry *reg, const char *path, pd_module **out)
{
    return load_library("pd_module_load", reg, path, NULL, out);
}

pd_status pd__module_load_replacing(pd_registry *reg, const char *path, pd_module *replace,
                                    pd_module **out)
{
    return load_library("pd_module_load", reg, path, replace, out);
}

pd_status pd_module_load_info(pd_registry *reg, const pd_module_info *info, const char *origin,
                              pd_module **out)
{
    if (reg == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_module_load_info: reg is NULL");
    return register_info("pd_module_load_info", reg, info, origin ? origin : "(op table)", NULL,
                         NULL, NULL, out);
}

pd_status pd__module_load_owned(pd_registry *reg, const pd_module_info *info, const char *origin,
                                const pd__module_owner *owner, pd_module **out)
{
    if (reg == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_module_load_info: reg is NULL");
    return register_info("pd_module_load_info", reg, info, origin, NULL, NULL, owner, out);
}

pd_status pd_module_unload(pd_module *module)
{
    if (module == NULL)
        return PD_OK;
    return module_remove(module, false);
}

void pd__module_unload_all(pd_registry *reg)
{
    while (reg->last)
        (void)module_remove(reg->last, true);
}

const char *pd_module_path(const pd_module *module) { return module ? module->path : NULL; }
int32_t pd_module_op_count(const pd_module *module) { return module ? module->n_ops : 0; }

const pd_op *pd_module_op(const pd_module *module, int32_t index)
{
    return (module && index >= 0 && index < module->n_ops) ? &module->ops[index] : NULL;
}

pd_module *pd__registry_find_table(pd_registry *reg, const pd_module_info *info)
{
    pd_module *found = NULL;
    pthread_mutex_lock(&reg->lock);
    for (pd_module *m = reg->first; m && found == NULL; m = m->next)
        if (m->handle == NULL && m->info.ops_begin == info->ops_begin &&
            m->info.ops_end == info->ops_end)
            found = m;
    pthread_mutex_unlock(&reg->lock);
    return found;
}

const pd_module_info *pd_module_get_info(const pd_module *module)
{
    return module ? &module->info : NULL;
}
