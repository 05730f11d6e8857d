/* broken.c - JIT test fixture: a compile error on line 4. */
#include "extension.h"

static int broken(void) { return undeclared_identifier_here; }
