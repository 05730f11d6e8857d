/*
 * jit_aot_bundle.c - the C source a bundle gets for its MindSpore AOT functions
 * (pd_jit_aot_bundle_source): templates/bundle_aot.c.in around one
 * templates/bundle_aot_entry.c.in per function, filled by named placeholders. Every bundle
 * path (`pdext bundle`, static, shared or ONNX Runtime; the CMake function pdext_add_bundle,
 * which runs it) makes this source here, so there is one description of what a bundle's AOT
 * op holds.
 */
#include "jit_internal.h"
#include "pdext_aot.h"

#include <stdlib.h>
#include <string.h>

#define WHO "pd_jit_aot_bundle_source"

/* One function being written. */
typedef struct aot_entry {
    const char *spec;
    size_t file_len; /* FILE's length in spec */
    const char *func;
    const pd_aot_options *o;
    int32_t index, n_outputs;
    bool old_abi, gpu;
} aot_entry;

/* The list of functions and the bundle they go into. */
typedef struct aot_all {
    const aot_entry *entries;
    int32_t n;
} aot_all;

/* A C string literal of the n bytes at s. */
static void add_literal(pd__sb *out, const char *s, size_t n)
{
    pd__sb_add(out, "\"");
    for (size_t i = 0; i < n; ++i) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            pd__sb_addf(out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            pd__sb_addf(out, "\\%03o", c);
        else
            pd__sb_addn(out, (const char *)&c, 1);
    }
    pd__sb_add(out, "\"");
}

/* The spec inside a comment: "*" and "/" apart so that it cannot end the comment. */
static void add_comment_text(pd__sb *out, const char *s)
{
    for (; *s; ++s) {
        pd__sb_addn(out, s, 1);
        if (s[0] == '*' && s[1] == '/')
            pd__sb_add(out, " ");
    }
}

/* True when the flags select libstdc++'s old std::string ABI (the last setting wins). */
static bool old_abi(const char *const *flags, int32_t n)
{
    bool old = false;
    for (int32_t i = 0; i < n; ++i)
        if (flags[i] && strstr(flags[i], "_GLIBCXX_USE_CXX11_ABI="))
            old = strstr(flags[i], "_GLIBCXX_USE_CXX11_ABI=0") != NULL;
    return old;
}

static void add_names(pd__sb *out, int32_t n, const char *const *given, const char *fmt)
{
    for (int32_t i = 0; i < n; ++i) {
        if (i)
            pd__sb_add(out, ", ");
        if (given && given[i]) {
            add_literal(out, given[i], strlen(given[i]));
        } else {
            pd__sb_add(out, "\"");
            pd__sb_addf(out, fmt, (int)i);
            pd__sb_add(out, "\"");
        }
    }
}

static void add_outputs(pd__sb *out, const aot_entry *e, char what)
{
    for (int32_t j = 0; j < e->n_outputs; ++j) {
        const pd_aot_output *d = e->o->outputs ? &e->o->outputs[j] : NULL;
        int32_t ndim = d ? d->ndim : -1;
        if (j)
            pd__sb_add(out, ", ");
        if (what == 'd')
            pd__sb_addf(out, "%d", (int)(d ? d->dtype : PD_UNDEFINED));
        else if (what == 'n')
            pd__sb_addf(out, "%d", (int)ndim);
        else {
            pd__sb_add(out, "{");
            for (int32_t k = 0; k < ndim; ++k)
                pd__sb_addf(out, "%s%lld", k ? ", " : "", (long long)d->shape[k]);
            pd__sb_add(out, "}");
        }
    }
}

#define IS(k) (n == sizeof(k) - 1 && memcmp(key, k, n) == 0)

static bool entry_placeholder(pd__sb *sb, const void *user, const char *key, size_t n)
{
    const aot_entry *e = user;
    const pd_aot_options *o = e->o;
    if (IS("SPEC"))
        add_comment_text(sb, e->spec);
    else if (IS("FUNC"))
        pd__sb_add(sb, e->func); /* a C identifier (pd_aot_spec_split) */
    else if (IS("INDEX"))
        pd__sb_addf(sb, "%d", (int)e->index);
    else if (IS("NAME"))
        add_literal(sb, o->name ? o->name : e->func, strlen(o->name ? o->name : e->func));
    else if (IS("SOURCE"))
        add_literal(sb, e->spec, e->file_len);
    else if (IS("INPUTS"))
        add_names(sb, o->n_inputs, o->input_names, "in%d");
    else if (IS("OUTPUTS")) {
        for (int32_t j = 0; j < e->n_outputs; ++j) {
            const char *name = o->outputs ? o->outputs[j].name : NULL;
            pd__sb_add(sb, j ? ", " : "");
            if (name)
                add_literal(sb, name, strlen(name));
            else
                pd__sb_addf(sb, "\"out%d\"", (int)j);
        }
    } else if (IS("ATTRS")) {
        for (int32_t k = 0; k < o->n_attrs; ++k) {
            pd__sb_add(sb, k ? ", " : "");
            add_literal(sb, o->attrs[k], strlen(o->attrs[k]));
        }
    } else if (IS("CXX11_ABI"))
        pd__sb_add(sb, e->old_abi ? "0" : "1");
    else if (IS("GPU"))
        pd__sb_add(sb, e->gpu ? "1" : "0");
    else if (IS("N_INPUTS"))
        pd__sb_addf(sb, "%d", (int)o->n_inputs);
    else if (IS("N_OUTPUTS"))
        pd__sb_addf(sb, "%d", (int)e->n_outputs);
    else if (IS("OUT_DTYPE"))
        add_outputs(sb, e, 'd');
    else if (IS("OUT_NDIM"))
        add_outputs(sb, e, 'n');
    else if (IS("OUT_SHAPE"))
        add_outputs(sb, e, 's');
    else
        return false;
    return true;
}

