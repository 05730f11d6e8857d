/*
 * aot_lazy.h - the MindSpore AOT adapter (libpdext_aot, pdext_aot.h) for the `pdext` command
 * and the Python extension, loaded on first use instead of linked. The adapter is C++ inside
 * and brings libstdc++ with it: linked, it cost every `pdext` process ~0.6 ms of dynamic
 * loading (`pdext --version` 1.42 -> 0.78 ms without it), though few commands use it.
 * Compiled into each of the two programs (it uses only libpdext's public API and libdl).
 */
#ifndef PD_AOT_LAZY_H
#define PD_AOT_LAZY_H

#include "pdext_aot.h"

/* The adapter's entry points the programs call. */
typedef struct pd_aot_lazy {
    pd_status (*load)(pd_registry *reg, const char *spec, const pd_aot_options *options,
                      pd_module **out);
    pd_status (*op_info)(const pd_op *op, pd_aot_info *out);
} pd_aot_lazy;

/* The adapter, loaded on the first call: libpdext_aot.so.0 from the directory libpdext was
 * loaded from (where both are built and installed). NULL when it cannot be loaded; *why then says
 * what was tried and why it failed (a static buffer). Thread-safe. */
const pd_aot_lazy *pd_aot_lazy_get(const char **why);

/* The adapter if something loaded it already (pd_aot_lazy_get, or a bundle linked it), else
 * NULL: no AOT op can exist without it, so a caller that only asks about ops loads nothing. */
const pd_aot_lazy *pd_aot_lazy_loaded(void);

#endif /* PD_AOT_LAZY_H */
