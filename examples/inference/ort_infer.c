/*
 * ort_infer.c - pdext ops deployed in ONNX Runtime from C: the program links the
 * libonnxruntime.so that the onnxruntime wheel ships, registers a custom-op library made by
 * `pdext bundle --onnxruntime` in its session options, and runs an ONNX model that uses the
 * library's ops (ort_model.py writes one). No Python, no compiler and no libpdext at run time:
 * pdext is inside the custom-op library.
 *
 *     ort_infer LIBRARY MODEL.onnx ROWS COLS < input.txt
 *
 * reads ROWS x COLS float32 values (text, row-major) from stdin as the model's input "x",
 * runs the model and prints its output "y": a line "y: float32 [R x C]", then one line of
 * values per row. Any failure prints the step and ORT's message (which, for a pdext op, carries
 * pdext's) and exits with status 1.
 */
#include "ort_c_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

static OrtApi ort;

/* Prints the step and ORT's message, releases the status; returns 1 (the exit status). */
static int failed(const char *step, OrtStatus *st)
{
    fprintf(stderr, "ort_infer: %s: %s\n", step, st ? ort.GetErrorMessage(st) : "failed");
    if (st)
        ort.ReleaseStatus(st);
    return 1;
}

/* Prints the float32 tensor y, one row (its last dimension) per line. */
static int print_output(OrtValue *y)
{
    OrtTensorTypeAndShapeInfo *info = NULL;
    int elem = 0;
    size_t ndim = 0;
    int64_t shape[8];
    float *data = NULL;
    OrtStatus *st = ort.GetTensorTypeAndShape(y, &info);
    if (st == NULL && (st = ort.GetTensorElementType(info, &elem)) == NULL &&
        (st = ort.GetDimensionsCount(info, &ndim)) == NULL && ndim <= 8)
        st = ort.GetDimensions(info, shape, ndim);
    if (info)
        ort.ReleaseTensorTypeAndShapeInfo(info);
    if (st == NULL)
        st = ort.GetTensorMutableData(y, (void **)&data);
    if (st != NULL)
        return failed("reading the output", st);
    if (elem != ORT_ELEM_FLOAT || ndim == 0 || ndim > 8) {
        fprintf(stderr, "ort_infer: the output is not a float32 tensor of rank 1 to 8\n");
        return 1;
    }
    int64_t n = 1;
    printf("y: float32 [");
    for (size_t i = 0; i < ndim; ++i) {
        printf("%s%lld", i ? " x " : "", (long long)shape[i]);
        n *= shape[i];
    }
    printf("]\n");
    int64_t row = shape[ndim - 1];
    for (int64_t i = 0; i < n; ++i)
        printf("%.9g%s", data[i], (i + 1) % row ? " " : "\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: ort_infer LIBRARY MODEL.onnx ROWS COLS < input.txt\n");
        return 2;
    }
    int64_t shape[2] = {atoll(argv[3]), atoll(argv[4])};
    if (shape[0] <= 0 || shape[1] <= 0 || shape[0] * shape[1] > (1 << 24)) {
        fprintf(stderr, "ort_infer: ROWS and COLS must be positive and small\n");
        return 2;
    }
    size_t n = (size_t)(shape[0] * shape[1]);
    float *x = malloc(n * sizeof *x);
    for (size_t i = 0; x != NULL && i < n; ++i)
        if (scanf("%f", &x[i]) != 1) {
            fprintf(stderr, "ort_infer: stdin holds fewer than %zu numbers\n", n);
            free(x);
            return 2;
        }
    if (x == NULL || ort_api_get(&ort) != 0) {
        fprintf(stderr, "ort_infer: out of memory, or no ONNX Runtime C API version 1\n");
        free(x);
        return 1;
    }

    OrtEnv *env = NULL;
    OrtSessionOptions *options = NULL;
    OrtSession *session = NULL;
    OrtMemoryInfo *cpu = NULL;
    OrtValue *input = NULL, *output = NULL;
    void *library = NULL;
    int rc = 1;
    OrtStatus *st;
    const char *in_names[] = {"x"}, *out_names[] = {"y"};
    if ((st = ort.CreateEnv(ORT_LOGGING_LEVEL_WARNING, "ort_infer", &env)) != NULL)
        rc = failed("creating the environment", st);
    else if ((st = ort.CreateSessionOptions(&options)) != NULL)
        rc = failed("creating the session options", st);
    /* The pdext library's RegisterCustomOps adds its ops' domain to the options. */
    else if ((st = ort.RegisterCustomOpsLibrary(options, argv[1], &library)) != NULL)
        rc = failed("registering the custom-op library", st);
    else if ((st = ort.CreateSession(env, argv[2], options, &session)) != NULL)
        rc = failed("creating the session", st);
    else if ((st = ort.CreateCpuMemoryInfo(ORT_ARENA_ALLOCATOR, ORT_MEM_TYPE_DEFAULT, &cpu)) !=
             NULL)
        rc = failed("describing CPU memory", st);
    else if ((st = ort.CreateTensorWithDataAsOrtValue(cpu, x, n * sizeof *x, shape, 2,
                                                      ORT_ELEM_FLOAT, &input)) != NULL)
        rc = failed("wrapping the input", st);
    else if ((st = ort.Run(session, NULL, in_names, (const OrtValue *const *)&input, 1, out_names,
                           1, &output)) != NULL)
        rc = failed("running the model", st);
    else
        rc = print_output(output);

    if (output)
        ort.ReleaseValue(output);
    if (input)
        ort.ReleaseValue(input);
    if (cpu)
        ort.ReleaseMemoryInfo(cpu);
    if (session)
        ort.ReleaseSession(session);
    if (options)
        ort.ReleaseSessionOptions(options);
    if (env)
        ort.ReleaseEnv(env);
    /* Unloaded last: the sessions that used its ops are gone. */
    if (library)
        dlclose(library);
    free(x);
    return rc;
}
