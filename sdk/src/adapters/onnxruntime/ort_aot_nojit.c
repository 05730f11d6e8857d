/*
 * ort_aot_nojit.c - what an ONNX Runtime library with MindSpore AOT functions (`pdext bundle
 * --onnxruntime ... add.cc:CustomAdd`) links in place of the JIT.
 *
 * Such a library carries the AOT adapter's objects (in libpdext_onnxruntime.a, pulled in only
 * when the library has AOT ops): a bundle's AOT op makes its state from the descriptor the
 * bundle compiled in (aot_bundle.c) and never compiles anything, but the adapter's file that
 * also serves pd_aot_load refers to the JIT for AOT sources given as source files. An ORT
 * library links pdext statically and no JIT (no compiler at run time), so that one reference
 * resolves here, to a refusal that is never reached from a bundle.
 */
#include "pd_internal.h" /* pd__fail: the AOT adapter reports through libpdext's errors */
#include "pdext_jit.h"

pd_status pd_jit_build_library(const pd_jit_options *opts, char **path)
{
    (void)opts;
    if (path != NULL)
        *path = NULL;
    return pd__fail(PD_ERR_UNAVAILABLE,
                    "pd_jit_build_library: an ONNX Runtime custom-op library compiles "
                    "nothing at run time; give AOT functions to `pdext bundle --onnxruntime`");
}
