/* status_test.c - errors as values: per-thread last error, status names. */
#include "pd_test.h"

#include <pthread.h>

PD_TEST(Status, NamesEveryStatus)
{
    PD_EXPECT_STREQ(pd_status_name(PD_OK), "PD_OK");
    PD_EXPECT_STREQ(pd_status_name(PD_ERR_NOT_FOUND), "PD_ERR_NOT_FOUND");
    PD_EXPECT_STREQ(pd_status_name((pd_status)999), "PD_ERR_UNKNOWN");
}

PD_TEST(Status, VersionMatchesHeaders) { PD_EXPECT_STREQ(pd_version(), PD_VERSION_STRING); }
