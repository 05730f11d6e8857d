/*
 * registry_test.c - the registry itself: lookups and their messages, listing, op accessors,
 * and the ops linked into this very test program (defined below with PD_BUILD_OP and
 * registered through pd_register_linked_ops, as a host with built-in ops does).
 */
#include "extension.h"
#include "pd_test.h"

#include <pthread.h>
#include <stdatomic.h>

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }

PD_BUILD_OP(tl_add,
    .inputs = {"X", "Y"},
    .outputs = {"Out"},
    .attrs = {"alpha: float"},
    .kernel = noop);

PD_BUILD_GRAD_OP(tl_add,
    .inputs = {PD_GRAD("Out")},
    .outputs = {PD_GRAD("X"), PD_GRAD("Y")},
    .attrs = {"alpha: float"},
    .kernel = noop);

PD_BUILD_OP(tl_identity, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop);

static pd_registry *registry_with_linked_ops(pd_module **m)
{
    pd_registry *reg = NULL;
    if (pd_registry_create(&reg) != PD_OK)
        return NULL;
    if (pd_register_linked_ops(reg, m) != PD_OK) {
        pd_test_fail(__FILE__, __LINE__, "pd_register_linked_ops: %s", pd_last_error());
        pd_registry_destroy(reg);
        return NULL;
    }
    return reg;
}

PD_TEST(Registry, StartsEmpty)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    PD_EXPECT(pd_registry_op_at(reg, 0) == NULL);
    PD_EXPECT(pd_op_find(reg, "tl_add") == NULL);
    PD_EXPECT_EQ(pd_last_status(), PD_ERR_NOT_FOUND);
    PD_EXPECT_STREQ(pd_last_error(), "pd_op_find: no op named 'tl_add' is registered");
    pd_registry_destroy(reg);
}

PD_TEST(Registry, RegistersTheOpsLinkedIntoTheProgram)
{
    pd_module *m = NULL;
    pd_registry *reg = registry_with_linked_ops(&m);
    PD_ASSERT(reg != NULL);
    PD_ASSERT(m != NULL);
    PD_EXPECT_STREQ(pd_module_path(m), "(linked into the program)");
    PD_EXPECT_EQ(pd_module_op_count(m), 3);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 3);
    const pd_op *add = pd_op_find(reg, "tl_add");
    const pd_op *add_grad = pd_op_find(reg, "tl_add_grad");
    PD_ASSERT(add && add_grad);
    PD_EXPECT(pd_op_grad(add) == add_grad);
    PD_EXPECT_EQ(pd_op_input_count(add), 2);
    PD_EXPECT_EQ(pd_op_output_count(add_grad), 2);
    PD_EXPECT_STREQ(pd_op_attr_name(add_grad, 0), "alpha");
    PD_EXPECT_EQ(pd_op_attr_type(add_grad, 0), PD_ATTR_FLOAT);
    PD_EXPECT(pd_op_module(add) == m);
    /* This program's own slot now holds the runtime's table. */
    PD_EXPECT(pd__api == pd_runtime_api());
    pd_registry_destroy(reg);
}

PD_TEST(Registry, RefusesRegisteringTheLinkedOpsTwice)
{
    pd_registry *reg = registry_with_linked_ops(NULL);
    PD_ASSERT(reg != NULL);
    pd_module *again = NULL;
    PD_EXPECT_ERROR(pd_register_linked_ops(reg, &again), PD_ERR_ALREADY_EXISTS,
                    "pd_module_load_info: (linked into the program): op 'tl_");
    PD_EXPECT_CONTAINS(pd_last_error(), "' is already registered by (linked into the program)");
    PD_EXPECT(again == NULL);
    PD_EXPECT_EQ(pd_registry_op_count(reg), 3);
    pd_registry_destroy(reg);
}

PD_TEST(Registry, UnloadsTheLinkedOps)
{
    pd_module *m = NULL;
    pd_registry *reg = registry_with_linked_ops(&m);
    PD_ASSERT(reg != NULL);
    PD_EXPECT_OK(pd_module_unload(m));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    PD_EXPECT(pd_op_find(reg, "tl_identity") == NULL);
    /* And registers them again. */
    PD_EXPECT_OK(pd_register_linked_ops(reg, &m));
    PD_EXPECT(pd_op_find(reg, "tl_identity") != NULL);
    pd_registry_destroy(reg);
}

PD_TEST(Registry, ListsOpsSortedByName)
{
    pd_registry *reg = registry_with_linked_ops(NULL);
    PD_ASSERT(reg != NULL);
    PD_EXPECT_STREQ(pd_op_name(pd_registry_op_at(reg, 0)), "tl_add");
    PD_EXPECT_STREQ(pd_op_name(pd_registry_op_at(reg, 1)), "tl_add_grad");
    PD_EXPECT_STREQ(pd_op_name(pd_registry_op_at(reg, 2)), "tl_identity");
    PD_EXPECT(pd_registry_op_at(reg, 3) == NULL);
    PD_EXPECT(pd_registry_op_at(reg, -1) == NULL);
    PD_EXPECT_EQ(pd_last_status(), PD_ERR_INVALID_ARGUMENT);
    pd_registry_destroy(reg);
}

