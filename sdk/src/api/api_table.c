/*
 * api_table.c - the one `const pd_api` table the runtime hands to every module it loads.
 *
 * Members are listed in the order pd_api declares them; the table only ever grows at the end
 * (pd_base.h: a minor ABI bump appends). It is a constant: modules of any number of registries
 * and threads share it, and it holds no state of its own.
 */
#include "call/kernel_ctx.h"

static const pd_api runtime_api = {
    .struct_size = sizeof(pd_api),
    .abi_major = PD_ABI_MAJOR,
    .abi_minor = PD_ABI_MINOR,
    .throw_error = pd__api_throw_error,
    .op_name = pd__ctx_op_name,
    .input_count = pd__ctx_input_count,
    .input = pd__ctx_input,
    .input_index = pd__ctx_input_index,
    .output_index = pd__ctx_output_index,
    .attr = pd__ctx_attr,
    .attr_index = pd__ctx_attr_index,
    .output_count = pd__ctx_output_count,
    .output = pd__ctx_output,
    .set_output = pd__ctx_set_output,
    .set_output_count = pd__ctx_set_output_count,
    .set_output_shape = pd__ctx_set_output_shape,
    .set_output_dtype = pd__ctx_set_output_dtype,
    .empty = pd__ctx_empty,
    .full = pd__ctx_full,
    .copy_to = pd__ctx_copy_to,
    .cast = pd__ctx_cast,
    .slice = pd__ctx_slice,
    .reshape = pd__ctx_reshape,
    .contiguous = pd__ctx_contiguous,
    .scratch = pd__ctx_scratch,
    .cxx = &pd__cxx_api,
    .pending_error = pd__ctx_pending_error,
    .report_error = pd__ctx_report_error,
    /* ABI 2.0: places and strided views. */
    .place_custom = pd_place_custom,
    .device_type_name = pd__device_type_label,
    .slice_step = pd__ctx_slice_step,
    .permute = pd__ctx_permute,
    .expand = pd__ctx_expand,
};

const pd_api *pd__runtime_api(void) { return &runtime_api; }

const pd_api *pd_runtime_api(void) { return &runtime_api; }
