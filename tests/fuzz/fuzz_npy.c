/*
 * fuzz_npy.c - libFuzzer harness for the .npy parser: the input is a whole .npy image (magic,
 * version, header length, the header dict, the data), read both from memory with
 * pd_npy_load_buffer and as a file (a memfd) with pd_npy_load, which has its own preamble
 * and header reading. Both must agree (same status, same tensor), and a tensor's bytes must be
 * the image's tail.
 * Built by tests/fuzz.cmake (-DPDEXT_BUILD_FUZZERS=ON, clang); see README.md.
 */
#include "pdext_npy.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int memfd = -1;
static char path[64];

static bool same_tensor(const pd_tensor *a, const pd_tensor *b)
{
    if (a->dtype != b->dtype || a->ndim != b->ndim || pd_nbytes(a) != pd_nbytes(b))
        return false;
    for (int32_t i = 0; i < a->ndim; ++i)
        if (a->shape[i] != b->shape[i])
            return false;
    return pd_nbytes(a) == 0 || memcmp(a->data, b->data, pd_nbytes(a)) == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (memfd < 0) {
        memfd = memfd_create("fuzz_npy", 0);
        if (memfd < 0)
            abort();
        snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
    }
    if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
        abort();
    pd_tensor t = PD_TENSOR_UNDEFINED, f = PD_TENSOR_UNDEFINED;
    pd_status sb = pd_npy_load_buffer(data, size, "fuzz", &t);
    pd_status sf = pd_npy_load(path, &f);
    if (sb != sf)
        abort();
    if (sb != PD_OK)
        return 0;
    size_t n = pd_nbytes(&t);
    /* The elements are the last n bytes of the image: anything else is a misread. */
    if (n > size || (n && memcmp(t.data, data + size - n, n) != 0) || !same_tensor(&t, &f))
        abort();
    pd_tensor_release(&t);
    pd_tensor_release(&f);
    return 0;
}