PD_TEST(Registry, SuggestsACloseNameForAnUnknownOne)
{
    pd_registry *reg = registry_with_linked_ops(NULL);
    PD_ASSERT(reg != NULL);
    PD_EXPECT(pd_op_find(reg, "tl_ad") == NULL);
    PD_EXPECT_STREQ(pd_last_error(),
                    "pd_op_find: no op named 'tl_ad' is registered (did you mean 'tl_add'?)");
    PD_EXPECT(pd_op_find(reg, "tl_identiy") == NULL);
    PD_EXPECT_CONTAINS(pd_last_error(), "did you mean 'tl_identity'?");
    PD_EXPECT(pd_op_find(reg, "conv2d") == NULL);
    PD_EXPECT_STREQ(pd_last_error(), "pd_op_find: no op named 'conv2d' is registered");
    PD_EXPECT(pd_op_find(reg, "") == NULL);
    PD_EXPECT_EQ(pd_last_status(), PD_ERR_NOT_FOUND);
    pd_registry_destroy(reg);
}

PD_TEST(Registry, IsCaseSensitive)
{
    pd_registry *reg = registry_with_linked_ops(NULL);
    PD_ASSERT(reg != NULL);
    PD_EXPECT(pd_op_find(reg, "TL_ADD") == NULL);
    PD_EXPECT(pd_op_find(reg, "tl_add ") == NULL);
    pd_registry_destroy(reg);
}

PD_TEST(Registry, RejectsNullArguments)
{
    PD_EXPECT_ERROR(pd_registry_create(NULL), PD_ERR_INVALID_ARGUMENT, "out is NULL");
    PD_EXPECT(pd_op_find(NULL, "tl_add") == NULL);
    PD_EXPECT_EQ(pd_last_status(), PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT_STREQ(pd_last_error(), "pd_op_find: reg is NULL");
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    PD_EXPECT(pd_op_find(reg, NULL) == NULL);
    PD_EXPECT_STREQ(pd_last_error(), "pd_op_find: name is NULL");
    PD_EXPECT_EQ(pd_registry_op_count(NULL), 0);
    pd_registry_destroy(reg);
}

PD_TEST(Registry, OpAccessorsTolerateNull)
{
    PD_EXPECT(pd_op_name(NULL) == NULL);
    PD_EXPECT(pd_op_definition(NULL) == NULL);
    PD_EXPECT(pd_op_grad(NULL) == NULL);
    PD_EXPECT(pd_op_module(NULL) == NULL);
    PD_EXPECT_EQ(pd_op_input_count(NULL), 0);
    PD_EXPECT_EQ(pd_op_output_count(NULL), 0);
    PD_EXPECT_EQ(pd_op_attr_count(NULL), 0);
    PD_EXPECT(pd_op_attr_name(NULL, 0) == NULL);
    PD_EXPECT_EQ(pd_op_attr_type(NULL, 0), PD_ATTR_UNDEFINED);
}

typedef struct reader_arg {
    const pd_registry *reg;
    int wrong;
} reader_arg;

static void *reader(void *p)
{
    reader_arg *a = p;
    for (int i = 0; i < 20000; ++i) {
        const pd_op *op = pd_op_find(a->reg, (i & 1) ? "tl_add_grad" : "tl_identity");
        if (op == NULL || strcmp(pd_op_name(op), (i & 1) ? "tl_add_grad" : "tl_identity") != 0)
            ++a->wrong;
        if (pd_op_find(a->reg, "tl_missing") != NULL)
            ++a->wrong;
    }
    return NULL;
}

PD_TEST(Registry, FindsFromManyThreadsAtOnce)
{
    pd_registry *reg = registry_with_linked_ops(NULL);
    PD_ASSERT(reg != NULL);
    enum { THREADS = 6 };
    pthread_t threads[THREADS];
    reader_arg args[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        args[t] = (reader_arg){reg, 0};
        PD_ASSERT_EQ(pthread_create(&threads[t], NULL, reader, &args[t]), 0);
    }
    for (int t = 0; t < THREADS; ++t) {
        pthread_join(threads[t], NULL);
        PD_EXPECT_EQ(args[t].wrong, 0);
    }
    pd_registry_destroy(reg);
}

typedef struct racer_arg {
    const pd_registry *reg;
    atomic_int *stop;
    int found, missed, wrong;
} racer_arg;

/* Looks up while another thread loads and unloads: each lookup finds the op or not, never
 * anything else. The ops may be unloaded at any moment, so they are never dereferenced;
 * the snapshots are (a reclaimed one read here would be a use after free under ASan). */
static void *racer(void *p)
{
    racer_arg *a = p;
    while (!atomic_load(a->stop)) {
        const pd_op *op = pd_op_find(a->reg, "tl_identity");
        ++*(op ? &a->found : &a->missed);
        int32_t n = pd_registry_op_count(a->reg);
        if (n != 0 && n != 3)
            ++a->wrong;
        if (pd_op_find(a->reg, "tl_missing") != NULL)
            ++a->wrong;
    }
    return NULL;
}

PD_TEST(Registry, LookupsRaceLoadsAndUnloadsSafely)
{
    pd_registry *reg = NULL;
    PD_ASSERT_OK(pd_registry_create(&reg));
    enum { THREADS = 3 };
    atomic_int stop = 0;
    pthread_t threads[THREADS];
    racer_arg args[THREADS];
    for (int t = 0; t < THREADS; ++t) {
        args[t] = (racer_arg){reg, &stop, 0, 0, 0};
        PD_ASSERT_EQ(pthread_create(&threads[t], NULL, racer, &args[t]), 0);
    }
    for (int i = 0; i < 2000; ++i) {
        pd_module *m = NULL;
        PD_EXPECT_OK(pd_register_linked_ops(reg, &m));
        PD_EXPECT_OK(pd_module_unload(m));
    }
    atomic_store(&stop, 1);
    for (int t = 0; t < THREADS; ++t) {
        pthread_join(threads[t], NULL);
        PD_EXPECT_EQ(args[t].wrong, 0);
    }
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
}
