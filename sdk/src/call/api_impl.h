/*
 * api_impl.h - the runtime functions that implement the function table, declared from the
 * table's one list (pd_api_list.h), so that an implementation whose signature drifts from its
 * list line fails to compile, and a new entry needs no declaration written by hand. Private
 * to libpdext: api_table.c (the C table), api_cxx.c (the C++ table) and the files that define
 * the functions include it.
 */
#ifndef PD_API_IMPL_H
#define PD_API_IMPL_H

#include "call/kernel_ctx.h"

#define PD__IMPL_DECLARE(ret, member, params, args, failed, c_fn, cxx_fn) ret c_fn params;
#define PD__IMPL_DECLARE_VOID(member, params, args, c_fn, cxx_fn) void c_fn params;
#define PD__IMPL_DECLARE_SAME(ret, member, params, attrs, fn) ret fn params attrs;
PD_API_LIST(PD__IMPL_DECLARE, PD__IMPL_DECLARE_VOID, PD__IMPL_DECLARE_SAME)
#undef PD__IMPL_DECLARE
#undef PD__IMPL_DECLARE_VOID
#undef PD__IMPL_DECLARE_SAME

#endif /* PD_API_IMPL_H */
