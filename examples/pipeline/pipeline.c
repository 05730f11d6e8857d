/*
 * pipeline.c - a host that runs ops through the executor (pdext_executor.h): a chain of
 * custom_relu calls submitted without waiting between them, two independent chains on two
 * executor streams, and an error that poisons the rest of its chain.
 *
 *     cc -O2 -shared -fPIC -I<prefix>/include/pdext ../relu/relu.c -o relu.so
 *     cc -O2 -o pipeline pipeline.c $(pkg-config --cflags --libs pdext)
 *     ./pipeline ./relu.so
 *
 * It prints what it checks and exits 0 when every check passes, 1 otherwise.
 */
#include <pdext.h>
#include <pdext_executor.h>

#include <stdio.h>

static int failures;

static void check(bool ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    failures += !ok;
}

/* *cur = custom_relu(*cur), submitted to executor stream `stream`: returns at once. */
static pd_status relu_async(pd_executor *ex, int32_t stream, pd_tensor *cur)
{
    pd_tensor next = PD_TENSOR_UNDEFINED;
    pd_arg in = pd_arg_of(cur), out = pd_arg_of(&next);
    pd_status s = pd_run_async(ex, stream, "custom_relu", &in, 1, NULL, 0, &out, 1);
    if (s == PD_OK) {
        pd_tensor_release(cur); /* the pipeline keeps what it still needs */
        *cur = next;
    }
    return s;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s RELU_MODULE.so\n", argv[0]);
        return 2;
    }
    pd_registry *reg = NULL;
    pd_executor *ex = NULL;
    /* inline_bytes = -1: every call on a worker, so that the kernel error below surfaces at
     * the wait (by default a call of small inputs on an idle stream runs at once, here) */
    pd_executor_options options = {.struct_size = sizeof options,
                                   .n_streams = 2,
                                   .inline_bytes = -1};
    if (pd_registry_create(&reg) != PD_OK || pd_module_load(reg, argv[1], NULL) != PD_OK ||
        pd_executor_create(reg, &options, &ex) != PD_OK) {
        fprintf(stderr, "set-up failed: %s\n", pd_last_error());
        return 1;
    }

    /* 1. A chain of 1000 calls: the caller never waits until it reads the result. */
    const int64_t n = 4096;
    pd_tensor a = PD_TENSOR_UNDEFINED, b = PD_TENSOR_UNDEFINED;
    pd_tensor_empty(&a, PD_FLOAT32, pd_place_cpu(), 1, &n);
    pd_tensor_empty(&b, PD_FLOAT32, pd_place_cpu(), 1, &n);
    for (int64_t i = 0; i < n; ++i) {
        ((float *)a.data)[i] = (float)(i - n / 2);
        ((float *)b.data)[i] = (float)(n / 2 - i);
    }
    bool ok = true;
    for (int k = 0; ok && k < 1000; ++k)
        ok = relu_async(ex, 0, &a) == PD_OK && relu_async(ex, 1, &b) == PD_OK;
    check(ok, "2000 calls submitted on two streams");
    check(pd_defined(&a) && a.shape[0] == n, "outputs have their shape at once (pending)");
    /* Host reads wait: pd_tensor_wait, or a copy to the CPU, or pd_npy_save. */
    check(pd_tensor_wait(ex, &a) == PD_OK && pd_tensor_wait(ex, &b) == PD_OK, "waited");
    check(((float *)a.data)[0] == 0 && ((float *)a.data)[n - 1] == (float)(n / 2 - 1) &&
              ((float *)b.data)[0] == (float)(n / 2) && ((float *)b.data)[n - 1] == 0,
          "values are relu's");

    /* 2. Bad input is refused at the call, with the runner's message. */
    pd_tensor i32 = PD_TENSOR_UNDEFINED, out = PD_TENSOR_UNDEFINED;
    pd_tensor_empty(&i32, PD_INT32, pd_place_cpu(), 1, &n);
    pd_arg in = pd_arg_named("Nope", &a, 1), o = pd_arg_of(&out);
    check(pd_run_async(ex, 0, "custom_relu", &in, 1, NULL, 0, &o, 1) == PD_ERR_INVALID_ARGUMENT,
          "an unknown input name fails at the call");
    printf("      (%s)\n", pd_last_error());

    /* 3. A kernel error poisons what depends on it; the wait names the op. */
    pd_tensor c;
    pd_tensor_retain(&c, &i32);
    ok = relu_async(ex, 0, &c) == PD_OK && relu_async(ex, 0, &c) == PD_OK;
    check(ok, "calls on an int32 tensor are accepted (the kernel refuses the dtype)");
    check(pd_tensor_wait(ex, &c) != PD_OK, "the wait returns the kernel's error");
    printf("      (%s)\n", pd_last_error());
    check(pd_executor_synchronize(ex) != PD_OK, "synchronize reports it too");
    check(pd_executor_synchronize(ex) == PD_OK, "once");

    pd_tensor *all[] = {&a, &b, &c, &i32};
    for (int i = 0; i < 4; ++i)
        pd_tensor_release(all[i]);
    pd_executor_destroy(ex); /* waits for anything still in flight */
    pd_registry_destroy(reg);
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
