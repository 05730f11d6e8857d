/*
 * device.c - the table of device types: which pd_device_table serves each place type, the
 * built-in CPU entry, registration of host device types (pd_device_register), the lazy load
 * of the CUDA plug-in for GPU places, and the memory and copy operations storage and tensors
 * reach devices through (pd_internal.h, "device/device.c").
 *
 * Lookups take no lock: a type's entry is written once, published with a release store and
 * never changes (an entry lives as long as the process). Registration and the plug-in load
 * serialize on one mutex. The plug-in load is tried once; its failure is remembered and
 * reported again, word for word, by every later GPU use, so a missing library costs one
 * dlopen, not one per allocation.
 *
 * The CUDA plug-in is looked for in $PDEXT_CUDA_PLUGIN, then beside libpdext, then by the
 * dynamic linker's search; it exports pdext_cuda_device_table (sdk/src/device/cuda).
 *
 * Copies run on the thread's current stream of the device (device/stream.c). A copy that
 * involves host memory synchronizes that stream before it returns, because host API callers
 * read or free the host side right after; device-to-device copies stay queued on the stream.
 */
#include "device/device_internal.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TYPES (PD_PLACE_CUSTOM_FIRST + 128) /* built-in numbers and the custom slots */

static _Atomic(pd__device *) devices[TYPES];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* The CUDA plug-in's load: tried once, its failure (status and message) kept. */
static struct {
    bool tried;
    pd_status status;
    char message[1024];
} cuda_load;

/* --- The CPU as a table -------------------------------------------------------------------- */

static pd_status cpu_count(void *user, int32_t *count)
{
    (void)user;
    *count = 1;
    return PD_OK;
}
static pd_status cpu_alloc(void *user, int32_t device, size_t bytes, void **ptr)
{
    (void)user;
    (void)device;
    *ptr = malloc(bytes);
    return *ptr ? PD_OK : PD_ERR_OUT_OF_MEMORY;
}
static pd_status cpu_free(void *user, int32_t device, void *ptr, size_t bytes)
{
    (void)user;
    (void)device;
    (void)bytes;
    free(ptr);
    return PD_OK;
}
static pd_status cpu_memset(void *user, int32_t device, void *ptr, int value, size_t bytes,
                            pd_device_stream stream)
{
    (void)user;
    (void)device;
    (void)stream;
    memset(ptr, value, bytes);
    return PD_OK;
}
static pd_status cpu_copy(void *user, int32_t device, void *dst, const void *src, size_t bytes,
                          pd_device_stream stream)
{
    (void)user;
    (void)device;
    (void)stream;
    memcpy(dst, src, bytes);
    return PD_OK;
}
static pd_status cpu_copy_d2d(void *user, int32_t dst_device, void *dst, int32_t src_device,
                              const void *src, size_t bytes, pd_device_stream stream)
{
    (void)src_device;
    return cpu_copy(user, dst_device, dst, src, bytes, stream);
}
/* The CPU has one stream, the calling thread: work is done when it is enqueued. */
static pd_status cpu_stream_create(void *user, int32_t device, pd_device_stream *stream)
{
    (void)user;
    (void)device;
    *stream = NULL;
    return PD_OK;
}
static pd_status cpu_stream_op(void *user, int32_t device, pd_device_stream stream)
{
    (void)user;
    (void)device;
    (void)stream;
    return PD_OK;
}
static pd_status cpu_stream_query(void *user, int32_t device, pd_device_stream stream, bool *done)
{
    (void)user;
    (void)device;
    (void)stream;
    *done = true;
    return PD_OK;
}
static pd_status cpu_event_create(void *user, int32_t device, pd_device_event *event)
{
    (void)user;
    (void)device;
    *event = NULL;
    return PD_OK;
}
static pd_status cpu_event_op(void *user, int32_t device, pd_device_event event)
{
    (void)user;
    (void)device;
    (void)event;
    return PD_OK;
}
static pd_status cpu_event_record(void *user, int32_t device, pd_device_event event,
                                  pd_device_stream stream)
{
    (void)stream;
    return cpu_event_op(user, device, event);
}
static pd_status cpu_event_wait(void *user, int32_t device, pd_device_stream stream,
                                pd_device_event event)
{
    (void)stream;
    return cpu_event_op(user, device, event);
}

