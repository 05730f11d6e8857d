/*
 * unwind.c - errors that end an op call: PD_CHECK / PD_THROW and failing table functions jump
 * back to the runner of the innermost running call on this thread.
 *
 * Each thread keeps a pointer to its innermost running call. A call remembers the one it
 * interrupted (a kernel may run other ops), so throws always land in the nearest runner, which
 * frees what its call made and restores the outer call as current. The jump itself uses
 * sigsetjmp(frame, 0) / siglongjmp: no signal mask is saved, so arming it costs no system call.
 *
 * C++ op code must not be jumped over (its destructors would not run): it calls the table
 * pd_api.cxx, whose functions arm a guard of their own (api_cxx.c), so a throw inside them
 * lands there and returns to the module's code, which turns it into a C++ exception. The
 * module's invoke hook catches what a kernel throws and reports it with report_error; the
 * runner then ends the call from its own frame.
 *
 * Inside a chunk of pd_parallel_for (call/parallel.c) a throw belongs to the loop: it is
 * recorded there and ends only the chunk; the loop raises it on its calling thread once every
 * chunk stopped, through pd__ctx_throw_at. No jump ever crosses threads.
 *
 * A throw with no running call on the thread has no frame to return to. That is a bug in the
 * caller (op code called outside a kernel, or from a thread the kernel started), so the
 * message is printed to stderr and the process aborts: the only place libpdext does either.
 */
#include "call/kernel_ctx.h"
#include "call/parallel.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The innermost running call (kernel_ctx.h says why initial-exec); entering and leaving are
 * inline there. */
_Thread_local pd_kernel_ctx *pd__current_call __attribute__((tls_model("initial-exec")));

_Thread_local sigjmp_buf *pd__cxx_guard __attribute__((tls_model("initial-exec")));

static const char out_of_memory_text[] = "(out of memory while formatting the error message)";

/* vsnprintf into a new heap string; NULL if out of memory. */
static char *format_message(const char *fmt, va_list ap)
{
    char small[256];
    va_list copy;
    va_copy(copy, ap);
    int len = vsnprintf(small, sizeof small, fmt, copy);
    va_end(copy);
    if (len < 0)
        len = 0;
    char *msg = malloc((size_t)len + 1);
    if (msg == NULL)
        return NULL;
    if ((size_t)len < sizeof small)
        memcpy(msg, small, (size_t)len + 1);
    else
        vsnprintf(msg, (size_t)len + 1, fmt, ap);
    return msg;
}

static const char *base_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* The author's text: leading white space dropped (PD_THROW prefixes a space so that an empty
 * format is still a format); nothing left means the generic message. */
static const char *author_text(const char *msg)
{
    if (msg == NULL)
        return out_of_memory_text;
    while (isspace((unsigned char)*msg))
        ++msg;
    return *msg ? msg : "An error occurred.";
}

/* Makes `message` the call's error (dropping an earlier one a C++ kernel caught). */
static void record(pd_kernel_ctx *ctx, pd_status status, const char *file, int line, char *message)
{
    free(ctx->err_message);
    ctx->err_status = status;
    ctx->err_message = message;
    ctx->err_file = file;
    ctx->err_line = line;
}

/* Lands in the guard of the running C++ table function if there is one (api_cxx.c: only
 * runtime C frames lie in between; the error stays pending for the module's C++ code), else
 * in the runner's frame. */
static PD_NORETURN_ATTR void unwind(pd_kernel_ctx *ctx, pd_status status, const char *file,
                                    int line, char *message)
{
    record(ctx, status, file, line, message);
    sigjmp_buf *guard = pd__cxx_guard;
    if (guard) {
        pd__cxx_guard = NULL;
        ctx->err_set = true;
        ctx->err_handed = false;
        siglongjmp(*guard, 1);
    }
    PD__FRAME_JUMP(ctx->frame);
}

