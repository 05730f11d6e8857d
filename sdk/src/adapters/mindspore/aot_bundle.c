/*
 * aot_bundle.c - MindSpore AOT functions carried by a bundle (pdext_aot_bundle.h): the state
 * pd_aot_load would make when it registers a library's function (pd_aoti_op), made here from
 * the bundle's descriptor on the op's first use instead, so that registering the bundle needs
 * no compiler, no dlopen and nothing of this library; and the kernel and infer functions the
 * bundle's definitions point at, which are pd_aot_load's (they find the state through
 * pd_aoti_op_of).
 *
 * The state lives in the descriptor (the bundle's own writable data) until
 * pd_aot_bundle_release, which the bundle's generated source calls from a destructor.
 */
#include "adapters/mindspore/aot_load.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Serializes making and releasing the states of every bundle op (first uses only). */
static pthread_mutex_t bundle_lock = PTHREAD_MUTEX_INITIALIZER;

/* A pd_aoti_op from the descriptor: the same steps as pd_aot_load after it opened a library. */
static pd_status bundle_op_make(const pd_aot_bundle_op *b, pd_aoti_op **out)
{
    const char *who = b->def.name ? b->def.name : "bundle AOT op";
    if (b->struct_size < sizeof *b || b->fn == NULL || b->function == NULL || b->n_inputs < 0 ||
        b->n_inputs > PD_MAX_INPUTS || b->n_outputs < 1 || b->n_outputs > PD_MAX_OUTPUTS)
        return pd__fail(PD_ERR_INVALID_MODULE,
                        "pd_aot_bundle: the AOT descriptor of '%s' is malformed (struct_size %u, "
                        "expected %u; rebuild the bundle with this pdext)",
                        who, (unsigned)b->struct_size, (unsigned)sizeof *b);
    pd_aot_output outputs[PD_MAX_OUTPUTS];
    memset(outputs, 0, sizeof outputs);
    for (int32_t i = 0; i < b->n_outputs; ++i) {
        outputs[i].name = b->def.outputs[i];
        outputs[i].dtype = (pd_data_type)b->out_dtype[i];
        outputs[i].ndim = b->out_ndim[i];
        memcpy(outputs[i].shape, b->out_shape[i], sizeof outputs[i].shape);
    }
    int32_t n_attrs = 0;
    while (n_attrs < PD_MAX_ATTRS && b->def.attrs[n_attrs])
        ++n_attrs;
    pd_aot_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.n_inputs = b->n_inputs;
    o.input_names = b->def.inputs;
    o.n_outputs = b->n_outputs;
    o.outputs = outputs;
    o.attrs = b->def.attrs;
    o.n_attrs = n_attrs;

    pd_aoti_op *op = calloc(1, sizeof *op);
    if (op == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_aot_bundle: out of memory");
    pthread_mutex_init(&op->lock, NULL);
    op->n_inputs = o.n_inputs;
    op->n_outputs = o.n_outputs;
    op->n_attrs = o.n_attrs;
    size_t spec_len = strlen(b->source ? b->source : "") + strlen(b->function) + 2;
    op->spec = malloc(spec_len);
    if (op->spec)
        snprintf(op->spec, spec_len, "%s:%s", b->source ? b->source : "", b->function);
    op->library = strdup(b->source ? b->source : "(bundle)");
    op->function = strdup(b->function);
    op->name = strdup(who);
    pd_status s = op->spec && op->library && op->function && op->name
                      ? pd_aoti_fill_names(op, &o)
                      : pd__fail(PD_ERR_OUT_OF_MEMORY, "pd_aot_bundle: out of memory");
    op->fn = b->fn;
    /* Function pointers of one kind to another, as dlsym hands them to pd_aot_load. */
    memcpy(&op->init, &b->init, sizeof op->init);
    memcpy(&op->infer_shape, &b->infer_shape, sizeof op->infer_shape);
    memcpy(&op->infer_type, &b->infer_type, sizeof op->infer_type);
    op->cxx11 = b->cxx11_abi != 0;
    op->cuda = b->gpu != 0;
    op->device = op->cuda ? "gpu" : NULL;
    if ((s = pd_aoti_op_ready(op, s)) != PD_OK)
        return s; /* op freed */
    *out = op;
    return PD_OK;
}

pd_status pd_aoti_bundle_state_get(pd_aot_bundle_op *b, pd_aoti_op **out)
{
    pd_aoti_op *op = __atomic_load_n((pd_aoti_op **)&b->state, __ATOMIC_ACQUIRE);
    pd_status s = PD_OK;
    if (op == NULL) {
        pthread_mutex_lock(&bundle_lock);
        op = b->state;
        if (op == NULL && (s = bundle_op_make(b, &op)) == PD_OK)
            __atomic_store_n((pd_aoti_op **)&b->state, op, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&bundle_lock);
    }
    *out = op;
    return s;
}

pd_aoti_op *pd_aoti_bundle_state(const pd_op_def *def)
{
    pd_aoti_op *op = NULL;
    pd_status s = pd_aoti_bundle_state_get((pd_aot_bundle_op *)(uintptr_t)def, &op);
    if (s != PD_OK) {
        char text[1024];
        snprintf(text, sizeof text, "%s", pd_last_error());
        pd__ctx_throw(s, "%s", text);
    }
    return op;
}

void pd_aot_bundle_release(pd_aot_bundle_op *b)
{
    if (b == NULL)
        return;
    pthread_mutex_lock(&bundle_lock);
    pd_aoti_op *op = b->state;
    b->state = NULL;
    pthread_mutex_unlock(&bundle_lock);
    pd_aoti_op_free(op);
}

void pd_aot_bundle_kernel(pd_kernel_ctx *ctx) { pd_aoti_kernel(ctx); }

void pd_aot_bundle_infer_shape(pd_kernel_ctx *ctx) { pd_aoti_infer_shape(ctx); }

void pd_aot_bundle_infer_dtype(pd_kernel_ctx *ctx) { pd_aoti_infer_dtype(ctx); }
