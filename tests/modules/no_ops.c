/* no_ops.c - a library built from a source that includes extension.h but defines no op. */
#include "extension.h"

int tm_no_ops_marker(void) { return 1; }
