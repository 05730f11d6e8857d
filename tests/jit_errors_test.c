/*
 * jit_errors_test.c - every way the JIT loader refuses or fails, each a status and a message
 * that says what to do: compile errors (file:line and the build directory), missing tools
 * (which one, and the Debian package), missing or unknown sources, unsafe module names,
 * unsafe cache directories, modules needing a newer ABI, libraries without ops, bad options.
 */
#include "jit_support.h"

#include <sys/resource.h>

PD_TEST(JitErrors, CompileErrorShowsFileLineAndBuildDirectory)
{
    jit_setup();
    const char *srcs[] = {fixture("broken.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("broken", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_BUILD, "broken.c:4:");
    PD_EXPECT_CONTAINS(pd_last_error(), "undeclared_identifier_here");
    PD_EXPECT_CONTAINS(pd_last_error(), tmp_path("cache/broken"));
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, MissingCompilerIsUnavailableNamingToolAndPackage)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    setenv("CC", "/nonexistent/bin/cc-missing", 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("nocc", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE, "cc-missing");
    PD_EXPECT_CONTAINS(pd_last_error(), "Debian package gcc");
    PD_EXPECT_CONTAINS(pd_last_error(), "CC");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, MissingNinjaIsUnavailableNamingThePackage)
{
    jit_setup();
    fixture("scale_factor.h");
    const char *srcs[] = {fixture("scale.c")};
    setenv("CC", "/usr/bin/cc", 1);
    setenv("PATH", tmp_path("src"), 1); /* no ninja anywhere */
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("noninja", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE, "ninja-build");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, CudaSourceWithoutNvccNamesTheMissingTool)
{
    jit_setup();
    const char *srcs[] = {fixture("cuda_scale.cu")};
    setenv("NVCC", "/nonexistent/bin/nvcc", 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("nonvcc", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_UNAVAILABLE,
                    "module 'nonvcc' has CUDA sources (.cu) but the CUDA compiler nvcc was not "
                    "found");
    PD_EXPECT_CONTAINS(pd_last_error(), "Debian package nvidia-cuda-toolkit");
    PD_EXPECT_CONTAINS(pd_last_error(), "or set CUDA_HOME");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, MissingSourceIsNotFound)
{
    jit_setup();
    const char *srcs[] = {tmp_path("src/absent.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("absent", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_NOT_FOUND, "absent.c");
    const char *bad[] = {tmp_path("src/op.f90")};
    o.sources = bad;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "unknown extension");
    o.n_sources = 0;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "no sources");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RefusesModuleNamesThatAreNotSafeFileNames)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    static const char *const names[] = {"../evil", "a/b", ".hidden", "", "sp ace", "semi;colon"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i) {
        pd_jit_options o = options(names[i], srcs, 1);
        pd_module *m = NULL;
        PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "safe file name");
        PD_EXPECT(pd_jit_build_dir(&o) == NULL);
    }
    pd_jit_options o = options(NULL, srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "safe file name");
    PD_EXPECT_EQ(access(tmp_path("evil"), F_OK), -1);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RefusesCacheDirectoryWritableByOthers)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    mkdir(tmp_path("cache"), 0700);
    chmod(tmp_path("cache"), 0777);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("unsafe", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "chmod go-w");
    PD_EXPECT_CONTAINS(pd_last_error(), tmp_path("cache"));

    /* The module's own directory is checked too (group-writable this time). */
    chmod(tmp_path("cache"), 0700);
    mkdir(tmp_path("cache/unsafe"), 0700);
    chmod(tmp_path("cache/unsafe"), 0770);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "writable by its group");
    PD_EXPECT_EQ(ninja_runs(), 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RefusesModuleClaimingANewerAbiWithBothVersions)
{
    jit_setup();
    const char *srcs[] = {fixture("abi_newer.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("newer", srcs, 1);
    pd_module *m = NULL;
    char newer[32], ours[32];
    snprintf(newer, sizeof newer, "ABI %d.%d", PD_ABI_MAJOR, PD_ABI_MINOR + 1);
    snprintf(ours, sizeof ours, "ABI %d.%d", PD_ABI_MAJOR, PD_ABI_MINOR);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_ABI_MISMATCH, newer);
    PD_EXPECT_CONTAINS(pd_last_error(), ours);
    PD_EXPECT_CONTAINS(pd_last_error(), "pd_jit_load: module 'newer'");
    PD_EXPECT_EQ(pd_registry_op_count(reg), 0);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RefusesLibraryThatDefinesNoOps)
{
    jit_setup();
    const char *srcs[] = {fixture("no_ops.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("noops", srcs, 1);
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_MODULE, "no ops");
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, RejectsNullArgumentsAndStaticKindForLoad)
{
    const char *srcs[] = {"x.c"};
    pd_jit_options o = options("x", srcs, 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_module *m = NULL;
    PD_EXPECT_ERROR(pd_jit_load(NULL, &o, &m), PD_ERR_INVALID_ARGUMENT, "reg");
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, NULL), PD_ERR_INVALID_ARGUMENT, "out");
    PD_EXPECT_ERROR(pd_jit_load(reg, NULL, &m), PD_ERR_INVALID_ARGUMENT, "opts");
    o.output_kind = PD_JIT_STATIC;
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "PD_JIT_SHARED");
    o.output_kind = PD_JIT_SHARED;
    PD_EXPECT_ERROR(pd_jit_build(&o), PD_ERR_INVALID_ARGUMENT, "opts->output");
    pd_registry_destroy(reg);
}

