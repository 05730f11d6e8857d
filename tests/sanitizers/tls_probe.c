/*
 * tls_probe.c - the ASan run's options against the LeakSanitizer tracer bug of GCC 12's
 * runtime (CMakeLists.txt, PDEXT_ASAN_OPTIONS): a thread holds a heap block in a dlopen'ed
 * library's TLS while the leak check runs. With the runtime's default that check dies here
 * ("Tracer caught signal 11"); with the run's options it must find the block reachable, and
 * still find a block that is really lost.
 *
 * Usage: tls_probe MODULE; exit 0 when both checks read right.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <sanitizer/lsan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static int (*hold_in_tls)(void);
static void (*drop_from_tls)(void);
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int held, done;

/* A block's address hidden from the leak check's scan (only its complement is stored), made
 * in a frame of its own that is gone when the check runs, so that no register or live stack
 * slot holds it: lost to the check, yet freed afterwards. */
static volatile uintptr_t lost_hidden;
static __attribute__((noinline)) void lose_a_block(void)
{
    lost_hidden = (uintptr_t)malloc(777) ^ UINTPTR_MAX;
}

/* Holds a block in the module's TLS, then waits (alive, its TLS with it) until told. */
static void *holder(void *unused)
{
    (void)unused;
    int ok = hold_in_tls();
    pthread_mutex_lock(&mu);
    held = ok ? 1 : -1;
    pthread_cond_broadcast(&cv);
    while (!done)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    drop_from_tls();
    return NULL;
}

int main(int argc, char **argv)
{
    void *module = argc == 2 ? dlopen(argv[1], RTLD_NOW) : NULL;
    if (module == NULL) {
        fprintf(stderr, "usage: tls_probe MODULE (%s)\n", argc == 2 ? dlerror() : "no module");
        return 2;
    }
    *(void **)&hold_in_tls = dlsym(module, "hold_in_tls"); /* POSIX's way round ISO C */
    *(void **)&drop_from_tls = dlsym(module, "drop_from_tls");
    if (hold_in_tls == NULL || drop_from_tls == NULL) {
        fprintf(stderr, "tls_probe: %s lacks hold_in_tls or drop_from_tls: %s\n", argv[1],
                dlerror());
        return 2;
    }
    pthread_t t;
    if (!hold_in_tls()) {
        fprintf(stderr, "tls_probe: out of memory holding a block in TLS\n");
        return 2;
    }
    int rc = pthread_create(&t, NULL, holder, NULL);
    if (rc != 0) {
        fprintf(stderr, "tls_probe: pthread_create failed (error %d)\n", rc);
        drop_from_tls();
        return 2;
    }
    pthread_mutex_lock(&mu);
    while (held == 0)
        pthread_cond_wait(&cv, &mu);
    pthread_mutex_unlock(&mu);
    int status = 0;
    if (held < 0) {
        fprintf(stderr, "tls_probe: out of memory holding a block in the thread's TLS\n");
        status = 2;
    } else if (__lsan_do_recoverable_leak_check() != 0) {
        fprintf(stderr, "tls_probe: memory held in TLS was reported as a leak\n");
        status = 1;
    }
    /* A block really lost while the check runs, freed afterwards (the exit check then finds
     * nothing). */
    fprintf(stderr, "tls_probe: a lost block of 777 bytes, on purpose; its report follows\n");
    lose_a_block();
    if (__lsan_do_recoverable_leak_check() == 0) {
        fprintf(stderr, "tls_probe: a lost block was not reported: is the leak check off?\n");
        status = 1;
    }
    free((void *)(lost_hidden ^ UINTPTR_MAX));
    pthread_mutex_lock(&mu);
    done = 1;
    pthread_cond_broadcast(&cv);
    pthread_mutex_unlock(&mu);
    pthread_join(t, NULL);
    drop_from_tls();
    dlclose(module);
    if (status == 0)
        printf(
            "tls_probe: the leak check ran beside TLS in a dlopen'ed library, both ways right\n");
    return status;
}
