/*
 * fake_cuda_plugin.c - stand-ins for libpdext_cuda.so in device_cuda_test.cc: built twice,
 * as a plug-in whose table is of another device ABI version (FAKE_ABI) and as a library
 * without the entry point (FAKE_NO_ENTRY), so that the runtime's refusals can be checked on
 * any machine.
 */
#include "pd_device.h"

#ifndef FAKE_NO_ENTRY
static pd_device_table table = {
    .struct_size = sizeof(pd_device_table),
    .abi_version = PD_DEVICE_ABI_VERSION + 98,
    .name = "fake",
};

__attribute__((visibility("default"))) pd_status
pdext_cuda_device_table(uint32_t abi_version, const pd_device_table **out, char *message,
                        size_t size)
{
    (void)abi_version;
    (void)message;
    (void)size;
    *out = &table;
    return PD_OK;
}
#else
__attribute__((visibility("default"))) int fake_plugin_without_entry(void) { return 0; }
#endif
