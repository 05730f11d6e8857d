/*
 * pd_sim_device.h - the simulated device: a device plug-in (libpdext_sim) that implements
 * pd_device_table (pd_device.h) over host memory, for the test suite and as the reference
 * for custom-device authors (its source, sdk/src/device/sim/sim_device.c, is written to be
 * read).
 *
 * It behaves like a real device where that matters to correctness:
 *   - "Device" memory is separately mapped host pages, handed out under addresses the CPU
 *     cannot use (the mapping's address plus 2^52): reading pd_data of a sim tensor on the
 *     host faults instead of working by luck. Only the sim itself (copies, memset, launched
 *     functions through pd_sim_host_address) touches the pages.
 *   - Streams are deferred queues: enqueued work runs, in order, only when something waits
 *     for it (stream or event synchronize, a synchronous copy, a free, or another stream's
 *     wait on an event of it). A missing synchronize therefore shows up as a wrong result
 *     every time. pd_device_table.stream_query reports pending work without running it.
 *   - Copies are checked against the allocations: a range outside every allocation of the
 *     device fails with PD_ERR_INVALID_ARGUMENT.
 *   - It has the optional members: pinned host memory (host_alloc: mapped pages the CPU
 *     uses directly) and the convert kernel, which does strided copies of any dtype and
 *     casts between int32, int64, float32 and float64 on the device; other casts answer
 *     PD_ERR_UNAVAILABLE, so the runtime's staging through host memory runs too.
 *   - Each device has a capacity (default 1 GiB); an allocation past it fails with
 *     PD_ERR_OUT_OF_MEMORY. Everything is counted (pd_sim_stats) so tests can prove what
 *     ran and that nothing leaked.
 */
#ifndef PD_SIM_DEVICE_H
#define PD_SIM_DEVICE_H

#include "pd_device.h"

PD_EXTERN_C_BEGIN

/* Devices of the simulated type. */
#define PD_SIM_DEVICES 2

/* Registers device type "sim" (PD_SIM_DEVICES devices) and writes its type number to *type
 * (may be NULL). Calling it again returns the same number. */
pd_status pd_sim_device_install(int32_t *type);

/* The sim's table itself, for hosts and tests that install it under another name or serve
 * it as the GPU entry (a stand-in for libpdext_cuda: PDEXT_CUDA_PLUGIN naming a library
 * whose pdext_cuda_device_table returns it). */
const pd_device_table *pd_sim_device_table(void);

/* Counters since the process started (live_* are current). */
typedef struct pd_sim_stats {
    int64_t live_allocs; /* device allocations not yet freed, all devices */
    int64_t live_bytes;  /* their bytes */
    int64_t allocs;      /* allocations made */
    int64_t frees;       /* allocations freed */
    int64_t copies_h2d, copies_d2h, copies_d2d, memsets; /* operations done */
    int64_t launches;                                    /* launched functions run */
    int64_t pending; /* jobs enqueued on some stream and not yet run */
    int64_t live_streams, live_events;
    int64_t converts;                /* convert kernels run (strided copies and casts) */
    int64_t host_allocs, host_frees; /* pinned host memory (host_alloc / host_free) */
    int64_t live_host_allocs;
} pd_sim_stats;
void pd_sim_stats_get(pd_sim_stats *out);

/* Calls the runtime (or anyone) made of the sim's table members since the process started,
 * one counter per member: what a test counts to prove which device calls a path makes, such
 * as no stream_synchronize and no event per op call on a host's stream. Where pd_sim_stats
 * counts work done, this counts requests, each when it is made (a queued copy counts at once).
 * Copies are one counter (h2d, d2h and d2d). */
typedef struct pd_sim_calls {
    int64_t alloc, free, memset, copy, convert, launch;
    int64_t stream_create, stream_destroy, stream_synchronize, stream_query;
    int64_t event_create, event_destroy, event_record, event_wait, event_synchronize;
} pd_sim_calls;
void pd_sim_calls_get(pd_sim_calls *out);

/* Bytes each device can hold (0: the default, 1 GiB); the live allocations are not touched. */
void pd_sim_set_capacity(size_t bytes);

/* Enqueues fn(arg) on `stream` (NULL: runs it now), after the work already enqueued there:
 * how a kernel "launches" on the sim (the stream is pd_stream(ctx)). Like a CUDA host
 * function, fn must not call pdext or the sim (no synchronize, no tensor release). */
pd_status pd_sim_launch(pd_device_stream stream, void (*fn)(void *arg), void *arg);

/* The host address behind sim device address `device_ptr`, for functions run by
 * pd_sim_launch; NULL for an address that is no sim memory. */
void *pd_sim_host_address(const void *device_ptr);

PD_EXTERN_C_END

#endif /* PD_SIM_DEVICE_H */
