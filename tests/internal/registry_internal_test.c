/*
 * registry_internal_test.c - what only libpdext's own files see of the registry: the parsed
 * struct pd_op the runner reads (base names, vector/optional flags, inplace indices), grad
 * links resolved in the snapshot, pd__module_load_replacing (the JIT's reload) and the
 * reclaiming of retired snapshots (counted, and resident memory measured). Linked against
 * the static library, whose hidden internal functions a program can call.
 */
#include "ops/pd_registry_internal.h"
#include "pd_test.h"

#include <stdio.h>
#include <unistd.h>

static const char *module_path(const char *name)
{
    char rel[256];
    snprintf(rel, sizeof rel, "%s.so", name);
    return pd_test_path(rel);
}

static pd_registry *registry_with(const char *module, pd_module **m)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return NULL;
    if (pd_module_load(reg, module_path(module), m) != PD_OK) {
        pd_test_fail(__FILE__, __LINE__, "loading %s: %s", module, pd_last_error());
        pd_registry_destroy(reg);
        return NULL;
    }
    return reg;
}

PD_TEST(OpInternals, ParsesBaseNamesAndFlags)
{
    pd_registry *reg = registry_with("tm_good_ops", NULL);
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "tm_every_attr");
    PD_ASSERT(op != NULL);
    PD_EXPECT_STREQ(op->inputs[0].base, "X");
    PD_EXPECT(!op->inputs[0].is_vector && !op->inputs[0].is_optional);
    PD_EXPECT_STREQ(op->inputs[1].base, "Ys");
    PD_EXPECT_STREQ(op->inputs[1].decl, "Ys@VECTOR");
    PD_EXPECT(op->inputs[1].is_vector && !op->inputs[1].is_optional);
    PD_EXPECT_STREQ(op->inputs[2].base, "Bias");
    PD_EXPECT(!op->inputs[2].is_vector && op->inputs[2].is_optional);
    PD_EXPECT_STREQ(op->outputs[1].base, "Outs");
    PD_EXPECT(op->outputs[1].is_vector);
    PD_EXPECT(op->kernel != NULL);
    PD_EXPECT(op->infer_shape == NULL && op->infer_dtype == NULL);
    const pd_op *grad = pd_op_find(reg, "tm_every_attr_grad");
    PD_EXPECT_STREQ(grad->inputs[2].base, "Out@GRAD");
    PD_EXPECT_STREQ(grad->outputs[1].base, "Ys@GRAD");
    PD_EXPECT(grad->outputs[1].is_vector);
    const pd_op *grad2 = pd_op_find(reg, "tm_every_attr_grad_grad");
    PD_EXPECT_STREQ(grad2->inputs[1].base, "X@GRAD@GRAD");
    pd_registry_destroy(reg);
}

PD_TEST(OpInternals, ResolvesTheInplaceMapToInputIndices)
{
    pd_registry *reg = registry_with("tm_good_ops", NULL);
    PD_ASSERT(reg != NULL);
    const pd_op *op = pd_op_find(reg, "tm_inplace");
    PD_ASSERT(op != NULL);
    PD_EXPECT_EQ(op->inplace_input[0], 0);
    PD_EXPECT_EQ(op->inplace_input[1], 1);
    PD_EXPECT_EQ(op->inplace_input[2], -1);
    PD_EXPECT_EQ(pd_op_find(reg, "tm_aliases")->inplace_input[0], -1);
    pd_registry_destroy(reg);
}

PD_TEST(OpInternals, LinksGradOpsBothWays)
{
    pd_registry *reg = registry_with("tm_good_ops", NULL);
    PD_ASSERT(reg != NULL);
    const pd_op *fwd = pd_op_find(reg, "tm_every_attr");
    const pd_op *grad = pd_op_find(reg, "tm_every_attr_grad");
    const pd_op *grad2 = pd_op_find(reg, "tm_every_attr_grad_grad");
    PD_EXPECT(pd__op_forward(fwd) == NULL && pd_op_grad(fwd) == grad);
    PD_EXPECT(pd__op_forward(grad) == fwd && pd_op_grad(grad) == grad2);
    PD_EXPECT(pd__op_forward(grad2) == grad && pd_op_grad(grad2) == NULL);
    pd_registry_destroy(reg);
}

