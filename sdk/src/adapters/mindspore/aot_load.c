/*
 * aot_load.c - registering a MindSpore AOT function as an op (pd_aot_load): check the library
 * file (aot_elf.c), open it, find F and its optional FInit / FInferShape / FInferType, build
 * the pd_op_def that points at the trampolines (aot_kernel.c), and register it as a module of
 * its own that owns this state. All or nothing: on any failure the library is closed and
 * nothing is registered. Libraries only: compiling an AOT source is the JIT's
 * (pd_jit_aot_build, jit/jit_aot.c), so that this adapter needs libpdext alone.
 */
#include "adapters/mindspore/aot_load.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WHO "pd_aot_load"
#define OOM() pd__fail(PD_ERR_OUT_OF_MEMORY, WHO ": out of memory")

static char *dup_fmt(const char *fmt, int i)
{
    char buf[32];
    snprintf(buf, sizeof buf, fmt, i);
    return strdup(buf);
}

void pd_aoti_op_free(void *p)
{
    pd_aoti_op *op = p;
    if (op == NULL)
        return;
    pd_aoti_entries_free(op);
    if (op->handle)
        dlclose(op->handle);
    for (int32_t i = 0; i < PD_MAX_INPUTS; ++i)
        free(op->input_names[i]);
    for (int32_t i = 0; i < PD_MAX_OUTPUTS; ++i)
        free(op->output_names[i]);
    for (int32_t i = 0; i < PD_MAX_ATTRS; ++i) {
        free(op->attr_decls[i]);
        free(op->attr_names[i]);
    }
    free(op->spec);
    free(op->library);
    free(op->function);
    free(op->name);
    pthread_mutex_destroy(&op->lock);
    free(op);
}

static bool is_source(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot && (strcmp(dot, ".cc") == 0 || strcmp(dot, ".cpp") == 0 || strcmp(dot, ".c") == 0 ||
                   strcmp(dot, ".cu") == 0 || strcmp(dot, ".cxx") == 0);
}

/* The attr's name: its declaration up to ':' without surrounding blanks. */
static char *attr_name_of(const char *decl)
{
    const char *colon = strchr(decl, ':');
    size_t n = colon ? (size_t)(colon - decl) : strlen(decl);
    while (n > 0 && (decl[n - 1] == ' ' || decl[n - 1] == '\t'))
        --n;
    while (n > 0 && (*decl == ' ' || *decl == '\t')) {
        ++decl;
        --n;
    }
    char *s = malloc(n + 1);
    if (s) {
        memcpy(s, decl, n);
        s[n] = '\0';
    }
    return s;
}

/* dlsym of `function` + `suffix`, or NULL. */
static void *find_companion(void *handle, const char *function, const char *suffix)
{
    char name[512];
    if (snprintf(name, sizeof name, "%s%s", function, suffix) >= (int)sizeof name)
        return NULL;
    (void)dlerror();
    return dlsym(handle, name);
}

static pd_status check_options(const char *spec, const pd_aot_options *o)
{
    if (o->n_inputs < 0 || o->n_inputs > PD_MAX_INPUTS)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": %s: n_inputs is %d; expected 0 to %d (PD_MAX_INPUTS)", spec,
                        (int)o->n_inputs, PD_MAX_INPUTS);
    if (o->n_outputs < 0 || o->n_outputs > PD_MAX_OUTPUTS)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": %s: n_outputs is %d; expected 0 (one output) to %d", spec,
                        (int)o->n_outputs, PD_MAX_OUTPUTS);
    if (o->n_attrs < 0 || o->n_attrs > PD_MAX_ATTRS || (o->n_attrs > 0 && o->attrs == NULL))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": %s: n_attrs is %d%s; expected 0 to %d declarations", spec,
                        (int)o->n_attrs, o->attrs ? "" : " with attrs NULL", PD_MAX_ATTRS);
    for (int32_t i = 0; o->outputs && i < (o->n_outputs ? o->n_outputs : 1); ++i) {
        const pd_aot_output *out = &o->outputs[i];
        if (out->ndim < -1 || out->ndim > PD_MAX_DIMS)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            WHO ": %s: outputs[%d].ndim is %d; expected -1 (not set) or 0 to %d",
                            spec, (int)i, (int)out->ndim, PD_MAX_DIMS);
        for (int32_t d = 0; d < out->ndim; ++d)
            if (out->shape[d] < 0)
                return pd__fail(PD_ERR_INVALID_ARGUMENT,
                                WHO ": %s: outputs[%d].shape[%d] is %lld; expected >= 0", spec,
                                (int)i, (int)d, (long long)out->shape[d]);
        if (out->dtype != PD_UNDEFINED && pd_aot_dtype_name(out->dtype) == NULL)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            WHO ": %s: outputs[%d].dtype is %d, not a pdext dtype", spec, (int)i,
                            (int)out->dtype);
    }
    return PD_OK;
}

