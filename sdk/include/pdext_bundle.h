/*
 * pdext_bundle.h - registering a static bundle: ops compiled ahead of time by `pdext bundle`
 * (pd_jit_build with PD_JIT_STATIC, or pdext_add_bundle in CMake) into an archive
 * (libmyops.a) that is linked into the program itself.
 *
 * A program does not call this directly: `pdext bundle -o libmyops.a ...` writes myops.h
 * beside the archive, which declares the one call a program makes,
 *
 *     #include "myops.h"
 *     pd_module *ops;
 *     pd_status s = pd_bundle_register_myops(reg, &ops);   // every op of the bundle
 *
 * and which is a static inline wrapper around pd_bundle_register below. Because the call
 * sits in the program's own object, the program references both the bundle (its info
 * function) and libpdext (pd_bundle_register) directly: archives may come in any order, and
 * no --whole-archive is needed. The bundle itself references nothing of libpdext (it reaches
 * the runtime through the function table it is handed, like any module).
 *
 * How the ops survive the linker: `pdext bundle` links all objects of the bundle into ONE
 * relocatable object whose op table is a section of its own ("pd_ops_<name>") bounded by two
 * symbols of that object, and the info function points at those symbols. Pulling the info
 * function from the archive therefore pulls every op, and the references keep the table
 * alive under -Wl,--gc-sections (with GNU ld, gold and lld alike), under -flto (the bundle's
 * objects are ordinary machine code) and under -static. Everything of the bundle except the
 * info function is local (objcopy keeps only that symbol global), so two bundles whose
 * kernels share helper names link side by side.
 */
#ifndef PDEXT_BUNDLE_H
#define PDEXT_BUNDLE_H

#include "pdext.h"

PD_EXTERN_C_BEGIN
#pragma GCC visibility push(default)

/*
 * Registers the op table of a static bundle in `reg` (same checks as pd_module_load_info;
 * `origin`, e.g. "bundle 'myops' (libmyops.a)", names the bundle in messages: an op that
 * another module or bundle registered already is refused with PD_ERR_ALREADY_EXISTS naming
 * the op and both origins, and nothing of the bundle is registered).
 *
 * Idempotent per registry: when this bundle's table is registered in `reg` already (the same
 * table, whatever the origin string), nothing is registered again; *out gets the module
 * registered earlier and the call returns PD_OK. After pd_module_unload of that module, a
 * new call registers the bundle again. Safe to call from several threads at once.
 */
pd_status pd_bundle_register(pd_registry *reg, const pd_module_info *info, const char *origin,
                             pd_module **out);

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_BUNDLE_H */