PD_TEST(OpInternals, UnloadingAForwardModuleClearsTheGradOpsLink)
{
    pd_module *fwd_mod = NULL;
    pd_registry *reg = registry_with("tm_forward_only", &fwd_mod);
    PD_ASSERT(reg != NULL);
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_grad_only"), NULL));
    const pd_op *grad = pd_op_find(reg, "tm_split_grad");
    PD_EXPECT(pd__op_forward(grad) == pd_op_find(reg, "tm_split"));
    PD_EXPECT_OK(pd_module_unload(fwd_mod));
    PD_EXPECT(pd__op_forward(grad) == NULL);
    /* The forward op comes back: the link is restored. */
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_forward_only"), NULL));
    PD_EXPECT(pd__op_forward(grad) == pd_op_find(reg, "tm_split"));
    PD_EXPECT(pd_op_grad(pd_op_find(reg, "tm_split")) == grad);
    pd_registry_destroy(reg);
}

PD_TEST(Replacing, SwapsAModuleForANewOneWithTheSameOps)
{
    pd_module *old = NULL;
    pd_registry *reg = registry_with("tm_good_ops", &old);
    PD_ASSERT(reg != NULL);
    /* Without `replace` the same ops collide... */
    PD_EXPECT_ERROR(pd__module_load_replacing(reg, module_path("tm_refuse_dup_across"), NULL, NULL),
                    PD_ERR_ALREADY_EXISTS, "op 'tm_aliases' is already registered by");
    /* ...with it they replace the old module's. tm_refuse_dup_across holds tm_bystander and
     * tm_aliases only. */
    pd_module *fresh = NULL;
    PD_ASSERT_OK(pd__module_load_replacing(reg, module_path("tm_refuse_dup_across"), old, &fresh));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 2);
    const pd_op *aliases = pd_op_find(reg, "tm_aliases");
    PD_ASSERT(aliases != NULL);
    PD_EXPECT(pd_op_module(aliases) == fresh);
    PD_EXPECT_EQ(pd_op_attr_count(aliases), 0);
    PD_EXPECT(pd_op_find(reg, "tm_every_attr") == NULL);
    PD_EXPECT(pd_op_find(reg, "tm_bystander") != NULL);
    pd_registry_destroy(reg);
}

PD_TEST(Replacing, LeavesTheOldModuleLoadedWhenTheNewOneIsRefused)
{
    pd_module *old = NULL;
    pd_registry *reg = registry_with("tm_good_ops", &old);
    PD_ASSERT(reg != NULL);
    PD_EXPECT_ERROR(pd__module_load_replacing(reg, module_path("tm_refuse_attr_no_colon"), old,
                                              NULL),
                    PD_ERR_INVALID_MODULE, "attr \"axis int64_t\" is malformed");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 5);
    PD_EXPECT(pd_op_module(pd_op_find(reg, "tm_aliases")) == old);
    PD_EXPECT_EQ(pd_module_op_count(old), 5);
    pd_registry_destroy(reg);
}

PD_TEST(Replacing, RefusesAModuleOfAnotherRegistry)
{
    pd_module *old = NULL;
    pd_registry *a = registry_with("tm_good_ops", &old);
    pd_registry *b = NULL;
    PD_ASSERT(a != NULL);
    PD_ASSERT_OK(pd_registry_create(&b));
    PD_EXPECT_ERROR(pd__module_load_replacing(b, module_path("tm_good_cxx"), old, NULL),
                    PD_ERR_INVALID_ARGUMENT, "belongs to another registry");
    PD_EXPECT_EQ(pd_registry_op_count(b), 0);
    pd_registry_destroy(b);
    pd_registry_destroy(a);
}