/* Names, outputs and attrs into op. */
pd_status pd_aoti_fill_names(pd_aoti_op *op, const pd_aot_options *o)
{
    for (int32_t i = 0; i < op->n_inputs; ++i) {
        const char *given = o->input_names ? o->input_names[i] : NULL;
        op->input_names[i] = given ? strdup(given) : dup_fmt("in%d", (int)i);
        if (op->input_names[i] == NULL)
            return OOM();
        op->def.inputs[i] = op->input_names[i];
    }
    for (int32_t i = 0; i < op->n_outputs; ++i) {
        if (o->outputs)
            op->outputs[i] = o->outputs[i];
        else {
            memset(&op->outputs[i], 0, sizeof op->outputs[i]);
            op->outputs[i].ndim = -1;
        }
        const char *given = op->outputs[i].name;
        op->output_names[i] = given ? strdup(given) : dup_fmt("out%d", (int)i);
        if (op->output_names[i] == NULL)
            return OOM();
        op->outputs[i].name = op->output_names[i];
        op->def.outputs[i] = op->output_names[i];
    }
    for (int32_t i = 0; i < op->n_attrs; ++i) {
        if (o->attrs[i] == NULL)
            return pd__fail(PD_ERR_INVALID_ARGUMENT, WHO ": %s: attrs[%d] is NULL", op->spec,
                            (int)i);
        op->attr_decls[i] = strdup(o->attrs[i]);
        op->attr_names[i] = attr_name_of(o->attrs[i]);
        if (op->attr_decls[i] == NULL || op->attr_names[i] == NULL)
            return OOM();
        op->def.attrs[i] = op->attr_decls[i];
    }
    return PD_OK;
}

/* Every output needs a shape and a dtype from somewhere. */
static pd_status check_sources(const pd_aoti_op *op)
{
    for (int32_t i = 0; i < op->n_outputs; ++i) {
        const pd_aot_output *out = &op->outputs[i];
        bool shape = out->ndim >= 0 || op->infer_shape || op->n_inputs > 0;
        bool dtype = out->dtype != PD_UNDEFINED || op->infer_type || op->n_inputs > 0;
        if (!shape || !dtype)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            WHO ": %s: output %d has no %s: the function takes no inputs and the "
                                "library has no %s%s; give outputs[%d].%s",
                            op->spec, (int)i, shape ? "dtype" : "shape", op->function,
                            shape ? "InferType" : "InferShape", (int)i, shape ? "dtype" : "ndim");
    }
    return PD_OK;
}

pd_status pd_aoti_op_ready(pd_aoti_op *op, pd_status s)
{
    if (s == PD_OK)
        s = check_sources(op);
    if (s == PD_OK && op->init == NULL)
        s = pd_aoti_entry_add_single(op);
    if (s != PD_OK)
        pd_aoti_op_free(op);
    return s;
}

static bool needs_infer(const pd_aoti_op *op)
{
    if (op->infer_shape || op->infer_type || op->n_inputs == 0)
        return true;
    for (int32_t i = 0; i < op->n_outputs; ++i)
        if (op->outputs[i].ndim >= 0 || op->outputs[i].dtype != PD_UNDEFINED)
            return true;
    return false; /* the runner's default (PD_OP_OUTPUTS_LIKE_INPUT0) does it */
}

/* Opens the library and fills what comes from it. */
static pd_status open_library(pd_aoti_op *op)
{
    bool sim = false;
    pd_status s = pd_aoti_elf_abi(WHO, op->library, &op->cxx11, &op->cuda, &sim);
    if (s != PD_OK)
        return s;
    op->device = op->cuda ? "gpu" : (sim ? "sim" : NULL);
    op->handle = dlopen(op->library, RTLD_LAZY | RTLD_LOCAL);
    if (op->handle == NULL) {
        const char *err = dlerror();
        return pd__fail(PD_ERR_INVALID_MODULE, WHO ": cannot load '%s': %s", op->library,
                        err ? err : "dlopen failed");
    }
    (void)dlerror();
    *(void **)&op->fn = dlsym(op->handle, op->function);
    if (op->fn == NULL) {
        char similar[512];
        pd_aoti_elf_similar(op->library, op->function, similar, sizeof similar);
        return pd__fail(PD_ERR_NOT_FOUND,
                        WHO ": '%s' exports no function '%s' (is it extern \"C\" with default "
                            "visibility?)%s%s",
                        op->library, op->function,
                        similar[0] ? "; similar exported names: " : "; it exports no similar name",
                        similar);
    }
    const char *kind = pd_aoti_elf_not_code(op->library, op->function);
    if (kind != NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": '%s' in '%s' is %s, not a function: name an extern \"C\" "
                            "function with the kernel's signature",
                        op->function, op->library, kind);
    *(void **)&op->init = find_companion(op->handle, op->function, "Init");
    op->infer_shape = find_companion(op->handle, op->function, "InferShape");
    op->infer_type = find_companion(op->handle, op->function, "InferType");
    return PD_OK;
}

