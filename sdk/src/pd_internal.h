/*
 * pd_internal.h - what every file of libpdext needs and hosts never see: the public headers,
 * error reporting (base/status.c) and the mark of the few internals exported to the sibling
 * libraries. Everything else internal belongs to one folder and is declared in that folder's
 * own header, which a file includes only when it stands above that folder (docs/
 * architecture.md, "Layers of libpdext"; tools/check_layers.py checks it):
 *
 *   device/device_internal.h   device tables, streams, places in messages
 *   tensor/tensor_internal.h   storage, shapes and layouts, casts, the device cache
 *   tensor/pending.h           completions: tensors an async call has not computed yet
 *   io/io_internal.h           atomic files, .npy
 *   ops/pd_registry_internal.h registered ops (struct pd_op), registry, modules
 *   call/kernel_ctx.h          one op call (the runner, the kernel context, unwinding)
 *   exec/executor_internal.h   the asynchronous executor
 */
#ifndef PD_INTERNAL_H
#define PD_INTERNAL_H

#define PDEXT_NO_MODULE_ENTRY 1 /* libpdext is not an op module */
#include "pdext.h"

#include "pd_device.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h> /* snprintf: every layer formats messages */
#include <string.h>

/* libpdext_jit is a separate library on top of libpdext that needs these few internals; they
 * are exported from libpdext.so (under their reserved pd__ names, declared in no public header)
 * rather than compiled twice, which would give the JIT a second per-thread error state. */
#define PD__SIBLING_API __attribute__((visibility("default")))

/* --- status.c ---------------------------------------------------------------------------- */

/* Records `code` and the formatted message as this thread's last error; returns `code`. */
PD__SIBLING_API pd_status pd__fail(pd_status code, const char *fmt, ...) PD_PRINTF(2, 3);
pd_status pd__vfail(pd_status code, const char *fmt, va_list ap);
/* Prepends "prefix" to this thread's last message (keeps its status); returns the status. */
PD__SIBLING_API pd_status pd__fail_prefix(const char *fmt, ...) PD_PRINTF(1, 2);

/* --- options.c --------------------------------------------------------------------------- */

/* Copies a host's options struct `src` (first field: uint32_t struct_size; NULL: defaults) into
 * dst (dst_size bytes, zeroed first, so fields an older host does not know read 0); a
 * struct_size of 0 or past dst_size is refused, the message naming who, subject and type. */
PD__SIBLING_API pd_status pd__options_read(const char *who, const char *subject, const char *type,
                                           void *dst, size_t dst_size, const void *src);

#endif /* PD_INTERNAL_H */