PD_TEST(Replacing, KeepsGradOpsOfOtherModulesLinked)
{
    pd_module *fwd_mod = NULL;
    pd_registry *reg = registry_with("tm_forward_only", &fwd_mod);
    PD_ASSERT(reg != NULL);
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_grad_only"), NULL));
    /* Reloading the forward module (the JIT rebuilt it) keeps tm_split_grad linked to the
     * new tm_split. */
    pd_module *fresh = NULL;
    PD_ASSERT_OK(pd__module_load_replacing(reg, module_path("tm_forward_only"), fwd_mod, &fresh));
    const pd_op *split = pd_op_find(reg, "tm_split");
    PD_EXPECT(pd_op_module(split) == fresh);
    PD_EXPECT(pd_op_grad(split) == pd_op_find(reg, "tm_split_grad"));
    PD_EXPECT(pd__op_forward(pd_op_find(reg, "tm_split_grad")) == split);
    pd_registry_destroy(reg);
}

/* --- Retired snapshots --------------------------------------------------------------------- */

/* Resident set size in bytes, from /proc/self/statm. */
static long resident_bytes(void)
{
    long pages = 0, resident = 0;
    FILE *fp = fopen("/proc/self/statm", "r");
    if (fp == NULL)
        return -1;
    if (fscanf(fp, "%ld %ld", &pages, &resident) != 2)
        resident = -1;
    fclose(fp);
    return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

PD_TEST(Snapshots, LoadingAndUnloadingAModuleManyTimesKeepsNoRetiredSnapshot)
{
    pd_registry *reg = registry_with("tm_good_ops", NULL);
    PD_ASSERT(reg != NULL);
    const char *path = module_path("tm_forward_only");
    int64_t live = pd__snapshot_live_count();
    long rss = -1;
    for (int i = 0; i < 20000; ++i) {
        pd_module *m = NULL;
        PD_ASSERT_OK(pd_module_load(reg, path, &m));
        PD_ASSERT(pd_op_find(reg, "tm_split") != NULL);
        PD_ASSERT_OK(pd_module_unload(m));
        /* At most the current snapshot and none retired: no lookup was in flight. */
        PD_ASSERT_EQ(pd__snapshot_live_count(), live);
        PD_ASSERT(reg->retired == NULL);
        if (i == 999) /* allocator and loader warmed up */
            rss = resident_bytes();
    }
    long grown = resident_bytes() - rss;
    PD_EXPECT(rss > 0);
#ifndef __SANITIZE_ADDRESS__ /* ASan's quarantine keeps freed blocks resident on purpose */
    PD_EXPECT(grown <= 1024 * 1024);
#else
    (void)grown;
#endif
    pd_registry_destroy(reg);
}

PD_TEST(Snapshots, APinnedReaderKeepsTheRetiredSnapshotUntilItUnpins)
{
    pd_registry *reg = registry_with("tm_good_ops", NULL);
    PD_ASSERT(reg != NULL);
    int64_t live = pd__snapshot_live_count();
    atomic_long *pin;
    const pd__snapshot *held = pd__snapshot_pin(reg, &pin);
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_module_load(reg, module_path("tm_forward_only"), &m));
    PD_EXPECT_EQ(pd__snapshot_live_count(), live + 1); /* the held one is retired, not freed */
    PD_EXPECT(reg->retired == held);
    PD_EXPECT(pd__snapshot_find(held, "tm_every_attr") != NULL); /* still readable */
    pd__snapshot_unpin(pin);
    PD_ASSERT_OK(pd_module_unload(m)); /* the next publish frees every retired snapshot */
    PD_EXPECT_EQ(pd__snapshot_live_count(), live);
    PD_EXPECT(reg->retired == NULL);
    pd_registry_destroy(reg);
}

PD_TEST(Snapshots, DestroyFreesEverySnapshot)
{
    int64_t live = pd__snapshot_live_count();
    pd_registry *reg = registry_with("tm_good_ops", NULL);
    PD_ASSERT(reg != NULL);
    PD_EXPECT_EQ(pd__snapshot_live_count(), live + 1);
    pd_registry_destroy(reg);
    PD_EXPECT_EQ(pd__snapshot_live_count(), live);
}
