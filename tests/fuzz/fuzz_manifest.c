/*
 * fuzz_manifest.c - libFuzzer harness for the JIT manifest reader (jit/jit_manifest.c):
 * the input is a manifest file in a scratch build directory, read with pd__manifest_read as
 * a warm pd_jit_load reads it. A manifest that is accepted must survive a round trip: written
 * back with pd__manifest_write and read again, it gives the same record (what the next warm
 * load would see). The whole-load path (pd_jit_load over corrupted manifests) is covered by
 * targeted tests in tests/jit_errors_test.c, since every load stats and hashes files.
 * Built by tests/fuzz.cmake (-DPDEXT_BUILD_FUZZERS=ON, clang); see README.md.
 */
#include "jit_internal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64], path[128];

static bool same_strv(const pd__strv *a, const pd__strv *b)
{
    if (a->n != b->n)
        return false;
    for (int32_t i = 0; i < a->n; ++i)
        if (strcmp(a->v[i], b->v[i]) != 0)
            return false;
    return true;
}

static bool same_manifest(const pd__manifest *a, const pd__manifest *b)
{
    if (a->key != b->key || strcmp(a->library, b->library) != 0 || a->n_inputs != b->n_inputs ||
        memcmp(&a->lib_id, &b->lib_id, sizeof a->lib_id) != 0 ||
        !same_strv(&a->warnings, &b->warnings) || !same_strv(&a->versions, &b->versions))
        return false;
    for (int32_t i = 0; i < a->n_inputs; ++i) {
        const pd__input *x = &a->inputs[i], *y = &b->inputs[i];
        if (strcmp(x->path, y->path) != 0 || x->st.size != y->st.size ||
            x->st.mtime_ns != y->st.mtime_ns || x->hash != y->hash)
            return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (dir[0] == '\0') {
        snprintf(dir, sizeof dir, "/tmp/pdext-fuzz-manifest-%ld", (long)getpid());
        if (mkdir(dir, 0700) != 0)
            abort();
        snprintf(path, sizeof path, "%s/manifest-shared", dir);
    }
    FILE *fp = fopen(path, "wb");
    if (fp == NULL || fwrite(data, 1, size, fp) != size || fclose(fp) != 0)
        abort();
    pd__manifest m;
    if (!pd__manifest_read(path, &m, NULL))
        return 0;
    pd__plan p;
    memset(&p, 0, sizeof p);
    p.who = "fuzz";
    p.build_dir = dir;
    p.kind = PD_JIT_SHARED;
    pd__manifest again;
    if (pd__manifest_write(&p, &m) != PD_OK || !pd__manifest_read(path, &again, NULL))
        abort();
    if (!same_manifest(&m, &again))
        abort();
    pd__manifest_free(&again);
    pd__manifest_free(&m);
    return 0;
}
