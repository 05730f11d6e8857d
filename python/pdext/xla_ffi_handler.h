/*
 * xla_ffi_handler.h - what the two entries of pdext.jax's XLA FFI handler share: the CPU entry
 * (xla_ffi_handler.c, which holds the op table, the attribute decoding and the call itself)
 * and the CUDA entry (xla_ffi_cuda.c, which adds XLA's device and stream). Both files are
 * built into one library by pdext's JIT on first use (pdext/jax.py).
 */
#ifndef PD_XLA_FFI_HANDLER_H
#define PD_XLA_FFI_HANDLER_H

#include "pdext.h"
#include "xla/ffi/api/c_api.h"

#include <stdbool.h>

#define PD_XLA_EXPORT __attribute__((visibility("default")))

/* An XLA FFI error with `message` (copied by XLA). */
XLA_FFI_Error *pd_xla_ffi_fail(const XLA_FFI_Api *api, XLA_FFI_Error_Code code,
                               const char *message);

/* What every entry does first: answers XLA's registration-time metadata query, refuses an XLA
 * FFI API older than the one built against, and sets *execute when the frame is a call to run
 * (not XLA's instantiate or prepare stage). Returns the error, or NULL. */
XLA_FFI_Error *pd_xla_ffi_prepare(XLA_FFI_CallFrame *frame, bool *execute);

/* Runs the call in frame: the op its attributes name, on XLA's buffers, which live on `place`
 * (the CPU, or the GPU whose stream the caller made current). The error, or NULL. */
XLA_FFI_Error *pd_xla_ffi_run(XLA_FFI_CallFrame *frame, pd_place place);

#endif
