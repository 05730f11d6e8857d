/*
 * parallel.h - what error unwinding (unwind.c) needs from pd_parallel_for (parallel.c): a
 * throw or a reported error on a thread that runs a chunk of a loop belongs to that loop,
 * not to the op call, until the loop hands it to the calling thread. Private to libpdext.
 */
#ifndef PD_PARALLEL_H
#define PD_PARALLEL_H

#include "pd_internal.h"

/* If this thread runs a chunk of a parallel loop and no op call began inside that chunk:
 * makes the error the loop's (the first error of a loop wins; `message`, heap or NULL, is
 * taken over either way) and returns true. Else returns false and `message` stays the
 * caller's. */
bool pd__parallel_record(pd_status status, const char *file, int line, char *message);
/* Ends the chunk this thread runs, after pd__parallel_record returned true for it. */
PD_NORETURN_ATTR void pd__parallel_leave_chunk(void);

/* unwind.c: raises an error that was caught elsewhere (a loop's, on its calling thread) as if
 * it were thrown here: status, [file:line] (file may be NULL) and `message` (heap or NULL for
 * out of memory; taken over). */
PD_NORETURN_ATTR void pd__ctx_throw_at(pd_status status, const char *file, int line, char *message);

#endif /* PD_PARALLEL_H */