/* --- messages that say what to do: the headers, the cache directory, the output --------- */

PD_TEST(JitErrors, IncludeDirWithoutExtensionHeaderFailsNamingTheVariableAndPath)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    setenv("PDEXT_INCLUDE_DIR", tmp_path("src"), 1); /* exists, but holds no extension.h */
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("noheaders", srcs, 1);
    pd_module *m = NULL;
    char expected[600];
    snprintf(expected, sizeof expected, "PDEXT_INCLUDE_DIR is '%s', which holds no extension.h",
             tmp_path("src"));
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_NOT_FOUND, expected);
    PD_EXPECT_CONTAINS(pd_last_error(), "include/pdext) or unset it");
    PD_EXPECT_EQ(ninja_runs(), 0); /* no silent fallback to other headers */
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, UncreatableCacheDirectoryNamesItsOriginAndWhatToDo)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    write_text(tmp_path("file.npy"), "not a directory");
    char *xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("nodir", srcs, 1);
    pd_module *m = NULL;
    const char *todo = "set PDEXT_CACHE_DIR to a writable directory, or pass a build directory "
                       "(build_dir / pdext --build-dir)";

    /* Below a regular file: mkdir fails (ENOTDIR even as root). */
    setenv("PDEXT_CACHE_DIR", tmp_path("file.npy/c"), 1);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_IO, "cannot create directory");
    PD_EXPECT_CONTAINS(pd_last_error(), "comes from PDEXT_CACHE_DIR");
    PD_EXPECT_CONTAINS(pd_last_error(), todo);

    /* The cache directory is a file. */
    setenv("PDEXT_CACHE_DIR", tmp_path("file.npy"), 1);
    char expected[600];
    snprintf(expected, sizeof expected, "'%s' is not a directory", tmp_path("file.npy"));
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_IO, expected);
    PD_EXPECT_CONTAINS(pd_last_error(), "JIT cache directory");
    PD_EXPECT_CONTAINS(pd_last_error(), todo);

    /* From XDG_CACHE_HOME. */
    unsetenv("PDEXT_CACHE_DIR");
    setenv("XDG_CACHE_HOME", tmp_path("file.npy"), 1);
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_IO, "comes from XDG_CACHE_HOME");
    PD_EXPECT_CONTAINS(pd_last_error(), todo);

    /* An explicit build directory says so, and how to fall back to the cache. */
    o.build_dir = tmp_path("file.npy/b");
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_IO, "passed as build_dir (pdext --build-dir)");
    PD_EXPECT_CONTAINS(pd_last_error(), "pass a writable one, or leave it unset");
    PD_EXPECT_EQ(ninja_runs(), 0);
    if (xdg)
        setenv("XDG_CACHE_HOME", xdg, 1);
    else
        unsetenv("XDG_CACHE_HOME");
    free(xdg);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, MissingHomeIsNeverCreatedAndNoCacheSaysBothWaysToPassABuildDir)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    char *xdg = getenv("XDG_CACHE_HOME") ? strdup(getenv("XDG_CACHE_HOME")) : NULL;
    unsetenv("PDEXT_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    setenv("HOME", tmp_path("nohome"), 1);
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("homeless", srcs, 1);
    pd_module *m = NULL;
    char expected[600];
    snprintf(expected, sizeof expected, "HOME '%s' does not exist", tmp_path("nohome"));
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_IO, expected);
    PD_EXPECT_CONTAINS(pd_last_error(), "comes from HOME");
    PD_EXPECT_CONTAINS(pd_last_error(), "set PDEXT_CACHE_DIR to a writable directory");
    PD_EXPECT_EQ(access(tmp_path("nohome"), F_OK), -1); /* not created, even as root */

    /* An existing HOME gets .cache/pdext below it. */
    mkdir(tmp_path("home"), 0700);
    setenv("HOME", tmp_path("home"), 1);
    PD_EXPECT_OK(pd_jit_load(reg, &o, &m));
    struct stat st;
    PD_EXPECT_EQ(stat(tmp_path("home/.cache/pdext/homeless"), &st), 0);

    unsetenv("HOME");
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_INVALID_ARGUMENT, "no cache directory");
    PD_EXPECT_CONTAINS(pd_last_error(), "build_dir / pdext --build-dir");
    if (home)
        setenv("HOME", home, 1);
    if (xdg)
        setenv("XDG_CACHE_HOME", xdg, 1);
    free(home);
    free(xdg);
    pd_registry_destroy(reg);
    jit_teardown();
}

