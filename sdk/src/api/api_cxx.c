/*
 * api_cxx.c - the function table for C++ op code (pd_api.cxx), generated from the table's
 * list (pd_api_list.h): for every context function a wrapper that runs the C implementation
 * under a guard of its own, so that a failure returns to the caller instead of jumping to
 * the runner; the list's shared functions are the C table's.
 *
 * Why. In C a failing table function ends the op call with a siglongjmp to the runner. In C++
 * that jump would cross the kernel's frames without running their destructors. A wrapper
 * here arms a per-thread guard (pd__cxx_guard) before it calls the real function; a throw
 * inside lands back in it, after only runtime C frames, and it returns the failure value of
 * its list line (NULL, -1 or nothing) with the error pending in the call. pd_api.h's C++
 * wrappers see that value, take the error with pending_error and throw it as pd::op_error;
 * the module's invoke hook catches it. Calls through this table cost one sigsetjmp (no
 * system call: no signal mask is saved).
 *
 * A wrapper restores the guard it found (a guarded pd_parallel_for runs chunks that may call
 * guarded functions). Only `outer`, set before sigsetjmp, and the volatile `result` are read
 * after a jump back, as C11 7.13.2.1 requires.
 */
#include "call/kernel_ctx.h"

/* Each macro defines one whole wrapper function named on the list line (cxx_fn); the only
 * `return` is the generated function's own last statement. */
#define CXX_GUARDED(ret, member, params, args, failed, c_fn, cxx_fn) \
    static ret cxx_fn params                                         \
    {                                                                \
        sigjmp_buf *outer = pd__cxx_guard;                           \
        sigjmp_buf guard;                                            \
        ret volatile result = failed;                                \
        if (sigsetjmp(guard, 0) == 0) {                              \
            pd__cxx_guard = &guard;                                  \
            result = c_fn args;                                      \
        }                                                            \
        pd__cxx_guard = outer;                                       \
        return result;                                               \
    }
#define CXX_GUARDED_VOID(member, params, args, c_fn, cxx_fn) \
    static void cxx_fn params                                \
    {                                                        \
        sigjmp_buf *outer = pd__cxx_guard;                   \
        sigjmp_buf guard;                                    \
        if (sigsetjmp(guard, 0) == 0) {                      \
            pd__cxx_guard = &guard;                          \
            c_fn args;                                       \
        }                                                    \
        pd__cxx_guard = outer;                               \
    }
#define NO_WRAPPER(ret, member, params, attrs, fn)

PD_API_LIST(CXX_GUARDED, CXX_GUARDED_VOID, NO_WRAPPER)

#define CXX_ENTRY(ret, member, params, args, failed, c_fn, cxx_fn) .member = cxx_fn,
#define CXX_ENTRY_VOID(member, params, args, c_fn, cxx_fn) .member = cxx_fn,
#define SHARED_ENTRY(ret, member, params, attrs, fn) .member = fn,

const pd_api pd__cxx_api = {.struct_size = sizeof(pd_api),
                            .abi_major = PD_ABI_MAJOR,
                            .abi_minor = PD_ABI_MINOR,
                            .reserved = 0,
                            .ext = NULL,
                            .cxx = &pd__cxx_api,
                            PD_API_LIST(CXX_ENTRY, CXX_ENTRY_VOID, SHARED_ENTRY)};
