/* ops_none.c - fixture: a source with code but no PD_BUILD_OP; bundling only it must fail. */
#include "extension.h"

int bundle_fixture_unused(int x);
int bundle_fixture_unused(int x) { return x + 1; }
