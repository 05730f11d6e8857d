/*
 * sim_convert.h - the simulated device's convert kernel (sim_convert.c), shared with the table
 * in sim_device.c: which conversions it does, and the element loop it runs on host pages.
 */
#ifndef PD_SIM_CONVERT_H
#define PD_SIM_CONVERT_H

#include "pd_device.h"
#include "pd_tensor.h"

/* A strided view and its conversion, as pd_device_table.convert describes it, with host
 * addresses. */
typedef struct sim_convert_job {
    void *dst;
    const unsigned char *src;
    pd_data_type dst_dtype, src_dtype;
    int32_t ndim;
    int64_t shape[PD_MAX_DIMS];
    int64_t strides[PD_MAX_DIMS];
} sim_convert_job;

/* Whether the kernel converts src_dtype to dst_dtype: any dtype to itself, and every pair of
 * int32, int64, float32 and float64. */
bool sim_convert_supported(pd_data_type dst_dtype, pd_data_type src_dtype);

/* The view's lowest and one-past-highest byte offsets from its first element. */
void sim_convert_span(const sim_convert_job *j, int64_t *lo, int64_t *hi);

/* Runs the conversion (a pd_sim_launch function: its argument is a malloc'd job it frees). */
void sim_convert_run(void *job);

#endif /* PD_SIM_CONVERT_H */
