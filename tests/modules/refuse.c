/*
 * refuse.c - modules the loader must refuse, one per REFUSE_* define (see tests/module.cmake).
 * Each also defines a valid op, tm_bystander, first: a refused module registers nothing, so
 * the tests check that tm_bystander is never found.
 */
#include "extension.h"

static void noop(pd_kernel_ctx *ctx) { (void)ctx; }

PD_BUILD_OP(tm_bystander, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop);

/* A definition written out by hand, for what PD_BUILD_OP cannot produce. */
#define HAND_DEF(id, size, kind_, name_)              \
    static const pd_op_def id = {.struct_size = size, \
                                 .kind = kind_,       \
                                 .name = name_,       \
                                 .file = __FILE__,    \
                                 .line = __LINE__,    \
                                 .inputs = {"X"},     \
                                 .outputs = {"Out"},  \
                                 .kernel = noop};     \
    PD__OP_SECTION static const pd_op_def *const id##_ptr = &id

#if defined(REFUSE_BAD_NAME)
HAND_DEF(bad_name, sizeof(pd_op_def), PD_OP_FORWARD, "bad-name");
#elif defined(REFUSE_BAD_STRUCT_SIZE)
HAND_DEF(bad_size, 4, PD_OP_FORWARD, "tm_bad_size");
#elif defined(REFUSE_BAD_KIND)
HAND_DEF(bad_kind, sizeof(pd_op_def), 7, "tm_bad_kind");
#elif defined(REFUSE_NO_KERNEL)
PD_BUILD_OP(tm_no_kernel, .inputs = {"X"}, .outputs = {"Out"});
#elif defined(REFUSE_EMPTY_INPUT)
PD_BUILD_OP(tm_empty_input, .inputs = {"X", ""}, .outputs = {"Out"}, .kernel = noop);
#elif defined(REFUSE_DUP_INPUT)
PD_BUILD_OP(tm_dup_input, .inputs = {"X", PD_VEC("X")}, .outputs = {"Out"}, .kernel = noop);
#elif defined(REFUSE_DUP_OUTPUT)
PD_BUILD_OP(tm_dup_output, .inputs = {"X"}, .outputs = {"Out", "Out"}, .kernel = noop);
#elif defined(REFUSE_DUP_ATTR)
PD_BUILD_OP(tm_dup_attr, .inputs = {"X"}, .outputs = {"Out"},
            .attrs = {"axis: int", "axis: int64_t"}, .kernel = noop);
#elif defined(REFUSE_ATTR_NO_COLON)
PD_BUILD_OP(tm_attr_no_colon, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"axis int64_t"},
            .kernel = noop);
#elif defined(REFUSE_ATTR_BAD_TYPE)
PD_BUILD_OP(tm_attr_bad_type, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"axis: long"},
            .kernel = noop);
#elif defined(REFUSE_ATTR_SPLIT_TYPE)
PD_BUILD_OP(tm_attr_split_type, .inputs = {"X"}, .outputs = {"Out"},
            .attrs = {"axis: int 64_t"}, .kernel = noop);
#elif defined(REFUSE_ATTR_BAD_NAME)
PD_BUILD_OP(tm_attr_bad_name, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"2d: int"},
            .kernel = noop);
#elif defined(REFUSE_INPLACE_INPUT)
PD_BUILD_OP(tm_inplace_input, .inputs = {"X"}, .outputs = {"Out"}, .inplace = {{"Y", "Out"}},
            .kernel = noop);
#elif defined(REFUSE_INPLACE_OUTPUT)
PD_BUILD_OP(tm_inplace_output, .inputs = {"X"}, .outputs = {"Out"}, .inplace = {{"X", "Res"}},
            .kernel = noop);
#elif defined(REFUSE_GRAD_NO_FORWARD)
PD_BUILD_GRAD_OP(tm_orphan, .inputs = {PD_GRAD("Out")}, .outputs = {PD_GRAD("X")},
                 .kernel = noop);
#elif defined(REFUSE_DOUBLE_GRAD_NO_GRAD)
PD_BUILD_OP(tm_no_grad, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop);
PD_BUILD_DOUBLE_GRAD_OP(tm_no_grad, .inputs = {"X"}, .outputs = {PD_GRAD("Out")},
                        .kernel = noop);
#elif defined(REFUSE_GRAD_ATTR_NOT_SUBSET)
PD_BUILD_OP(tm_subset, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"axis: int64_t"},
            .kernel = noop);
PD_BUILD_GRAD_OP(tm_subset, .inputs = {PD_GRAD("Out")}, .outputs = {PD_GRAD("X")},
                 .attrs = {"axis: int64_t", "scale: float"}, .kernel = noop);
#elif defined(REFUSE_GRAD_ATTR_TYPE)
PD_BUILD_OP(tm_subset, .inputs = {"X"}, .outputs = {"Out"}, .attrs = {"axis: int64_t"},
            .kernel = noop);
PD_BUILD_GRAD_OP(tm_subset, .inputs = {PD_GRAD("Out")}, .outputs = {PD_GRAD("X")},
                 .attrs = {"axis: int"}, .kernel = noop);
#elif defined(REFUSE_DUP_WITHIN)
/* refuse_twin.c defines tm_twice as well. */
PD_BUILD_OP(tm_twice, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop);
#elif defined(REFUSE_DUP_ACROSS)
/* good_ops.c registers tm_aliases first. */
PD_BUILD_OP(tm_aliases, .inputs = {"X"}, .outputs = {"Out"}, .kernel = noop);
#else
#error "build refuse.c with one REFUSE_* define"
#endif
