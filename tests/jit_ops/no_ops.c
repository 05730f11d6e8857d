/* no_ops.c - JIT test fixture: includes extension.h (so it has an entry point) but defines
 * no op. */
#include "extension.h"

int jit_no_ops_helper(int x);
int jit_no_ops_helper(int x) { return x + 1; }
