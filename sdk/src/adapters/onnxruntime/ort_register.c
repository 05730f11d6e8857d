/*
 * ort_register.c - RegisterCustomOps of an ORT custom-op library built by `pdext bundle
 * --onnxruntime`: checks ORT's API version, registers the library's op table in a pdext
 * registry of its own (once per process), describes each forward op to ORT as an OrtCustomOp
 * read from its declaration, and adds a custom-op domain holding them to the session options.
 *
 * Lifetimes: ORT keeps pointers to the OrtCustomOp structs and the domain for as long as any
 * session built from those options lives, and never tells the library when that ends; ORT's own
 * custom-op libraries therefore keep both until the library is unloaded. So do we: the state
 * below lives until the library's destructor, which releases the domains, the ops and the
 * registry (nothing is left for a leak checker).
 *
 * Types: a pdext op chooses its dtypes at run time (its kernel's dispatch), so every input and
 * output is declared with ORT's "any type" (UNDEFINED). ORT infers such an output's element
 * type from the inputs and requires exactly one any-typed input for a required one; an op with
 * another input count therefore declares its outputs optional (a node still gets every output
 * it names), and the kernel refuses an output whose dtype differs from the node's type.
 *
 * Providers: a pdext op picks its device code at run time by its inputs' place, so the library
 * says whether it has any (PD_ORT_WITH_CUDA: built with CUDA sources); then each op is also
 * described for ORT's CUDA execution provider, a second OrtCustomOp of the same name that ORT
 * picks for nodes it places on the GPU.
 */
#include "ort_adapter.h"

#include "pdext_bundle.h"

#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ort_state {
    pd_registry *reg;
    pd_ort_api api;
    struct {
        pd__ort_op *v;
        int32_t n;
    } ops;
    pd_ort_domain **domains;
    int32_t n_domains, cap_domains;
} ort_state;

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static ort_state state;

/* --- dtypes ------------------------------------------------------------------------------- */

static const struct {
    int elem;
    pd_data_type dtype;
} dtype_map[] = {
    {PD_ORT_ELEM_FLOAT, PD_FLOAT32},       {PD_ORT_ELEM_UINT8, PD_UINT8},
    {PD_ORT_ELEM_INT8, PD_INT8},           {PD_ORT_ELEM_UINT16, PD_UINT16},
    {PD_ORT_ELEM_INT16, PD_INT16},         {PD_ORT_ELEM_INT32, PD_INT32},
    {PD_ORT_ELEM_INT64, PD_INT64},         {PD_ORT_ELEM_BOOL, PD_BOOL},
    {PD_ORT_ELEM_FLOAT16, PD_FLOAT16},     {PD_ORT_ELEM_DOUBLE, PD_FLOAT64},
    {PD_ORT_ELEM_UINT32, PD_UINT32},       {PD_ORT_ELEM_UINT64, PD_UINT64},
    {PD_ORT_ELEM_COMPLEX64, PD_COMPLEX64}, {PD_ORT_ELEM_COMPLEX128, PD_COMPLEX128},
    {PD_ORT_ELEM_BFLOAT16, PD_BFLOAT16},
};

int pd__ort_elem_of(pd_data_type dtype)
{
    for (size_t i = 0; i < sizeof dtype_map / sizeof dtype_map[0]; ++i)
        if (dtype_map[i].dtype == dtype)
            return dtype_map[i].elem;
    return PD_ORT_ELEM_UNDEFINED;
}

pd_data_type pd__ort_dtype_of(int elem)
{
    for (size_t i = 0; i < sizeof dtype_map / sizeof dtype_map[0]; ++i)
        if (dtype_map[i].elem == elem)
            return dtype_map[i].dtype;
    return PD_UNDEFINED;
}

const char *pd__ort_elem_name(int elem)
{
    pd_data_type t = pd__ort_dtype_of(elem);
    if (t != PD_UNDEFINED)
        return pd_dtype_name(t);
    return elem == PD_ORT_ELEM_STRING ? "string" : "an element type pdext does not know";
}

pd_ort_status *pd__ort_fail(const pd_ort_api *api, int code, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return api->CreateStatus(code, msg);
}

/* --- the OrtCustomOp callbacks that describe an op ---------------------------------------- */

static const pd__ort_op *of(const pd_ort_custom_op *op) { return (const pd__ort_op *)op; }