static const pd_device_table cpu_table = {
    .struct_size = sizeof(pd_device_table),
    .abi_version = PD_DEVICE_ABI_VERSION,
    .name = "cpu",
    .device_count = cpu_count,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .memset = cpu_memset,
    .copy_h2d = cpu_copy,
    .copy_d2h = cpu_copy,
    .copy_d2d = cpu_copy_d2d,
    .stream_create = cpu_stream_create,
    .stream_destroy = cpu_stream_op,
    .stream_synchronize = cpu_stream_op,
    .stream_query = cpu_stream_query,
    .event_create = cpu_event_create,
    .event_destroy = cpu_event_op,
    .event_record = cpu_event_record,
    .event_wait = cpu_event_wait,
    .event_synchronize = cpu_event_op,
};

static pd__device cpu_device = {.table = &cpu_table, .type = PD_PLACE_CPU, .count = 1};

/* --- Table checks and entries -------------------------------------------------------------- */

/* Names the first thing wrong with a table, or NULL. */
static const char *table_fault(const pd_device_table *t, char *buf, size_t size)
{
    if (t->struct_size < offsetof(pd_device_table, event_synchronize) + sizeof(void *)) {
        snprintf(buf, size, "struct_size is %zu; a table has at least %zu bytes", t->struct_size,
                 offsetof(pd_device_table, event_synchronize) + sizeof(void *));
        return buf;
    }
    if (t->abi_version != PD_DEVICE_ABI_VERSION) {
        snprintf(buf, size,
                 "abi_version is %u, but this runtime serves device tables of version %d; "
                 "rebuild the plug-in against this SDK's pd_device.h",
                 (unsigned)t->abi_version, PD_DEVICE_ABI_VERSION);
        return buf;
    }
    const char *missing = !t->name                 ? "name"
                          : !t->device_count       ? "device_count"
                          : !t->alloc              ? "alloc"
                          : !t->free               ? "free"
                          : !t->memset             ? "memset"
                          : !t->copy_h2d           ? "copy_h2d"
                          : !t->copy_d2h           ? "copy_d2h"
                          : !t->copy_d2d           ? "copy_d2d"
                          : !t->stream_create      ? "stream_create"
                          : !t->stream_destroy     ? "stream_destroy"
                          : !t->stream_synchronize ? "stream_synchronize"
                          : !t->stream_query       ? "stream_query"
                          : !t->event_create       ? "event_create"
                          : !t->event_destroy      ? "event_destroy"
                          : !t->event_record       ? "event_record"
                          : !t->event_wait         ? "event_wait"
                          : !t->event_synchronize  ? "event_synchronize"
                                                   : NULL;
    if (missing) {
        snprintf(buf, size,
                 "member %s is NULL; every member but set_device, get_device, "
                 "host_alloc and host_free is required",
                 missing);
        return buf;
    }
    return NULL;
}

