/*
 * fuzz_npz.c - libFuzzer harness for the .npz reader: the input is written to a memfd (the
 * reader wants a path; /proc/self/fd/N is one) and read with pd_npz_list, then every listed
 * member (and a fixed name) with pd_npz_load: end record, central directory, zip64 extras,
 * local headers, inflate, CRC-32 and the .npy parser behind them.
 * Built by tests/fuzz.cmake (-DPDEXT_BUILD_FUZZERS=ON, clang); see README.md.
 */
#include "pdext_npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("fuzz_npz", 0);
        if (memfd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    }
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    char **names = NULL;
    int32_t count = 0;
    if (pd_npz_list(path, &names, &count) == PD_OK) {
        for (int32_t i = 0; i < count && i < 8; ++i) {
            pd_tensor t = PD_TENSOR_UNDEFINED;
            if (pd_npz_load(path, names[i], &t) == PD_OK)
                pd_tensor_release(&t);
        }
        pd_npz_names_free(names, count);
    }
    pd_tensor t = PD_TENSOR_UNDEFINED;
    if (pd_npz_load(path, "x", &t) == PD_OK)
        pd_tensor_release(&t);
    return 0;
}
