/*
 * fuzz_opdef.c - libFuzzer harness for op-definition validation: a hand-built op table whose
 * strings (op name, input and output names, "name: type" attr declarations, inplace pairs)
 * come from the input, loaded with pd_module_load_info. Layout of the input:
 *   byte 0: number of definitions (1..3)
 *   per definition, 5 bytes: kind (0..3, 3 being invalid), inputs (0..16), outputs (0..16),
 *     attrs (0..16), inplace pairs (0..8) -- a count past the array means "full, no NULL"
 *   the rest: the strings, separated by '\n', handed out in order (name, inputs, outputs,
 *     attrs, inplace input/output, for each definition); missing strings are NULL.
 * A table that loads is walked through the public accessors and unloaded.
 * Built by tests/fuzz.cmake (-DPDEXT_BUILD_FUZZERS=ON, clang); see README.md.
 */
#include "pdext.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_DEFS 3
#define MAX_STRINGS 512

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }
static const pd_api *slot;

/* The strings of the input, split at '\n', each a malloc'd NUL-terminated copy. */
typedef struct pool {
    char *s[MAX_STRINGS];
    int n, next;
} pool;

static void pool_fill(pool *p, const uint8_t *data, size_t size)
{
    memset(p, 0, sizeof *p);
    size_t start = 0;
    for (size_t i = 0; i <= size && p->n < MAX_STRINGS; ++i) {
        if (i < size && data[i] != '\n')
            continue;
        size_t len = i - start;
        char *s = malloc(len + 1);
        if (s == NULL)
            abort();
        memcpy(s, data + start, len);
        s[len] = '\0';
        p->s[p->n++] = s;
        start = i + 1;
    }
}

static const char *pool_take(pool *p) { return p->next < p->n ? p->s[p->next++] : NULL; }

static void pool_free(pool *p)
{
    for (int i = 0; i < p->n; ++i)
        free(p->s[i]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int ndefs = 1 + data[0] % MAX_DEFS;
    if (size < 1 + (size_t)ndefs * 5)
        return 0;
    const uint8_t *counts = data + 1;
    pool strings;
    pool_fill(&strings, data + 1 + ndefs * 5, size - 1 - (size_t)ndefs * 5);

    pd_op_def defs[MAX_DEFS];
    const pd_op_def *table[MAX_DEFS];
    for (int d = 0; d < ndefs; ++d) {
        const uint8_t *c = counts + d * 5;
        pd_op_def *def = &defs[d];
        memset(def, 0, sizeof *def);
        def->struct_size = sizeof *def;
        def->kind = c[0] % 4;
        def->file = "fuzz.c";
        def->line = d + 1;
        def->kernel = noop;
        def->name = pool_take(&strings);
        int ni = c[1] % (PD_MAX_INPUTS + 1), no = c[2] % (PD_MAX_OUTPUTS + 1);
        int na = c[3] % (PD_MAX_ATTRS + 1), np = c[4] % (PD_MAX_INPLACE + 1);
        for (int i = 0; i < ni; ++i)
            def->inputs[i] = pool_take(&strings);
        for (int i = 0; i < no; ++i)
            def->outputs[i] = pool_take(&strings);
        for (int i = 0; i < na; ++i)
            def->attrs[i] = pool_take(&strings);
        for (int i = 0; i < np; ++i) {
            def->inplace[i][0] = pool_take(&strings);
            def->inplace[i][1] = pool_take(&strings);
        }
        table[d] = def;
    }

    pd_module_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.abi_major = PD_ABI_MAJOR;
    info.abi_minor = PD_ABI_MINOR;
    info.ops_begin = table;
    info.ops_end = table + ndefs;
    info.api_slot = &slot;
    info.sdk_version = PD_VERSION_STRING;
    info.compiler = "fuzz";

    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        abort();
    pd_module *m = NULL;
    if (pd_module_load_info(reg, &info, "fuzz", &m) == PD_OK) {
        for (int32_t i = 0; i < pd_module_op_count(m); ++i) {
            const pd_op *op = pd_module_op(m, i);
            if (pd_op_find(reg, pd_op_name(op)) != op)
                abort();
            for (int32_t a = 0; a < pd_op_attr_count(op); ++a)
                if (pd_op_attr_name(op, a) == NULL || pd_op_attr_type(op, a) == PD_ATTR_UNDEFINED)
                    abort();
            (void)pd_op_grad(op);
            (void)pd_op_input_count(op);
            (void)pd_op_output_count(op);
        }
        pd_module_unload(m);
    }
    pd_registry_destroy(reg);
    pool_free(&strings);
    return 0;
}