static PD_NORETURN_ATTR void die_outside_call(const char *file, int line, const char *msg)
{
    fprintf(stderr,
            "pdext: an op error was raised outside any op call on this thread (a bug in the "
            "caller; aborting): %s",
            author_text(msg));
    if (file)
        fprintf(stderr, " [%s:%d]", base_name(file), line);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

/* Where every throw goes: to the chunk of a parallel loop this thread runs, unless a guard of
 * the C++ table was armed inside it (then the guard is the innermost frame); else to the
 * running call. */
static PD_NORETURN_ATTR void raise_error(pd_status status, const char *file, int line, char *msg)
{
    if (pd__cxx_guard == NULL && pd__parallel_record(status, file, line, msg))
        pd__parallel_leave_chunk();
    pd_kernel_ctx *ctx = pd__current_call;
    if (ctx == NULL)
        die_outside_call(file, line, msg);
    unwind(ctx, status, file, line, msg);
}

void pd__api_throw_error(const char *file, int line, const char *fmt, va_list ap)
{
    raise_error(PD_ERR_OP_FAILED, file, line, format_message(fmt ? fmt : "", ap));
}

void pd__ctx_throw_at(pd_status status, const char *file, int line, char *message)
{
    raise_error(status, file, line, message);
}

void pd__ctx_throw(pd_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = format_message(fmt, ap);
    va_end(ap);
    raise_error(status, NULL, 0, msg);
}

void pd__ctx_report_error(pd_kernel_ctx *ctx, pd_status status, const char *file, int line,
                          const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *msg = format_message(fmt ? fmt : "", ap);
    va_end(ap);
    /* A module's pd::op_error may carry any status; the call must end failed. */
    if (status <= PD_OK || status > PD_ERR_INTERNAL)
        status = PD_ERR_OP_FAILED;
    if (pd__parallel_record(status, file, line, msg))
        return; /* a C++ chunk of a parallel loop failed: the loop raises it */
    record(ctx, status, file, line, msg);
    ctx->err_set = true;
    ctx->err_handed = true;
}

const char *pd__ctx_pending_error(pd_kernel_ctx *ctx, pd_status *status, const char **file,
                                  int *line)
{
    if (!ctx->err_set || ctx->err_handed)
        return NULL;
    ctx->err_handed = true;
    if (status)
        *status = ctx->err_status;
    if (file)
        *file = ctx->err_file;
    if (line)
        *line = ctx->err_line;
    return author_text(ctx->err_message); /* freed with the next error or the call */
}

/* A PD_DISPATCH_* refusal ("... not implemented for data type `T`; ...") says which dtype but
 * not whose: " (input 'X')" after the dtype names the inputs that have it, so that the
 * message names the op, the input and (from the macro) the dtypes the op takes. `text` is
 * returned as is when it is something else. */
static const char *dispatch_input(const pd_kernel_ctx *ctx, const char *text, char *buf,
                                  size_t size)
{
    static const char mark[] = "is not implemented for data type `";
    const char *at = strstr(text, mark);
    const char *dt = at ? at + sizeof mark - 1 : NULL, *end = dt ? strchr(dt, '`') : NULL;
    if (end == NULL || strncmp(end + 1, "; it takes ", 11) != 0)
        return text; /* not the macros' message (pd_divide's, say), or named already */
    char names[256] = "";
    int found = 0;
    for (int32_t i = 0; i < ctx->n_inputs; ++i)
        for (int32_t k = 0; k < ctx->in[i].count; ++k) {
            const char *n = pd_dtype_name(ctx->in[i].tensors[k].dtype);
            if (strlen(n) != (size_t)(end - dt) || strncmp(n, dt, (size_t)(end - dt)) != 0)
                continue;
            size_t used = strlen(names);
            snprintf(names + used, sizeof names - used, "%s'%s'", found ? ", " : "",
                     ctx->op->inputs[i].base);
            ++found;
            break;
        }
    if (found == 0)
        return text;
    snprintf(buf, size, "%.*s (input%s %s)%s", (int)(end + 1 - text), text, found > 1 ? "s" : "",
             names, end + 1);
    return buf;
}

pd_status pd__ctx_report(pd_kernel_ctx *ctx)
{
    char named[1024];
    const char *text = dispatch_input(ctx, author_text(ctx->err_message), named, sizeof named);
    if (ctx->err_file)
        pd__fail(ctx->err_status, "%s: %s [%s:%d]", ctx->op->name, text, base_name(ctx->err_file),
                 ctx->err_line);
    else
        pd__fail(ctx->err_status, "%s: %s", ctx->op->name, text);
    free(ctx->err_message);
    ctx->err_message = NULL;
    ctx->err_set = false;
    return ctx->err_status;
}
