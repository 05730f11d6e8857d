/* tls_module.c - a library with thread-local storage, loaded with dlopen by tls_probe.c: its
 * TLS is dynamic TLS, as that of the libraries torch and Paddle load, and hold_in_tls puts a
 * heap block only that TLS points to there, and drop_from_tls frees it. */
#include <stdlib.h>

static __thread void *held;

int hold_in_tls(void)
{
    held = malloc(12345);
    return held != NULL;
}

void drop_from_tls(void)
{
    free(held);
    held = NULL;
}