PD_TEST(JitErrors, BuildOutputDirectoryMustExistAndBeWritableBeforeBuilding)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    pd_jit_options o = options("outdir", srcs, 1);
    char expected[600];

    o.output = tmp_path("nonexist/dir/liboutdir.so");
    snprintf(expected, sizeof expected, "output directory '%s' does not exist",
             tmp_path("nonexist/dir"));
    PD_EXPECT_ERROR(pd_jit_build(&o), PD_ERR_NOT_FOUND, expected);

    write_text(tmp_path("file.txt"), "x");
    o.output = tmp_path("file.txt/liboutdir.so");
    snprintf(expected, sizeof expected, "output directory '%s' is not a directory",
             tmp_path("file.txt"));
    PD_EXPECT_ERROR(pd_jit_build(&o), PD_ERR_INVALID_ARGUMENT, expected);

    mkdir(tmp_path("ro"), 0500);
    if (access(tmp_path("ro"), W_OK) != 0) { /* root may write anywhere: nothing to refuse */
        o.output = tmp_path("ro/liboutdir.so");
        snprintf(expected, sizeof expected, "output directory '%s' is not writable",
                 tmp_path("ro"));
        PD_EXPECT_ERROR(pd_jit_build(&o), PD_ERR_IO, expected);
    }
    PD_EXPECT_EQ(ninja_runs(), 0); /* refused before building */
    chmod(tmp_path("ro"), 0700);
    jit_teardown();
}

/* A FIFO in place of build.ninja hung every cold build while it held the lock (the read
 * blocked for a writer): a file the build writes that is not a regular file is refused. */
PD_TEST(JitErrors, AFifoInPlaceOfBuildNinjaIsRefusedNotWaitedOn)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("fifo", srcs, 1);
    o.build_dir = tmp_path("fifobuild");
    PD_ASSERT_EQ(mkdir(tmp_path("fifobuild"), 0700), 0);
    PD_ASSERT_EQ(mkfifo(tmp_path("fifobuild/build.ninja"), 0600), 0);
    pd_module *m = NULL;
    char expected[600];
    snprintf(expected, sizeof expected, "'%s' is not a regular file (a FIFO)",
             tmp_path("fifobuild/build.ninja"));
    PD_EXPECT_ERROR(pd_jit_load(reg, &o, &m), PD_ERR_IO, expected);
    PD_EXPECT_EQ(ninja_runs(), 0);
    /* Removed, the next load builds. */
    PD_ASSERT_EQ(unlink(tmp_path("fifobuild/build.ninja")), 0);
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m));
    pd_registry_destroy(reg);
    jit_teardown();
}

/* The first write of a rebuild is the build's session id into .busy, by the child that then
 * runs Ninja; when the disk was full it exited 127 and the error said nothing. A file size
 * limit of 0 bytes (SIGXFSZ ignored: EFBIG) makes that write fail as a full disk does, in a
 * child process so that the limit ends with it. */
PD_TEST(JitErrors, AFailedFirstWriteOfABuildSaysWhyAndWhere)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    pd_registry *reg;
    PD_ASSERT_OK(pd_registry_create(&reg));
    pd_jit_options o = options("fullbusy", srcs, 1);
    o.build_dir = tmp_path("fullbuild");
    pd_module *m = NULL;
    PD_ASSERT_OK(pd_jit_load(reg, &o, &m)); /* every file of the build directory written */
    edit(srcs[0], "#define SHIFT 10.0f", "#define SHIFT 20.0f"); /* a rebuild, same build.ninja */
    int fds[2];
    PD_ASSERT_EQ(pipe(fds), 0);
    pid_t pid = fork();
    PD_ASSERT(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit none = {0, 0};
        setrlimit(RLIMIT_FSIZE, &none);
        pd_registry *r2 = NULL;
        pd_module *m2 = NULL;
        pd_status s = pd_registry_create(&r2) == PD_OK ? pd_jit_load(r2, &o, &m2) : PD_ERR_IO;
        const char *e = s == PD_OK ? "(built)" : pd_last_error();
        if (write(fds[1], e, strlen(e)) < 0)
            _exit(2);
        _exit(s == PD_OK ? 1 : 0);
    }
    close(fds[1]);
    char buf[4096] = {0};
    char *err = buf; /* a pointer: PD_EXPECT_CONTAINS tests it for NULL */
    size_t got = 0;
    for (ssize_t r;
         got < sizeof buf - 1 && (r = read(fds[0], buf + got, sizeof buf - 1 - got)) > 0;)
        got += (size_t)r;
    close(fds[0]);
    int status = 0;
    PD_ASSERT_EQ(waitpid(pid, &status, 0), pid);
    PD_EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    PD_EXPECT_CONTAINS(err, "building module 'fullbusy' failed");
    PD_EXPECT_CONTAINS(err, "cannot record the build's session in the lock file .busy of");
    PD_EXPECT_CONTAINS(err, tmp_path("fullbuild"));
    PD_EXPECT_CONTAINS(err, "file too large");
    pd_registry_destroy(reg);
    jit_teardown();
}

