/*
 * api_table_test.c - the function table (pd_api, generated from pd_api_list.h): both tables
 * the runtime hands out fill every member the list declares, the C++ table differs from the
 * C one exactly on the context functions, a module reads the header it was handed, and
 * PD_API_HAS / pd_api_ext_find let a module test for members and blocks a runtime may lack.
 */
#include "runner_helpers.h"

#include <string.h>

typedef void (*any_fn)(void);

/* Per list entry: its member's offset, and whether the C++ table guards it. */
typedef struct entry {
    const char *name;
    size_t offset;
    bool guarded;
} entry;

#define CTX_ENTRY(ret, member, params, args, failed, c_fn, cxx_fn) \
    {#member, offsetof(pd_api, member), true},
#define CTX_VOID_ENTRY(member, params, args, c_fn, cxx_fn) \
    {#member, offsetof(pd_api, member), true},
#define SAME_ENTRY(ret, member, params, attrs, fn) {#member, offsetof(pd_api, member), false},
static const entry entries[] = {PD_API_LIST(CTX_ENTRY, CTX_VOID_ENTRY, SAME_ENTRY)};
#define N_ENTRIES ((int)(sizeof entries / sizeof entries[0]))

static any_fn slot(const pd_api *api, size_t offset)
{
    any_fn f;
    memcpy(&f, (const char *)api + offset, sizeof f);
    return f;
}

PD_TEST(ApiTable, HeaderDescribesTheRuntime)
{
    const pd_api *api = pd_runtime_api();
    PD_EXPECT_EQ(api->struct_size, sizeof(pd_api));
    PD_EXPECT_EQ(api->abi_major, PD_ABI_MAJOR);
    PD_EXPECT_EQ(api->abi_minor, PD_ABI_MINOR);
    PD_EXPECT_EQ(api->reserved, 0);
    PD_EXPECT(api->ext == NULL);
    PD_ASSERT(api->cxx != NULL);
    PD_EXPECT(api->cxx != api);
    PD_EXPECT_EQ(api->cxx->struct_size, sizeof(pd_api));
    PD_EXPECT_EQ(api->cxx->abi_major, PD_ABI_MAJOR);
    PD_EXPECT(api->cxx->cxx == api->cxx);
}

PD_TEST(ApiTable, FunctionsFillTheTableFromTheFirstListEntryToTheEnd)
{
    /* The list generates every function member: they follow one another from the first
     * entry to the end of the struct, so a member outside the list would show here. */
    PD_EXPECT_EQ(entries[0].offset, offsetof(pd_api, throw_error));
    for (int i = 0; i < N_ENTRIES; ++i)
        PD_EXPECT_EQ(entries[i].offset, offsetof(pd_api, throw_error) + (size_t)i * sizeof(any_fn));
    PD_EXPECT_EQ(sizeof(pd_api),
                 offsetof(pd_api, throw_error) + (size_t)N_ENTRIES * sizeof(any_fn));
}

PD_TEST(ApiTable, CxxTableMatchesTheCTableEntryByEntry)
{
    const pd_api *c = pd_runtime_api();
    const pd_api *cxx = c->cxx;
    int guarded = 0;
    for (int i = 0; i < N_ENTRIES; ++i) {
        any_fn cf = slot(c, entries[i].offset), xf = slot(cxx, entries[i].offset);
        PD_EXPECT(cf != NULL);
        PD_EXPECT(xf != NULL);
        if (entries[i].guarded) {
            ++guarded;
            PD_EXPECT(cf != xf); /* the C++ table's own wrapper */
        } else {
            PD_EXPECT(cf == xf); /* shared */
        }
        if (cf == NULL || xf == NULL || (cf != xf) != entries[i].guarded)
            pd_test_fail(__FILE__, __LINE__, "table entry %s", entries[i].name);
    }
    /* No two guarded members share a wrapper. */
    for (int i = 0; i < N_ENTRIES; ++i)
        for (int j = i + 1; j < N_ENTRIES; ++j)
            if (entries[i].guarded && entries[j].guarded)
                PD_EXPECT(slot(cxx, entries[i].offset) != slot(cxx, entries[j].offset));
    PD_EXPECT(guarded > 20);
}

PD_TEST(ApiTable, ModuleReadsTheTableItWasHanded)
{
    pd_registry *reg = rt_registry1("rt_api_ops");
    PD_ASSERT(reg != NULL);
    pd_tensor x = rt_tensor(PD_INT64, 1, (int64_t[]){6}, NULL); /* Info mirrors its shape */
    pd_tensor info = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(&x), out = pd_arg_of(&info);
    PD_ASSERT_OK(pd_run(reg, "api_info", &in, 1, NULL, 0, &out, 1));
    const int64_t *v = (const int64_t *)pd_data(&info);
    PD_EXPECT_EQ(v[0], (int64_t)sizeof(pd_api));
    PD_EXPECT_EQ(v[1], PD_ABI_MAJOR);
    PD_EXPECT_EQ(v[2], PD_ABI_MINOR);
    PD_EXPECT_EQ(v[3], 1);
    PD_EXPECT_EQ(v[4], 1);
    PD_EXPECT_EQ(v[5], 0);
    pd_tensor_release(&x);
    pd_tensor_release(&info);
    pd_registry_destroy(reg);
}

PD_TEST(ApiTable, HasTellsMembersPastAnOlderRuntimesSizeAbsent)
{
    pd_api older = *pd_runtime_api();
    older.struct_size = (uint32_t)offsetof(pd_api, parallel_for);
    PD_EXPECT(!PD_API_HAS(&older, parallel_for));
    PD_EXPECT(PD_API_HAS(&older, scratch));
    PD_EXPECT(PD_API_HAS(pd_runtime_api(), parallel_for));
}

PD_TEST(ApiTable, ExtensionChainIsSearchedByType)
{
    pd_api api = *pd_runtime_api();
    PD_EXPECT(pd_api_ext_find(&api, 1) == NULL);
    pd_api_ext second = {sizeof(pd_api_ext), 2, NULL};
    pd_api_ext first = {sizeof(pd_api_ext), 1, &second};
    api.ext = &first;
    PD_EXPECT(pd_api_ext_find(&api, 1) == &first);
    PD_EXPECT(pd_api_ext_find(&api, 2) == &second);
    PD_EXPECT(pd_api_ext_find(&api, 3) == NULL);
    PD_EXPECT(pd_api_ext_find(&api, PD_API_EXT_NONE) == NULL);
    /* A runtime too old to have `ext` has no blocks. */
    api.struct_size = (uint32_t)offsetof(pd_api, ext);
    PD_EXPECT(pd_api_ext_find(&api, 1) == NULL);
}