/* A new entry for `table` at `type` (under the lock); the device count is asked once. */
static pd_status install(const char *who, int32_t type, const pd_device_table *table)
{
    int32_t count = 0;
    pd_status st = table->device_count(table->user, &count);
    if (st != PD_OK)
        return pd__fail(st, "%s: device type '%s': device_count failed (%s)", who, table->name,
                        pd_status_name(st));
    pd__device *d = calloc(1, sizeof *d);
    if (d == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    d->table = table;
    d->type = type;
    d->count = count < 0 ? 0 : count > PD__DEVICE_IDS ? PD__DEVICE_IDS : count;
    pthread_mutex_init(&d->lock, NULL);
    atomic_store_explicit(&devices[type], d, memory_order_release);
    return PD_OK;
}

pd_status pd_device_register(const char *name, const pd_device_table *table, int32_t *type)
{
    static const char who[] = "pd_device_register";
    char why[256];
    if (table == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: table is NULL", who);
    if (table_fault(table, why, sizeof why) != NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: the table of '%s' is refused: %s", who,
                        name ? name : "(null)", why);
    int32_t number = 0;
    pd_status st = pd_device_type_register(name, &number);
    if (st != PD_OK)
        return pd__fail_prefix("%s: ", who);
    if (number >= TYPES)
        return pd__fail(PD_ERR_UNAVAILABLE, "%s: no room for device type '%s'", who, name);
    pthread_mutex_lock(&lock);
    pd__device *d = atomic_load_explicit(&devices[number], memory_order_relaxed);
    if (d != NULL && d->table != table)
        st = pd__fail(PD_ERR_ALREADY_EXISTS,
                      "%s: device type '%s' is registered already, with another table", who, name);
    else if (d == NULL)
        st = install(who, number, table);
    pthread_mutex_unlock(&lock);
    if (st == PD_OK && type != NULL)
        *type = number;
    return st;
}

/* --- The CUDA plug-in ---------------------------------------------------------------------- */

typedef pd_status (*cuda_entry_fn)(uint32_t abi_version, const pd_device_table **table,
                                   char *message, size_t size);

/* Loads libpdext_cuda.so (PDEXT_CUDA_PLUGIN names another path) and installs its table as the
 * GPU entry; under the lock, once. */
static void cuda_plugin_load(void)
{
    cuda_load.tried = true;
    const char *path = getenv("PDEXT_CUDA_PLUGIN");
    static char beside[4096];
    char dir[4000];
    if ((path == NULL || *path == '\0') && pd_runtime_dir(dir, sizeof dir)) {
        /* First beside libpdext (or the program that links it statically), where the build
         * and the install put it; then wherever the dynamic linker looks. */
        snprintf(beside, sizeof beside, "%s/libpdext_cuda.so", dir);
        if (access(beside, F_OK) == 0)
            path = beside;
    }
    if (path == NULL || *path == '\0')
        path = "libpdext_cuda.so";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        const char *err = dlerror();
        cuda_load.status = PD_ERR_UNAVAILABLE;
        snprintf(cuda_load.message, sizeof cuda_load.message,
                 "needs CUDA: the pdext CUDA plug-in %.300s cannot be loaded (%.300s); build pdext "
                 "where the CUDA toolkit is found (Debian: nvidia-cuda-toolkit, or set "
                 "CUDA_HOME) and install libpdext_cuda.so next to libpdext, or set "
                 "PDEXT_CUDA_PLUGIN to its path; or allocate on pd_place_cpu()",
                 path, err ? err : "not found");
        return;
    }
    cuda_entry_fn entry = (cuda_entry_fn)(uintptr_t)dlsym(lib, "pdext_cuda_device_table");
    const pd_device_table *table = NULL;
    char why[384] = "";
    pd_status st = entry ? entry(PD_DEVICE_ABI_VERSION, &table, why, sizeof why)
                         : PD_ERR_INVALID_MODULE;
    if (entry == NULL)
        snprintf(why, sizeof why, "it has no pdext_cuda_device_table entry point");
    else if (st == PD_OK && table_fault(table, why, sizeof why) != NULL)
        st = PD_ERR_ABI_MISMATCH;
    if (st == PD_OK && (st = install("gpu", PD_PLACE_GPU, table)) != PD_OK)
        snprintf(why, sizeof why, "%s", pd_last_error());
    if (st != PD_OK) {
        cuda_load.status = st == PD_ERR_INVALID_MODULE ? PD_ERR_ABI_MISMATCH : st;
        snprintf(cuda_load.message, sizeof cuda_load.message,
                 "needs CUDA: the pdext CUDA plug-in %.300s cannot be used: %.400s; or allocate on "
                 "pd_place_cpu()",
                 path, why);
        dlclose(lib);
    }
}

/* The GPU entry, loading the plug-in on first use; NULL with a message naming who. */
static pd__device *cuda_device(const char *who, const char *place_name)
{
    pd__device *d = atomic_load_explicit(&devices[PD_PLACE_GPU], memory_order_acquire);
    if (d != NULL)
        return d;
    pthread_mutex_lock(&lock);
    if (!cuda_load.tried)
        cuda_plugin_load();
    pthread_mutex_unlock(&lock);
    d = atomic_load_explicit(&devices[PD_PLACE_GPU], memory_order_acquire);
    if (d == NULL)
        pd__fail(cuda_load.status, "%s: place %s %s", who, place_name, cuda_load.message);
    return d;
}

/* --- Lookup -------------------------------------------------------------------------------- */

pd__device *pd__device_of(const char *who, pd_place place)
{
    char name[96];
    pd__device *d = NULL;
    int32_t type = place.type == PD_PLACE_GPU_PINNED ? PD_PLACE_GPU : place.type;
    if (type == PD_PLACE_CPU) {
        d = &cpu_device;
    } else if (type == PD_PLACE_GPU) {
        pd__place_format(place, name, sizeof name);
        d = cuda_device(who, name);
        if (d == NULL)
            return NULL;
        if (d->count == 0) {
            pd__fail(PD_ERR_UNAVAILABLE,
                     "%s: place %s needs CUDA: the CUDA plug-in is loaded but finds no GPU "
                     "(no device visible; check nvidia-smi and CUDA_VISIBLE_DEVICES); or "
                     "allocate on pd_place_cpu()",
                     who, name);
            return NULL;
        }
        if (place.type == PD_PLACE_GPU_PINNED && !PD__DEVICE_HAS(d->table, host_alloc)) {
            pd__fail(PD_ERR_UNAVAILABLE,
                     "%s: place gpu_pinned needs CUDA pinned memory, which "
                     "the CUDA plug-in does not offer",
                     who);
            return NULL;
        }
    } else if (type >= PD_PLACE_CUSTOM_FIRST && type < TYPES) {
        d = atomic_load_explicit(&devices[type], memory_order_acquire);
    }
    if (d == NULL) {
        pd__place_refuse(who, place); /* its message says why */
        return NULL;
    }
    if (place.device_id < 0 || place.device_id >= d->count ||
        (place.type == PD_PLACE_GPU_PINNED && place.device_id != 0)) {
        pd__place_format(place, name, sizeof name);
        pd__fail(PD_ERR_INVALID_ARGUMENT,
                 "%s: place %s: device id %d is out of range; "
                 "device type '%s' has %d device%s here",
                 who, name, (int)place.device_id, d->table->name, (int)d->count,
                 d->count == 1 ? "" : "s");
        return NULL;
    }
    return d;
}

bool pd__device_registered(int32_t type)
{
    return type >= PD_PLACE_CUSTOM_FIRST && type < TYPES &&
           atomic_load_explicit(&devices[type], memory_order_acquire) != NULL;
}

pd_status pd__device_failed(const char *who, const pd__device *d, pd_place place, const char *op,
                            pd_status st)
{
    char name[96];
    pd__place_format(place, name, sizeof name);
    return pd__fail(st, "%s: %s on %s failed (device type '%s': %s)", who, op, name, d->table->name,
                    pd_status_name(st));
}

pd_status pd_device_count(int32_t type, int32_t *count)
{
    static const char who[] = "pd_device_count";
    if (count == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: count is NULL", who);
    if (type == PD_PLACE_GPU) {
        pd__device *d = cuda_device(who, "gpu");
        if (d == NULL)
            return pd__fail(cuda_load.status, "%s: gpu %s", who, cuda_load.message);
        *count = d->count;
        return PD_OK;
    }
    pd__device *d = pd__device_of(who, pd_place_make(type, 0));
    if (d == NULL)
        return pd_last_status();
    *count = d->count;
    return PD_OK;
}

pd_status pd_device_set_current(pd_place place)
{
    static const char who[] = "pd_device_set_current";
    pd__device *d = pd__device_of(who, place);
    if (d == NULL)
        return pd_last_status();
    if (!PD__DEVICE_HAS(d->table, set_device))
        return PD_OK; /* a device type without a current device has nothing to set */
    pd_status st = d->table->set_device(d->table->user, place.device_id);
    return st == PD_OK ? PD_OK : pd__device_failed(who, d, place, "set_device", st);
}

/* --- Memory -------------------------------------------------------------------------------- */

pd_status pd__device_alloc(const char *who, pd__device *d, pd_place place, size_t bytes, void **ptr)
{
    const pd_device_table *t = d->table;
    size_t n = bytes ? bytes : 1; /* tables take sizes > 0; an empty tensor still has a block */
    pd_status st = place.type == PD_PLACE_GPU_PINNED ? t->host_alloc(t->user, n, ptr)
                                                     : t->alloc(t->user, place.device_id, n, ptr);
    if (st == PD_OK)
        return PD_OK;
    char name[96];
    pd__place_format(place, name, sizeof name);
    if (st == PD_ERR_OUT_OF_MEMORY)
        return pd__fail(st, "%s: out of memory allocating %zu bytes on %s (device type '%s')", who,
                        bytes, name, t->name);
    return pd__device_failed(who, d, place, "allocation", st);
}

void pd__device_free(pd__device *d, pd_place place, void *ptr, size_t bytes)
{
    const pd_device_table *t = d->table;
    size_t n = bytes ? bytes : 1;
    /* A failing free has nobody to tell: storage release returns nothing. */
    if (place.type == PD_PLACE_GPU_PINNED)
        (void)t->host_free(t->user, ptr, n);
    else
        (void)t->free(t->user, place.device_id, ptr, n);
}

pd_status pd__device_memset(const char *who, pd_place place, void *ptr, int value, size_t bytes)
{
    if (bytes == 0)
        return PD_OK;
    if (pd_place_is_host(place)) {
        memset(ptr, value, bytes);
        return PD_OK;
    }
    pd__device *d = pd__device_of(who, place);
    pd_device_stream stream = NULL;
    if (d == NULL || pd__device_stream_of(who, d, place, &stream) != PD_OK)
        return pd_last_status();
    pd_status st = d->table->memset(d->table->user, place.device_id, ptr, value, bytes, stream);
    return st == PD_OK ? PD_OK : pd__device_failed(who, d, place, "memset", st);
}

/* Host <-> device copy on the current stream, synchronized before it returns. */
static pd_status copy_host(const char *who, pd_place dev_place, bool to_device, void *dst,
                           const void *src, size_t bytes)
{
    pd__device *d = pd__device_of(who, dev_place);
    pd_device_stream stream = NULL;
    if (d == NULL || pd__device_stream_of(who, d, dev_place, &stream) != PD_OK)
        return pd_last_status();
    const pd_device_table *t = d->table;
    int32_t id = dev_place.device_id;
    pd_status st = to_device ? t->copy_h2d(t->user, id, dst, src, bytes, stream)
                             : t->copy_d2h(t->user, id, dst, src, bytes, stream);
    if (st == PD_OK)
        st = t->stream_synchronize(t->user, id, stream);
    return st == PD_OK
               ? PD_OK
               : pd__device_failed(who, d, dev_place,
                                   to_device ? "copy host to device" : "copy device to host", st);
}

pd_status pd__device_copy(const char *who, pd_place dst_place, void *dst, pd_place src_place,
                          const void *src, size_t bytes)
{
    if (bytes == 0)
        return PD_OK;
    bool dst_host = pd_place_is_host(dst_place), src_host = pd_place_is_host(src_place);
    if (dst_host && src_host) {
        memcpy(dst, src, bytes);
        return PD_OK;
    }
    if (src_host)
        return copy_host(who, dst_place, true, dst, src, bytes);
    if (dst_host)
        return copy_host(who, src_place, false, dst, src, bytes);
    if (dst_place.type != src_place.type) { /* two device types: through host memory */
        void *stage = malloc(bytes);
        if (stage == NULL)
            return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory staging %zu bytes", who,
                            bytes);
        pd_status st = copy_host(who, src_place, false, stage, src, bytes);
        if (st == PD_OK)
            st = copy_host(who, dst_place, true, dst, stage, bytes);
        free(stage);
        return st;
    }
    pd__device *d = pd__device_of(who, dst_place);
    pd_device_stream stream = NULL, src_stream = NULL;
    if (d == NULL || pd__device_of(who, src_place) == NULL ||
        pd__device_stream_of(who, d, dst_place, &stream) != PD_OK)
        return pd_last_status();
    const pd_device_table *t = d->table;
    pd_status st = PD_OK;
    /* Work queued for the source on its own device's stream must be done before this
     * stream reads it. */
    if (src_place.device_id != dst_place.device_id &&
        (st = pd__device_stream_of(who, d, src_place, &src_stream)) == PD_OK)
        st = t->stream_synchronize(t->user, src_place.device_id, src_stream);
    if (st == PD_OK)
        st = t->copy_d2d(t->user, dst_place.device_id, dst, src_place.device_id, src, bytes,
                         stream);
    return st == PD_OK ? PD_OK : pd__device_failed(who, d, dst_place, "copy device to device", st);
}

pd_status pd__place_check(const char *who, pd_place place)
{
    if (pd__place_ok(&place))
        return PD_OK;
    if (place.type == PD_PLACE_CPU)
        return pd__place_refuse(who, place);
    return pd__device_of(who, place) ? PD_OK : pd_last_status();
}
