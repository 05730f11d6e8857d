/*
 * pdext_aot.h - running MindSpore AOT custom operators as pdext ops (libpdext_aot; link with
 * `-lpdext_aot -lpdext`, and `-lpdext_jit` to compile AOT sources with pd_jit_aot_build).
 *
 * A MindSpore AOT kernel is a plain function in a shared library,
 *
 *     extern "C" int F(int nparam, void **params, int *ndims, int64_t **shapes,
 *                      const char **dtypes, void *stream, void *extra);
 *
 * optionally with FInit, FInferShape and FInferType next to it (custom_aot_extra.h). pd_aot_load
 * registers F as an op of a registry: an ordinary pd_op_def-backed op that runs through the one
 * runner (pd_run, pd_op_run, `pdext list/run`). Each call hands F the inputs (dense), then the
 * outputs, then the workspaces its Init asked for (each rounded up to 512 bytes), their ranks,
 * shapes and MindSpore dtype names ("float32", "int64", "bool", ...), the stream (NULL for a
 * CPU kernel; for a GPU kernel, which runs on GPU tensors only, pd_stream(ctx), the call's
 * cudaStream_t, with device pointers and device workspaces) and an AotExtra of the library's
 * libstdc++ string ABI (detected from its symbols) that reads the call's attrs with MindSpore's
 * coercions. FInit runs once per signature (input shapes and dtypes, attr values) before the first
 * call with it; its AotExtra and kernel data live until the op is unloaded. A non-zero return of F
 * or FInit, and a C++ exception thrown by any of them, ends the call with an error naming the op,
 * the function, the library and the code.
 */
#ifndef PDEXT_AOT_H
#define PDEXT_AOT_H

#include "pdext.h"

#include <string.h>

PD_EXTERN_C_BEGIN
#pragma GCC visibility push(default)

/* What one output is. A field left unset comes from the library's FInferShape / FInferType
 * when it has them, else from input 0 (MindSpore's "same as the first input"). */
typedef struct pd_aot_output {
    const char *name;           /* NULL: "out0", "out1", ... */
    pd_data_type dtype;         /* PD_UNDEFINED: not set */
    int32_t ndim;               /* -1: shape not set; 0 .. PD_MAX_DIMS: shape[0..ndim-1] */
    int64_t shape[PD_MAX_DIMS]; /* each >= 0 */
} pd_aot_output;

/* Registration options; zero-filled is valid apart from struct_size. Append-only. */
typedef struct pd_aot_options {
    uint32_t struct_size;           /* sizeof(pd_aot_options) */
    const char *name;               /* the op's name; NULL: the function's name */
    int32_t n_inputs;               /* inputs F takes, 0 .. PD_MAX_INPUTS */
    const char *const *input_names; /* n_inputs names, or NULL: "in0", "in1", ... */
    int32_t n_outputs;              /* 0 means 1; at most PD_MAX_OUTPUTS */
    const pd_aot_output *outputs;   /* n_outputs entries, or NULL: every field unset */
    /* Attr declarations as in pd_op_def.attrs ("scale: float", "axis: int64_t = -1"). The
     * kernel reads them through AotExtra::Attr<T> with MindSpore's coercions, whatever type
     * they are declared with; a list attr declared as "std::string" holding "[[1, 2], [3]]"
     * reads as a 2-D vector. */
    const char *const *attrs;
    int32_t n_attrs;
    /* For a source spec, read by pd_jit_aot_build (pdext_jit.h), not by pd_aot_load: extra
     * compiler flags, and the JIT build directory (NULL: the JIT's cache). */
    const char *const *compile_flags;
    int32_t n_compile_flags;
    const char *build_dir;
    /* What the op's module comes from (pd_module_path) and what pd_aot_load's messages name;
     * NULL: the spec loaded. A caller that built the library with pd_jit_aot_build gives the
     * source spec, so that listings and errors name the source, not the cache's library. */
    const char *origin;
} pd_aot_options;

/* Loads `spec`, "path/lib.so:Func" (a prebuilt library, opened with RTLD_LAZY so that symbols
 * of an unused GPU path do not stop it loading), and registers Func as one op of `reg`, in a
 * module of its own (*out; may be NULL): pd_module_unload removes the op and closes the
 * library. The same library may be loaded again for its other functions. A source
 * ("path/file.cc:Func") is the JIT's: pd_jit_aot_build (pdext_jit.h) compiles it as MindSpore
 * does and gives the spec of the built library to load here; a source spec given here is
 * refused (PD_ERR_INVALID_ARGUMENT) saying so, as this library never compiles. Fails naming
 * the library when it is missing or not an ELF, naming Func and the library's similar exported
 * names when Func is not exported, and on bad options (naming the field). */
pd_status pd_aot_load(pd_registry *reg, const char *spec, const pd_aot_options *opts,
                      pd_module **out);

/* The one reading of an AOT spec "FILE:FUNC" (pd_aot_load, `pdext run/list/check/bundle`,
 * pdext.aot): the last ':' splits it, FILE is not empty and FUNC is a C identifier
 * (pd_name_is_identifier). On success *file_len is FILE's length and *func points at FUNC in
 * `spec` (either may be NULL); false for anything else, NULL included. Inline, so that a host
 * asks it without loading libpdext_aot. */
static inline bool pd_aot_spec_split(const char *spec, size_t *file_len, const char **func)
{
    const char *colon = spec ? strrchr(spec, ':') : NULL;
    if (colon == NULL || colon == spec || !pd_name_is_identifier(colon + 1))
        return false;
    if (file_len)
        *file_len = (size_t)(colon - spec);
    if (func)
        *func = colon + 1;
    return true;
}

/* What pd_aot_load learned about an op's library. Strings belong to the op. */
typedef struct pd_aot_info {
    const char *library;  /* path of the library */
    const char *function; /* F */
    bool has_init;        /* FInit exported */
    bool has_infer_shape; /* FInferShape exported */
    bool has_infer_type;  /* FInferType exported */
    bool cxx11_abi;       /* the library uses libstdc++'s new std::string ABI */
    bool gpu;             /* a GPU kernel (device code, or calls the CUDA runtime): runs on GPU
                           * tensors with the call's stream; other places fail with
                           * PD_ERR_UNAVAILABLE naming the input (and, without a CUDA device
                           * here, saying so) */
} pd_aot_info;

/* Fills *out for an op that pd_aot_load registered; PD_ERR_NOT_FOUND (no message needed by a
 * lister, but one is set) for any other op. */
pd_status pd_aot_op_info(const pd_op *op, pd_aot_info *out);

/* MindSpore's dtype name for a pdext dtype ("float32", "bool", ...); NULL if none. */
const char *pd_aot_dtype_name(pd_data_type dtype);

/* The pdext dtype of a MindSpore TypeId value (mindapi/base/type_id.h: kNumberTypeBool = 30
 * ... kNumberTypeComplex128 = 49); PD_UNDEFINED for the members pdext has no dtype for. */
pd_data_type pd_aot_dtype_of_type_id(int32_t type_id);

/* How many times FInit ran for this op (all signatures); for tests and `pdext list`. */
int64_t pd_aot_init_count(const pd_op *op);

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_AOT_H */
