/*
 * place_types.c - the process-wide table of custom device type names: a registered name gets
 * the number PD_PLACE_CUSTOM_FIRST + its slot, which places carry (pd_place.h), and numbers
 * turn back into names for messages. Hosts and device plug-ins register names
 * (pd_device_type_register); pd_place_custom looks them up, from op code through the function
 * table.
 *
 * Concurrency. Lookups take no lock: a slot's name is written once, before the slot count
 * that makes it visible is published with a release store, and never changes; the
 * `registered` bit is an atomic of its own. Registrations serialize on a mutex. Slots are
 * never reused, so a number keeps its meaning for the life of the process.
 *
 * A name that pd_place_custom is asked for before it is registered also gets a slot (not
 * registered), and the undefined place it returns carries -(1 + slot) as its device id, so
 * that the allocation that refuses the place can name the device type and say how to
 * register it. Such slots are capped (UNKNOWN_MAX) so that typos cannot fill the table.
 */
#include "device/device_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define SLOTS 128         /* names the table can hold, registered or not */
#define REGISTERED_MAX 64 /* registered custom device types per process */
#define UNKNOWN_MAX 32    /* slots for names asked for before their registration */

typedef struct slot {
    char name[PD_PLACE_CUSTOM_NAME_MAX + 1];
    atomic_bool registered;
} slot;

static struct {
    pthread_mutex_t lock;
    atomic_int count; /* slots in use, published with release */
    int registered;   /* registered slots (under lock) */
    int unknown;      /* slots of names not registered when first asked for (under lock) */
    slot slots[SLOTS];
} table = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* 1 .. PD_PLACE_CUSTOM_NAME_MAX characters of [A-Za-z0-9_]. */
static bool name_ok(const char *name)
{
    size_t n = 0;
    for (; name[n] != '\0'; ++n) {
        char c = name[n];
        bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_';
        if (!word || n >= PD_PLACE_CUSTOM_NAME_MAX)
            return false;
    }
    return n > 0;
}

/* The slot of `name`, or -1. Lock-free. */
static int find(const char *name)
{
    int n = atomic_load_explicit(&table.count, memory_order_acquire);
    for (int i = 0; i < n; ++i)
        if (strcmp(table.slots[i].name, name) == 0)
            return i;
    return -1;
}

/* A new slot for `name` (under the lock); -1 when the table is full. */
static int append(const char *name)
{
    int i = atomic_load_explicit(&table.count, memory_order_relaxed);
    if (i == SLOTS)
        return -1;
    strcpy(table.slots[i].name, name); /* name_ok bounded its length */
    atomic_init(&table.slots[i].registered, false);
    atomic_store_explicit(&table.count, i + 1, memory_order_release);
    return i;
}

static bool is_builtin(const char *name)
{
    return strcmp(name, "cpu") == 0 || strcmp(name, "gpu") == 0 ||
           strcmp(name, "gpu_pinned") == 0 || strcmp(name, "undefined") == 0;
}

pd_status pd_device_type_register(const char *name, int32_t *type)
{
    static const char who[] = "pd_device_type_register";
    if (type == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: type is NULL; pass the address of an "
                        "int32_t that receives the type number",
                        who);
    if (name == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: name is NULL", who);
    if (strlen(name) > PD_PLACE_CUSTOM_NAME_MAX)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: name '%.*s...' is %zu characters long; at most %d are allowed", who,
                        PD_PLACE_CUSTOM_NAME_MAX, name, strlen(name), PD_PLACE_CUSTOM_NAME_MAX);
    if (!name_ok(name))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: name '%s' is not a device type name; expected 1 to %d characters "
                        "of [A-Za-z0-9_]",
                        who, name, PD_PLACE_CUSTOM_NAME_MAX);
    if (is_builtin(name))
        return pd__fail(PD_ERR_ALREADY_EXISTS,
                        "%s: '%s' is a built-in device type; custom types need another name", who,
                        name);
    pthread_mutex_lock(&table.lock);
    int i = find(name);
    pd_status st = PD_OK;
    if (i >= 0 && atomic_load_explicit(&table.slots[i].registered, memory_order_relaxed)) {
        /* registered before: the same number again */
    } else if (table.registered == REGISTERED_MAX) {
        st = pd__fail(PD_ERR_UNAVAILABLE,
                      "%s: cannot register '%s': %d custom device types are registered "
                      "already, the most a process may have",
                      who, name, REGISTERED_MAX);
    } else if (i < 0 && (i = append(name)) < 0) {
        st = pd__fail(PD_ERR_UNAVAILABLE,
                      "%s: cannot register '%s': the table of device type names is full", who,
                      name);
    } else {
        atomic_store_explicit(&table.slots[i].registered, true, memory_order_release);
        ++table.registered;
    }
    pthread_mutex_unlock(&table.lock);
    if (st == PD_OK)
        *type = PD_PLACE_CUSTOM_FIRST + i;
    return st;
}