static const char *op_name(const pd_ort_custom_op *op) { return pd_op_name(of(op)->op); }
static const char *op_provider(const pd_ort_custom_op *op)
{
    /* NULL: the CPU execution provider */
    return of(op)->cuda ? "CUDAExecutionProvider" : NULL;
}
static int any_type(const pd_ort_custom_op *op, size_t index)
{
    (void)op;
    (void)index;
    return PD_ORT_ELEM_UNDEFINED;
}
static size_t input_count(const pd_ort_custom_op *op) { return (size_t)of(op)->n_inputs; }
static size_t output_count(const pd_ort_custom_op *op) { return (size_t)of(op)->n_outputs; }
static int input_kind(const pd_ort_custom_op *op, size_t i) { return of(op)->in_kind[i]; }
static int output_kind(const pd_ort_custom_op *op, size_t i) { return of(op)->out_kind[i]; }
static int default_memory(const pd_ort_custom_op *op, size_t index)
{
    (void)op;
    (void)index;
    return PD_ORT_MEM_DEFAULT;
}
/* A vector input or output takes one or more tensors, all of one dtype. */
static int min_arity(const pd_ort_custom_op *op)
{
    (void)op;
    return 1;
}
static int homogeneous(const pd_ort_custom_op *op)
{
    (void)op;
    return 1;
}
static int start_version(const pd_ort_custom_op *op)
{
    (void)op;
    return 1;
}
static int end_version(const pd_ort_custom_op *op)
{
    (void)op;
    return INT_MAX;
}

/* Fills o for op; NULL, or why ORT cannot take the op. */
static const char *describe(pd__ort_op *o, const pd_op *op, const pd_ort_api *api, bool cuda,
                            char *why, size_t why_size)
{
    memset(o, 0, sizeof *o);
    o->op = op;
    o->api = api;
    o->cuda = cuda;
    o->n_inputs = pd_op_input_count(op);
    o->n_outputs = pd_op_output_count(op);
    o->n_attrs = pd_op_attr_count(op);
    for (int32_t i = 0; i < o->n_inputs; ++i) {
        pd_arg_info a;
        pd_op_input_info(op, i, &a);
        if (a.is_vector && i != o->n_inputs - 1) {
            snprintf(why, why_size,
                     "op '%s': vector input '%s' is not its last input, and ONNX Runtime takes "
                     "only a last input variadic",
                     pd_op_name(op), a.name);
            return why;
        }
        o->in_kind[i] = a.is_vector ? PD_ORT_VARIADIC
                                    : (a.is_optional ? PD_ORT_OPTIONAL : PD_ORT_REQUIRED);
    }
    for (int32_t i = 0; i < o->n_outputs; ++i) {
        pd_arg_info a;
        pd_op_output_info(op, i, &a);
        if (a.is_vector && i != o->n_outputs - 1) {
            snprintf(why, why_size,
                     "op '%s': vector output '%s' is not its last output, and ONNX Runtime "
                     "takes only a last output variadic",
                     pd_op_name(op), a.name);
            return why;
        }
        /* see the file comment: ORT types a required any-typed output from a single
         * any-typed input only */
        o->out_kind[i] = a.is_vector ? PD_ORT_VARIADIC
                                     : (a.is_optional || o->n_inputs != 1 ? PD_ORT_OPTIONAL
                                                                          : PD_ORT_REQUIRED);
    }
    for (int32_t i = 0; i < o->n_attrs; ++i)
        pd_op_attr_info(op, i, &o->attrs[i]);
    /* ORT's inputs are not the kernel's to change (the caller's array, another node's output):
     * the kernel gets a copy of each input its inplace map writes */
    const pd_op_def *def = pd_op_definition(op);
    for (int32_t p = 0; def != NULL && p < PD_MAX_INPLACE && def->inplace[p][0] != NULL; ++p)
        for (int32_t i = 0; i < o->n_inputs; ++i) {
            pd_arg_info a;
            pd_op_input_info(op, i, &a);
            if (strcmp(def->inplace[p][0], a.name) == 0 || strcmp(def->inplace[p][0], a.decl) == 0)
                o->inplace_inputs |= 1u << i;
        }
    pd_ort_custom_op *b = &o->base;
    b->version = PD_ORT_API_VERSION;
    b->GetName = op_name;
    b->GetExecutionProviderType = op_provider;
    b->GetInputType = any_type;
    b->GetInputTypeCount = input_count;
    b->GetOutputType = any_type;
    b->GetOutputTypeCount = output_count;
    b->KernelDestroy = pd__ort_kernel_destroy;
    b->GetInputCharacteristic = input_kind;
    b->GetOutputCharacteristic = output_kind;
    b->GetInputMemoryType = default_memory;
    b->GetVariadicInputMinArity = min_arity;
    b->GetVariadicInputHomogeneity = homogeneous;
    b->GetVariadicOutputMinArity = min_arity;
    b->GetVariadicOutputHomogeneity = homogeneous;
    b->CreateKernelV2 = pd__ort_kernel_create;
    b->KernelComputeV2 = pd__ort_kernel_compute;
    b->InferOutputShapeFn = pd__ort_infer_shapes;
    b->GetStartVersion = start_version;
    b->GetEndVersion = end_version;
    return NULL;
}

/* --- registration ------------------------------------------------------------------------- */

/* Reads the entries of ORT's table (an array of function pointers in published order). */
static void resolve_api(pd_ort_api *api, const void *table)
{
    typedef void (*any_fn)(void);
    const any_fn *fns = (const any_fn *)table;
#define PD__ORT_RESOLVE(index, version, ret, name, params) api->name = (ret(*) params)fns[index];
    PD_ORT_API_LIST(PD__ORT_RESOLVE)
#undef PD__ORT_RESOLVE
}

