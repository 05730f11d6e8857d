/*
 * bundle_register.c - pd_bundle_register: the registration call behind every static bundle's
 * generated header (see pdext_bundle.h and `pdext bundle`).
 *
 * A bundle's table is registered like any op table (pd_module_load_info); what this adds is
 * idempotence. Programs often reach their "register my ops" call from more than one place
 * (an init function and a lazy path), so a second call for the same table and registry must
 * be harmless rather than an "already registered" error against itself. A table is
 * recognised by its address (info->ops_begin): a bundle's table lives in the program image,
 * so two registrations of one table have equal bounds, and two bundles never share them.
 */
#include "ops/pd_registry_internal.h"
#include "pdext_bundle.h"

pd_status pd_bundle_register(pd_registry *reg, const pd_module_info *info, const char *origin,
                             pd_module **out)
{
    if (reg == NULL || info == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "pd_bundle_register: %s is NULL",
                        reg ? "info" : "reg");
    /* Reading ops_begin/ops_end needs a block that has them (an older, shorter info block
     * is left to pd_module_load_info, which explains what is wrong with it). */
    bool has_bounds = info->struct_size >= offsetof(pd_module_info, ops_end) + sizeof info->ops_end;
    pd_module *m = (has_bounds && info->ops_begin) ? pd__registry_find_table(reg, info) : NULL;
    if (m == NULL) {
        pd_status s = pd_module_load_info(reg, info, origin ? origin : "(static bundle)", &m);
        /* Another thread may have registered the same table between our look and our load:
         * then its registration is ours. */
        if (s == PD_ERR_ALREADY_EXISTS && has_bounds &&
            (m = pd__registry_find_table(reg, info)) != NULL)
            s = PD_OK;
        if (s != PD_OK)
            return s;
    }
    if (out)
        *out = m;
    return PD_OK;
}
