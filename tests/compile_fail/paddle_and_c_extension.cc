/*
 * paddle_and_c_extension.cc - both op headers in one translation unit must stop the compile
 * with an #error saying so, whichever comes first (tests/paddle.cmake).
 */
#ifdef PD_TEST_ORDER_paddle_first
#include "extension.h"
#include "paddle/extension.h"
#else
#include "extension.h"
#include "paddle/extension.h"
#endif