/* Registers the op table and describes its forward ops (each twice with PD_ORT_WITH_CUDA: for
 * the CPU and the CUDA execution providers), once per process (under state_lock). */
static pd_ort_status *load_ops(const pd_module_info *info, const char *origin, uint32_t flags)
{
    const pd_ort_api *api = &state.api;
    if (state.reg != NULL)
        return NULL;
    pd_registry *reg = NULL;
    pd_module *mod = NULL;
    if (pd_registry_create(&reg) != PD_OK || pd_bundle_register(reg, info, origin, &mod) != PD_OK) {
        pd_ort_status *st = pd__ort_fail(api, PD_ORT_FAIL, "%s: %s", origin, pd_last_error());
        pd_registry_destroy(reg);
        return st;
    }
    int32_t n = pd_module_op_count(mod), n_forward = 0;
    int32_t variants = (flags & PD_ORT_WITH_CUDA) ? 2 : 1;
    pd__ort_op *ops = calloc(n > 0 ? (size_t)(n * variants) : 1, sizeof *ops);
    if (ops == NULL) {
        pd_registry_destroy(reg);
        return pd__ort_fail(api, PD_ORT_FAIL, "%s: out of memory", origin);
    }
    char why[512];
    for (int32_t i = 0; i < n; ++i) {
        const pd_op *op = pd_module_op(mod, i);
        if (pd_op_get_kind(op) != PD_OP_FORWARD) /* grad ops have no place in an ONNX graph */
            continue;
        for (int32_t v = 0; v < variants; ++v, ++n_forward) {
            if (describe(&ops[n_forward], op, api, v == 1, why, sizeof why) != NULL) {
                free(ops);
                pd_registry_destroy(reg);
                return pd__ort_fail(api, PD_ORT_INVALID_ARGUMENT, "%s: %s", origin, why);
            }
        }
    }
    state.reg = reg;
    state.ops.v = ops;
    state.ops.n = n_forward;
    return NULL;
}

static pd_ort_status *add_domain(pd_ort_session_options *options, const char *domain,
                                 const char *origin)
{
    const pd_ort_api *api = &state.api;
    if (state.n_domains == state.cap_domains) {
        int32_t cap = state.cap_domains ? 2 * state.cap_domains : 4;
        pd_ort_domain **v = realloc(state.domains, (size_t)cap * sizeof *v);
        if (v == NULL)
            return pd__ort_fail(api, PD_ORT_FAIL, "%s: out of memory", origin);
        state.domains = v;
        state.cap_domains = cap;
    }
    pd_ort_domain *d = NULL;
    pd_ort_status *st = api->CreateCustomOpDomain(domain, &d);
    for (int32_t i = 0; st == NULL && i < state.ops.n; ++i)
        st = api->CustomOpDomain_Add(d, &state.ops.v[i].base);
    if (st == NULL)
        st = api->AddCustomOpDomain(options, d);
    if (st != NULL) {
        pd_ort_status *out = pd__ort_fail(api, api->GetErrorCode(st),
                                          "%s: adding domain '%s' to the session options: %s",
                                          origin, domain, api->GetErrorMessage(st));
        api->ReleaseStatus(st);
        if (d)
            api->ReleaseCustomOpDomain(d);
        return out;
    }
    state.domains[state.n_domains++] = d; /* ORT uses it until the options and sessions go */
    return NULL;
}

pd_ort_status *pd_ort_register_ops(pd_ort_session_options *options, const pd_ort_api_base *api_base,
                                   const pd_module_info *info, const char *domain,
                                   const char *origin, uint32_t flags)
{
    if (api_base == NULL || api_base->GetApi == NULL)
        return NULL; /* nothing to report through: ORT always passes its base */
    const void *table = api_base->GetApi(PD_ORT_API_VERSION);
    if (table == NULL) {
        /* Version 1 always exists, and its CreateStatus is entry 0. */
        const void *v1 = api_base->GetApi(1);
        pd_ort_api old;
        if (v1 == NULL)
            return NULL;
        resolve_api(&old, v1);
        return pd__ort_fail(&old, PD_ORT_NOT_IMPLEMENTED,
                            "%s needs ONNX Runtime %s or newer (C API version %d), but this "
                            "ONNX Runtime is %s",
                            origin, PD_ORT_API_RELEASE, PD_ORT_API_VERSION,
                            api_base->GetVersionString ? api_base->GetVersionString() : "older");
    }
    pthread_mutex_lock(&state_lock);
    if (state.reg == NULL)
        resolve_api(&state.api, table);
    pd_ort_status *st = load_ops(info, origin, flags);
    if (st == NULL)
        st = add_domain(options, domain, origin);
    pthread_mutex_unlock(&state_lock);
    return st;
}

/* The library is being unloaded (dlclose, or the process ends): ORT is done with the ops. */
__attribute__((destructor)) static void release_state(void)
{
    for (int32_t i = 0; i < state.n_domains; ++i)
        state.api.ReleaseCustomOpDomain(state.domains[i]);
    free(state.domains);
    free(state.ops.v);
    pd_registry_destroy(state.reg);
    memset(&state, 0, sizeof state);
}
