/*
 * status.c - errors as values: each thread keeps the status and message of its last failed
 * call, as dlerror() and sqlite3_errmsg() do. The message buffer grows as needed (compiler
 * diagnostics can be long) and is freed when its thread exits.
 */
#include "pd_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pd_error_slot {
    pd_status status;
    char *message;
    size_t capacity;
} pd_error_slot;

static pthread_key_t error_key;
static pthread_once_t error_once = PTHREAD_ONCE_INIT;
/* Used when the per-thread slot itself cannot be allocated: better a shared, possibly racy
 * message than none at all. */
static pd_error_slot fallback_slot;
static char fallback_message[] = "out of memory while reporting an error";

static void error_slot_free(void *p)
{
    pd_error_slot *slot = p;
    free(slot->message);
    free(slot);
}

static void error_key_create(void) { (void)pthread_key_create(&error_key, error_slot_free); }

static pd_error_slot *error_slot(bool create)
{
    (void)pthread_once(&error_once, error_key_create);
    pd_error_slot *slot = pthread_getspecific(error_key);
    if (slot == NULL && create) {
        slot = calloc(1, sizeof *slot);
        if (slot == NULL || pthread_setspecific(error_key, slot) != 0) {
            free(slot);
            return &fallback_slot;
        }
    }
    return slot;
}

/* Makes room for `len` + 1 bytes; false if that is impossible. */
static bool slot_reserve(pd_error_slot *slot, size_t len)
{
    if (slot == &fallback_slot)
        return false;
    if (len + 1 <= slot->capacity)
        return true;
    size_t cap = slot->capacity ? slot->capacity : 256;
    while (cap < len + 1)
        cap *= 2;
    char *grown = realloc(slot->message, cap);
    if (grown == NULL)
        return false;
    slot->message = grown;
    slot->capacity = cap;
    return true;
}

pd_status pd__vfail(pd_status code, const char *fmt, va_list ap)
{
    pd_error_slot *slot = error_slot(true);
    slot->status = code;
    va_list copy;
    va_copy(copy, ap);
    int len = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (len < 0)
        len = 0;
    if (slot_reserve(slot, (size_t)len)) {
        vsnprintf(slot->message, (size_t)len + 1, fmt, ap);
    } else {
        slot->message = fallback_message;
    }
    return code;
}

pd_status pd__fail(pd_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pd__vfail(code, fmt, ap);
    va_end(ap);
    return code;
}

pd_status pd__fail_prefix(const char *fmt, ...)
{
    pd_error_slot *slot = error_slot(true);
    char prefix[512];
    va_list ap;
    va_start(ap, fmt);
    int plen = vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    if (plen < 0)
        plen = 0;
    if ((size_t)plen >= sizeof prefix)
        plen = sizeof prefix - 1;
    size_t old_len = slot->message ? strlen(slot->message) : 0;
    if (slot_reserve(slot, (size_t)plen + old_len)) {
        memmove(slot->message + plen, slot->message ? slot->message : "", old_len + 1);
        memcpy(slot->message, prefix, (size_t)plen);
    }
    return slot->status;
}

const char *pd_last_error(void)
{
    pd_error_slot *slot = error_slot(false);
    return (slot && slot->message) ? slot->message : "";
}

pd_status pd_last_status(void)
{
    pd_error_slot *slot = error_slot(false);
    return slot ? slot->status : PD_OK;
}

const char *pd_status_name(pd_status status)
{
    switch (status) {
    case PD_OK: return "PD_OK";
    case PD_ERR_INVALID_ARGUMENT: return "PD_ERR_INVALID_ARGUMENT";
    case PD_ERR_NOT_FOUND: return "PD_ERR_NOT_FOUND";
    case PD_ERR_ALREADY_EXISTS: return "PD_ERR_ALREADY_EXISTS";
    case PD_ERR_OUT_OF_MEMORY: return "PD_ERR_OUT_OF_MEMORY";
    case PD_ERR_UNAVAILABLE: return "PD_ERR_UNAVAILABLE";
    case PD_ERR_ABI_MISMATCH: return "PD_ERR_ABI_MISMATCH";
    case PD_ERR_OP_FAILED: return "PD_ERR_OP_FAILED";
    case PD_ERR_IO: return "PD_ERR_IO";
    case PD_ERR_BUILD: return "PD_ERR_BUILD";
    case PD_ERR_INVALID_MODULE: return "PD_ERR_INVALID_MODULE";
    case PD_ERR_INTERNAL: return "PD_ERR_INTERNAL";
    }
    return "PD_ERR_UNKNOWN";
}

const char *pd_version(void) { return PD_VERSION_STRING; }