pd_status pd_aot_load(pd_registry *reg, const char *spec, const pd_aot_options *opts,
                      pd_module **out)
{
    if (reg == NULL || spec == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, WHO ": %s is NULL", reg ? "spec" : "reg");
    pd_aot_options o;
    pd_status read = pd__options_read(WHO, spec, "pd_aot_options", &o, sizeof o, opts);
    if (read != PD_OK)
        return read;
    size_t lib_chars;
    const char *func;
    if (!pd_aot_spec_split(spec, &lib_chars, &func))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": '%s' names no function; write LIBRARY:FUNCTION (lib.so:CustomAdd)",
                        spec);
    pd_status s = check_options(spec, &o);
    if (s != PD_OK)
        return s;

    pd_aoti_op *op = calloc(1, sizeof *op);
    if (op == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    pthread_mutex_init(&op->lock, NULL);
    op->n_inputs = o.n_inputs;
    op->n_outputs = o.n_outputs ? o.n_outputs : 1;
    op->n_attrs = o.n_attrs;
    op->spec = strdup(o.origin ? o.origin : spec);
    op->library = op->spec ? strdup(spec) : NULL;
    op->function = strdup(func);
    op->name = strdup(o.name ? o.name : func);
    if (op->spec == NULL || op->library == NULL || op->function == NULL || op->name == NULL) {
        pd_aoti_op_free(op);
        return OOM();
    }
    op->library[lib_chars] = '\0';
    s = pd_aoti_fill_names(op, &o);
    if (s == PD_OK && is_source(op->library))
        s = pd__fail(PD_ERR_INVALID_ARGUMENT,
                     WHO ": '%s' names a source; build it first with pd_jit_aot_build "
                         "(pdext_jit.h), which returns the built library's spec to load",
                     spec);
    if (s == PD_OK)
        s = open_library(op);
    if ((s = pd_aoti_op_ready(op, s)) != PD_OK)
        return s; /* op freed */

    op->def.struct_size = sizeof op->def;
    op->def.kind = PD_OP_FORWARD;
    op->def.name = op->name;
    op->def.file = op->library;
    op->def.line = 0;
    op->def.kernel = pd_aoti_kernel;
    if (needs_infer(op)) {
        op->def.infer_shape = pd_aoti_infer_shape;
        op->def.infer_dtype = pd_aoti_infer_dtype;
    } else {
        op->def.flags = PD_OP_OUTPUTS_LIKE_INPUT0;
    }
    op->table[0] = &op->def;

    pd_module_info info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    info.abi_major = PD_ABI_MAJOR;
    info.abi_minor = PD_ABI_MINOR;
    info.ops_begin = op->table;
    info.ops_end = op->table + 1;
    info.api_slot = &op->api_slot;
    info.sdk_version = PD_VERSION_STRING;
    info.compiler = "MindSpore AOT adapter";
    pd__module_owner owner = {pd_aoti_op_free, op};
    s = pd__module_load_owned(reg, &info, op->spec, &owner, out);
    if (s != PD_OK) {
        pd_aoti_op_free(op);
        return s;
    }
    return PD_OK;
}

/* The op's state, if pd_aot_load registered it or it is a bundle's AOT op (whose state is
 * made here if no call made it yet; NULL if that fails). */
static const pd_aoti_op *aot_op_of(const pd_op *op)
{
    if (op == NULL)
        return NULL;
    const pd_op_def *def = pd_op_definition(op);
    if (def != NULL && def->kernel == pd_aot_bundle_kernel) {
        pd_aoti_op *a = NULL;
        return pd_aoti_bundle_state_get((pd_aot_bundle_op *)(uintptr_t)def, &a) == PD_OK ? a : NULL;
    }
    if (def == NULL || def->kernel != pd_aoti_kernel)
        return NULL;
    return (const pd_aoti_op *)def;
}

pd_status pd_aot_op_info(const pd_op *op, pd_aot_info *out)
{
    const pd_aoti_op *a = aot_op_of(op);
    if (a == NULL || out == NULL)
        return pd__fail(a ? PD_ERR_INVALID_ARGUMENT : PD_ERR_NOT_FOUND, "pd_aot_op_info: %s",
                        a ? "out is NULL" : "not an op of pd_aot_load");
    out->library = a->library;
    out->function = a->function;
    out->has_init = a->init != NULL;
    out->has_infer_shape = a->infer_shape != NULL;
    out->has_infer_type = a->infer_type != NULL;
    out->cxx11_abi = a->cxx11;
    out->gpu = a->cuda;
    return PD_OK;
}

int64_t pd_aot_init_count(const pd_op *op)
{
    const pd_aoti_op *a = aot_op_of(op);
    return a ? atomic_load(&a->init_count) : 0;
}