static bool file_placeholder(pd__sb *sb, const void *user, const char *key, size_t n)
{
    const aot_all *all = user;
    if (IS("VERSION"))
        pd__sb_add(sb, PD_VERSION_STRING);
    else if (IS("FUNCTIONS"))
        for (int32_t i = 0; i < all->n; ++i)
            pd__template_fill(sb, pd__tpl_bundle_aot_entry, entry_placeholder, &all->entries[i]);
    else if (IS("RELEASES"))
        for (int32_t i = 0; i < all->n; ++i)
            pd__sb_addf(sb, "    pd_aot_bundle_release(&pd_aot_op_%d);\n", (int)i);
    else
        return false;
    return true;
}

#undef IS

/* Checks function i and fills its entry; a message naming its spec otherwise. */
static pd_status entry_make(const pd_jit_options *bundle, const char *spec, const pd_aot_options *o,
                            int32_t i, aot_entry *e)
{
    memset(e, 0, sizeof *e);
    e->spec = spec;
    e->o = o;
    e->index = i;
    if (!pd_aot_spec_split(spec, &e->file_len, &e->func))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": specs[%d] '%s' names no function; write FILE:FUNCTION "
                            "(add.cc:CustomAdd)",
                        (int)i, spec ? spec : "(null)");
    if (o == NULL || o->struct_size == 0 || o->struct_size > sizeof(pd_aot_options))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": %s: its options are %s; give a pd_aot_options with struct_size "
                            "set",
                        spec, o ? "of an unknown size" : "NULL");
    e->n_outputs = o->n_outputs ? o->n_outputs : 1;
    if (o->n_inputs < 0 || o->n_inputs > PD_MAX_INPUTS || o->n_outputs < 0 ||
        o->n_outputs > PD_MAX_OUTPUTS || o->n_attrs < 0 || o->n_attrs > PD_MAX_ATTRS ||
        (o->n_attrs > 0 && o->attrs == NULL))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        WHO ": %s: %d inputs, %d outputs and %d attrs; at most %d, %d and %d", spec,
                        (int)o->n_inputs, (int)o->n_outputs, (int)o->n_attrs, PD_MAX_INPUTS,
                        PD_MAX_OUTPUTS, PD_MAX_ATTRS);
    for (int32_t k = 0; k < o->n_attrs; ++k)
        if (o->attrs[k] == NULL)
            return pd__fail(PD_ERR_INVALID_ARGUMENT, WHO ": %s: attrs[%d] is NULL", spec, (int)k);
    for (int32_t j = 0; o->outputs && j < e->n_outputs; ++j)
        if (o->outputs[j].ndim < -1 || o->outputs[j].ndim > PD_MAX_DIMS)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            WHO ": %s: outputs[%d].ndim is %d; expected -1 (not set) or 0 to %d",
                            spec, (int)j, (int)o->outputs[j].ndim, PD_MAX_DIMS);
    const char *end = spec + e->file_len;
    e->gpu = e->file_len > 3 && strncmp(end - 3, ".cu", 3) == 0;
    bool c_source = e->file_len > 2 && strncmp(end - 2, ".c", 2) == 0;
    if (bundle != NULL)
        e->old_abi = e->gpu      ? old_abi(bundle->cuda_flags, bundle->n_cuda_flags)
                     : !c_source ? old_abi(bundle->cxxflags, bundle->n_cxxflags)
                                 : false;
    return PD_OK;
}

pd_status pd_jit_aot_bundle_source(const pd_jit_options *bundle, const char *const *specs,
                                   const struct pd_aot_options *const *fns, int32_t n,
                                   char **source)
{
    if (source == NULL || (n > 0 && (specs == NULL || fns == NULL)) || n < 0)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, WHO ": %s",
                        source == NULL ? "source is NULL"
                        : n < 0        ? "n is negative"
                                       : "specs or fns is NULL");
    *source = NULL;
    aot_entry *entries = calloc((size_t)(n > 0 ? n : 1), sizeof *entries);
    if (entries == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    pd_status s = PD_OK;
    for (int32_t i = 0; i < n && s == PD_OK; ++i)
        s = entry_make(bundle, specs[i], fns[i], i, &entries[i]);
    pd__sb text = {0};
    if (s == PD_OK) {
        aot_all all = {entries, n};
        pd__template_fill(&text, pd__tpl_bundle_aot, file_placeholder, &all);
        if (text.oom)
            s = pd__fail(PD_ERR_OUT_OF_MEMORY, WHO ": out of memory");
    }
    free(entries);
    if (s != PD_OK) {
        pd__sb_free(&text);
        return s;
    }
    *source = text.s;
    return PD_OK;
}
