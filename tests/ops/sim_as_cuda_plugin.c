/*
 * sim_as_cuda_plugin.c - a stand-in for libpdext_cuda.so that serves the simulated device's
 * table (pd_sim_device_table) as the GPU entry: with PDEXT_CUDA_PLUGIN naming it, GPU and
 * GPU-pinned places run on the sim, so device_pinned_test checks the runtime's GPU paths
 * (the plug-in load, pinned host memory and its cache, GPU device ids) on any machine.
 */
#include "pd_sim_device.h"

#include <stdio.h>

__attribute__((visibility("default"))) pd_status
pdext_cuda_device_table(uint32_t abi_version, const pd_device_table **out, char *message,
                        size_t size)
{
    if (abi_version != PD_DEVICE_ABI_VERSION) {
        snprintf(message, size, "built for device ABI %d, asked for %u", PD_DEVICE_ABI_VERSION,
                 (unsigned)abi_version);
        return PD_ERR_ABI_MISMATCH;
    }
    *out = pd_sim_device_table();
    return PD_OK;
}