/* --- corrupted manifests (tests/fuzz/fuzz_manifest.c fuzzes the reader itself) ----------- */

/* Writes `len` bytes of `text` as the manifest of module "corrupt", loads it and expects a
 * working module: a damaged cache entry costs a rebuild at most, never a crash or an error. */
static void expect_load_survives(const char *const *srcs, const char *text, size_t len,
                                 const char *what)
{
    FILE *f = fopen(tmp_path("cache/corrupt/manifest-shared"), "wb");
    PD_ASSERT(f != NULL);
    fwrite(text, 1, len, f);
    fclose(f);
    double v = load_and_run("corrupt", srcs, 1, "jit_shift");
    if (v != 12.0)
        pd_test_fail(__FILE__, __LINE__, "manifest %s (%zu bytes): op gave %g: %s", what, len, v,
                     pd_last_error());
}

/* Found by tests/fuzz/fuzz_manifest.c: a second "library" line naming a path (refused) left
 * the first line's name freed but still referenced, and the reader freed it twice. */
static const char fuzz_manifest_double_free[] =
    "pdext-jit-manifest 1\nkey 0123456789abcfed\nlibrary librelu-00112pdext-jit-manifest 1\n"
    "key 0123456789abcdef\nlibrary librelu-0011223344556677.so00deadbeef /src/relu.c)0 "
    "00000000deadbeef /src/re,u.c\n";

PD_TEST(JitErrors, CorruptedManifestOnlyEverCostsARebuild)
{
    jit_setup();
    const char *srcs[] = {fixture("shift.c")};
    PD_ASSERT_NEAR(load_and_run("corrupt", srcs, 1, "jit_shift"), 12.0, 0);
    char good[4096];
    char *text = read_text(tmp_path("cache/corrupt/manifest-shared"));
    PD_ASSERT(text != NULL && strlen(text) < sizeof good);
    snprintf(good, sizeof good, "%s", text);
    size_t len = strlen(good);

    /* Truncated at a spread of lengths (a full disk, a copy cut short). */
    for (size_t n = 0; n < len; n += len / 12 + 1)
        expect_load_survives(srcs, good, n, "truncated");
    /* Bytes flipped, bits and whole bytes, across the file. */
    for (size_t i = 0; i < len; i += len / 12 + 1) {
        char bad[4096];
        memcpy(bad, good, len);
        bad[i] ^= (char)(i % 2 ? 0x01 : 0xff);
        expect_load_survives(srcs, bad, len, "with a flipped byte");
    }
    expect_load_survives(srcs, fuzz_manifest_double_free, strlen(fuzz_manifest_double_free),
                         "with two library lines");
    PD_EXPECT(ninja_runs() > 1); /* some of them did cost a rebuild */
    /* Well-formed lines with hostile values, under the right key and inputs (so that the
     * warm check reaches them): names of files that are no library, odd sizes. */
    const char *key = strstr(good, "\nkey "), *inputs = strstr(good, "\ninput ");
    PD_ASSERT(key != NULL && inputs != NULL);
    static const char *const hostile[] = {
        "library .\n",
        "library ..\n",
        "library \n",
        "library manifest-shared\n",
        "library .lock\ninput -1 -1 0 /dev/null\n",
        "input 99999999999999999999 0 0 /x\n",
        "input 0 0 0 relative\n",
        "input 1 2 3 /\n",
        "key zz\n",
        "\n\n \n",
    };
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; ++i) {
        char bad[8192];
        int n = snprintf(bad, sizeof bad, "pdext-jit-manifest 1%.21s\n%s%s", key, hostile[i],
                         inputs + 1);
        expect_load_survives(srcs, bad, (size_t)n, hostile[i]);
    }
    jit_teardown();
}