pd_place pd_place_custom(const char *type_name, int32_t device_id)
{
    if (type_name == NULL || !name_ok(type_name) || device_id < 0)
        return pd_place_make(PD_PLACE_UNDEFINED, 0);
    int i = find(type_name);
    if (i >= 0 && atomic_load_explicit(&table.slots[i].registered, memory_order_acquire))
        return pd_place_make(PD_PLACE_CUSTOM_FIRST + i, device_id);
    if (i < 0) { /* remember the name, so that messages about this place can give it */
        pthread_mutex_lock(&table.lock);
        i = find(type_name);
        if (i < 0 && table.unknown < UNKNOWN_MAX && (i = append(type_name)) >= 0)
            ++table.unknown;
        pthread_mutex_unlock(&table.lock);
    }
    return pd_place_make(PD_PLACE_UNDEFINED, i >= 0 ? -1 - i : 0);
}

const char *pd_device_type_name(int32_t type)
{
    int64_t i = (int64_t)type - PD_PLACE_CUSTOM_FIRST;
    if (i < 0 || i >= atomic_load_explicit(&table.count, memory_order_acquire) ||
        !atomic_load_explicit(&table.slots[i].registered, memory_order_acquire))
        return NULL;
    return table.slots[i].name;
}

const char *pd__place_custom_name(pd_place place)
{
    if (place.type >= PD_PLACE_CUSTOM_FIRST)
        return pd_device_type_name(place.type);
    if (place.type != PD_PLACE_UNDEFINED || place.device_id >= 0)
        return NULL;
    int64_t i = -1 - (int64_t)place.device_id;
    return i < atomic_load_explicit(&table.count, memory_order_acquire) ? table.slots[i].name
                                                                        : NULL;
}

const char *pd__device_type_label(int32_t type)
{
    const char *name = pd_device_type_name(type);
    return name ? name : "undefined";
}

const char *pd_place_type_name(const pd_place *p)
{
    const char *name = pd__place_builtin_name(p->type);
    return name ? name : pd__device_type_label(p->type);
}

/* --- Places in messages, and the message for a place no device serves ------------------ */

void pd__place_format(pd_place place, char *buf, size_t size)
{
    const char *custom = pd__place_custom_name(place);
    switch (place.type) {
    case PD_PLACE_CPU: snprintf(buf, size, "cpu"); break;
    case PD_PLACE_GPU: snprintf(buf, size, "gpu:%d", (int)place.device_id); break;
    case PD_PLACE_GPU_PINNED: snprintf(buf, size, "gpu_pinned"); break;
    default:
        if (place.type >= PD_PLACE_CUSTOM_FIRST && custom != NULL)
            snprintf(buf, size, "%s:%d", custom, (int)place.device_id);
        else if (place.type == PD_PLACE_UNDEFINED && custom != NULL)
            snprintf(buf, size, "undefined (device type '%s' is not registered)", custom);
        else
            snprintf(buf, size, "undefined (type %d)", (int)place.type);
        break;
    }
}

/* The formatted place and the message are built only once a place is refused: the CPU check
 * runs on every allocation, so the accepted case must cost two compares. GPU places never
 * get here: pd__device_of names what they miss (plug-in, driver, device). */
pd_status pd__place_refuse(const char *who, pd_place place)
{
    char name[96];
    pd__place_format(place, name, sizeof name);
    const char *custom = pd__place_custom_name(place);
    switch (place.type) {
    case PD_PLACE_CPU:
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: place cpu has device id %d; CPU places have device id 0 "
                        "(use pd_place_cpu())",
                        who, (int)place.device_id);
    default: break;
    }
    if (place.type >= PD_PLACE_CUSTOM_FIRST && custom != NULL)
        return pd__fail(PD_ERR_UNAVAILABLE,
                        "%s: place %s is a custom device of type '%s', which has no device "
                        "table: its name was registered with pd_device_type_register, but no "
                        "plug-in gave its memory functions (pd_device_register(\"%s\", "
                        "&table, &type)); or allocate on pd_place_cpu()",
                        who, name, custom, custom);
    if (place.type == PD_PLACE_UNDEFINED && custom != NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: place is undefined: device type '%s' was not registered when "
                        "pd_place_custom(\"%s\", ...) made it; register it first with "
                        "pd_device_type_register(\"%s\", &type) (a device plug-in does this "
                        "when it loads)",
                        who, custom, custom, custom);
    return pd__fail(PD_ERR_INVALID_ARGUMENT,
                    "%s: place is %s; expected a place made by pd_place_cpu(), "
                    "pd_place_gpu(), pd_place_gpu_pinned() or pd_place_custom()",
                    who, name);
}
