/* ops_broken.c - fixture: a source that does not compile (line 5 uses an undeclared name);
 * `pdext bundle` must show the compiler's diagnostic with file:line. */
#include "extension.h"

static int broken(void) { return undeclared_name_in_bundle_fixture; }
