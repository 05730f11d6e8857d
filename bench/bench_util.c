/*
 * bench_util.c - clock, statistics, result rows, child processes and the private JIT cache
 * shared by the benchmark programs (see bench_util.h).
 */
#include "bench_util.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

bool bench_smoke = false;
double bench_spawn_cpu_ns = 0;

static char bench_cache[4096];
static bool bench_cache_owned = false;
static int bench_failures = 0;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Linear interpolation between the closest ranks (the usual "type 7" percentile). */
static double percentile(const double *sorted, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

static void print_number(bool have, double v)
{
    if (have && isfinite(v))
        printf("\t%.6g", v);
    else
        printf("\tnull");
}

/* Tabs and newlines would break the row format; notes are ours, but errors quote others. */
static void print_field(const char *s)
{
    putchar('\t');
    for (; s && *s; ++s)
        putchar(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

static bool row_met(const bench_row *r, double ratio)
{
    switch (r->goal) {
    case BENCH_RATIO_AT_LEAST: return ratio >= r->limit;
    case BENCH_RATIO_AT_MOST: return ratio <= r->limit;
    case BENCH_VALUE_AT_MOST: return r->pdext.median <= r->limit;
    case BENCH_ADDED_AT_MOST: return r->pdext.median - r->baseline.median <= r->limit;
    case BENCH_NOT_APPLICABLE: break;
    }
    return false;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double bench_op_once_ns(const pd_op *op, pd_tensor *x)
{
    pd_arg in = pd_arg_of(x);
    pd_tensor out = PD_TENSOR_UNDEFINED;
    pd_arg oa = pd_arg_of(&out);
    uint64_t t0 = bench_now_ns();
    pd_status st = pd_op_run(op, &in, 1, NULL, 0, &oa, 1);
    pd_tensor_release(&out);
    uint64_t t1 = bench_now_ns();
    if (st != PD_OK) {
        bench_report_error(pd_op_name(op), st);
        return -1;
    }
    return (double)(t1 - t0);
}

uint64_t bench_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

bench_stats bench_stats_of(double *v, int n)
{
    bench_stats s = {0, 0, 0, n};
    if (n <= 0)
        return s;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    s.median = percentile(v, n, 0.5);
    s.p10 = percentile(v, n, 0.1);
    s.p90 = percentile(v, n, 0.9);
    return s;
}

double bench_spread(bench_stats s) { return s.median != 0 ? (s.p90 - s.p10) / fabs(s.median) : 0; }

/* The ROW line with `ratio` (NAN: the medians' ratio). */
static void emit(const bench_row *r, double ratio)
{
    bool have_ratio = r->have_pdext && r->have_baseline && r->baseline.median != 0;
    if (have_ratio && isnan(ratio))
        ratio = r->pdext.median / r->baseline.median;
    else if (!have_ratio)
        ratio = NAN;
    bool judged = r->goal != BENCH_NOT_APPLICABLE && r->have_pdext &&
                  (r->goal == BENCH_VALUE_AT_MOST || have_ratio);
    bool noisy = (r->have_pdext && r->pdext.n > 1 && bench_spread(r->pdext) > BENCH_NOISY_SPREAD) ||
                 (r->have_baseline && r->baseline.n > 1 &&
                  bench_spread(r->baseline) > BENCH_NOISY_SPREAD);
    printf("ROW");
    print_field(r->name);
    print_field(r->unit);
    print_number(r->have_pdext, r->pdext.median);
    print_number(r->have_baseline, r->baseline.median);
    print_number(have_ratio, ratio);
    print_field(r->target);
    print_field(r->goal == BENCH_NOT_APPLICABLE ? "null"
                : !judged                       ? "false"
                : row_met(r, ratio)             ? "true"
                                                : "false");
    print_field(noisy ? "noisy" : "-");
    print_field(r->note ? r->note : "");
    putchar('\n');
    fflush(stdout);
    if (!r->have_pdext)
        return;
    fprintf(stderr,
            "  %s: pdext %.4g (p10 %.4g p90 %.4g, n=%d), baseline %.4g (p10 %.4g p90 %.4g, n=%d) "
            "%s\n",
            r->name, r->pdext.median, r->pdext.p10, r->pdext.p90, r->pdext.n, r->baseline.median,
            r->baseline.p10, r->baseline.p90, r->baseline.n, r->unit);
}

void bench_emit(const bench_row *r) { emit(r, NAN); }

void bench_emit_paired(const bench_row *r, double *pairs, int n)
{
    emit(r, n > 0 ? bench_stats_of(pairs, n).median : NAN);
}

void bench_emit_missing(const char *name, const char *unit, const char *target, bool applicable,
                        const char *reason)
{
    bench_row r = {0};
    r.name = name;
    r.unit = unit;
    r.target = target;
    r.goal = applicable ? BENCH_VALUE_AT_MOST : BENCH_NOT_APPLICABLE;
    r.note = reason;
    bench_emit(&r);
    if (applicable)
        ++bench_failures;
}

int bench_init(int argc, char **argv)
{
    int i = 1;
    bool child = argc > 1 && strncmp(argv[1], "--child", 7) == 0;
    if (argc > 1 && strcmp(argv[1], "--smoke") == 0) {
        bench_smoke = true;
        i = 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (child) {
        const char *dir = getenv("PDEXT_CACHE_DIR");
        snprintf(bench_cache, sizeof bench_cache, "%s", dir ? dir : "");
        return i;
    }
    /* A private cache: a warm figure must see only what this run built, a cold one starts
     * from nothing, and nothing of the user's own cache is touched. */
    const char *tmp = getenv("TMPDIR");
    snprintf(bench_cache, sizeof bench_cache, "%s/pdext-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(bench_cache)) {
        fprintf(stderr, "bench: cannot create a cache directory under %s: %s\n",
                tmp && *tmp ? tmp : "/tmp", strerror(errno));
        exit(2);
    }
    bench_cache_owned = true;
    setenv("PDEXT_CACHE_DIR", bench_cache, 1);
    return i;
}

int bench_finish(void)
{
    if (bench_cache_owned)
        bench_remove_tree(bench_cache);
    bench_cache_owned = false;
    return bench_failures ? 1 : 0;
}

const char *bench_cache_dir(void) { return bench_cache; }

char *bench_make_dir(const char *prefix)
{
    size_t n = strlen(bench_cache) + strlen(prefix) + 16;
    char *path = malloc(n);
    if (!path)
        return NULL;
    snprintf(path, n, "%s/%s-XXXXXX", bench_cache, prefix);
    if (!mkdtemp(path)) {
        fprintf(stderr, "bench: mkdtemp %s: %s\n", path, strerror(errno));
        free(path);
        return NULL;
    }
    return path;
}

void bench_remove_tree(const char *path) { nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

double bench_spawn(char *const argv[], char *capture, size_t cap)
{
    posix_spawn_file_actions_t fa;
    int pipefd[2] = {-1, -1};
    posix_spawn_file_actions_init(&fa);
    if (capture) {
        if (pipe2(pipefd, O_CLOEXEC) != 0)
            return -1;
        posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
    } else {
        posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    }
    if (!capture)
        posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    uint64_t t0 = bench_now_ns();
    int rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (capture)
        close(pipefd[1]);
    if (rc != 0) {
        if (capture)
            close(pipefd[0]);
        fprintf(stderr, "bench: cannot run %s: %s\n", argv[0], strerror(rc));
        return -1;
    }
    size_t got = 0;
    if (capture) {
        ssize_t r;
        while (got + 1 < cap && (r = read(pipefd[0], capture + got, cap - 1 - got)) != 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r < 0)
                break;
            got += (size_t)r;
        }
        capture[got] = '\0';
        close(pipefd[0]);
    }
    int st = 0;
    struct rusage ru;
    memset(&ru, 0, sizeof ru);
    while (wait4(pid, &st, 0, &ru) < 0 && errno == EINTR) {
    }
    uint64_t t1 = bench_now_ns();
    /* wait4's usage covers the child and every descendant it waited for (ninja, cc, ...). */
    bench_spawn_cpu_ns = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e9 +
                         (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e3;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
        fprintf(stderr, "bench: %s %s failed (status %d)\n", argv[0], argv[1] ? argv[1] : "", st);
        return -1;
    }
    return (double)(t1 - t0);
}

const char *bench_self(void)
{
    static char path[4096];
    if (!path[0]) {
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        path[n > 0 ? n : 0] = '\0';
    }
    return path;
}

pd_status bench_report_error(const char *what, pd_status status)
{
    fprintf(stderr, "bench: %s: %s (%s)\n", what, pd_last_error(), pd_status_name(status));
    return status;
}

pd_status bench_jit_load(pd_registry *reg, const char *name, const char *const *sources,
                         int32_t n_sources, const char *build_dir, pd_module **out)
{
    pd_jit_options o;
    memset(&o, 0, sizeof o);
    o.struct_size = sizeof o;
    o.name = name;
    o.sources = sources;
    o.n_sources = n_sources;
    o.build_dir = build_dir;
    pd_status st = pd_jit_load(reg, &o, out);
    if (st != PD_OK)
        bench_report_error(name, st);
    return st;
}

/* One sysfs cache attribute of CPU 0 ("3", "Unified", "32768K"), or "" when unreadable. */
static void read_cache_attr(int index, const char *attr, char *buf, size_t size)
{
    char path[128];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/%s", index, attr);
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(buf, (int)size, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

size_t bench_llc_bytes(const char **from)
{
    static char where[32];
    size_t best = 0;
    long best_level = 0;
    for (int i = 0; i < 16; ++i) {
        char level[16], type[32], size[32];
        read_cache_attr(i, "level", level, sizeof level);
        read_cache_attr(i, "type", type, sizeof type);
        read_cache_attr(i, "size", size, sizeof size);
        if (!level[0] || !size[0] || strcmp(type, "Instruction") == 0)
            continue;
        char *end = NULL;
        unsigned long long v = strtoull(size, &end, 10);
        if (end && (*end == 'K' || *end == 'k'))
            v <<= 10;
        else if (end && (*end == 'M' || *end == 'm'))
            v <<= 20;
        long lv = strtol(level, NULL, 10);
        if (v > 0 && (lv > best_level || (lv == best_level && v > best))) {
            best = (size_t)v;
            best_level = lv;
        }
    }
    if (best) {
        snprintf(where, sizeof where, "sysfs L%ld", best_level);
    } else {
        long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
        if (l3 > 0) {
            best = (size_t)l3;
            snprintf(where, sizeof where, "sysconf L3");
        } else if (l2 > 0) {
            best = (size_t)l2;
            snprintf(where, sizeof where, "sysconf L2");
        } else {
            /* Larger than most desktop L3s: 4x of it still leaves the caches behind. */
            best = (size_t)32 << 20;
            snprintf(where, sizeof where, "assumed");
        }
    }
    if (from)
        *from = where;
    return best;
}

size_t bench_stream_bytes(void)
{
    if (bench_smoke)
        return (size_t)64 << 10;
    const size_t mib = (size_t)1 << 20;
    size_t bytes = 4 * bench_llc_bytes(NULL);
    if (bytes < 64 * mib)
        bytes = 64 * mib;
    return (bytes + mib - 1) / mib * mib;
}

char *bench_write_source(const char *file_name, const char *text)
{
    size_t n = strlen(bench_cache) + strlen(file_name) + 2;
    char *path = malloc(n);
    if (!path)
        return NULL;
    snprintf(path, n, "%s/%s", bench_cache, file_name);
    FILE *f = fopen(path, "w");
    bool ok = f && fputs(text, f) != EOF;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        fprintf(stderr, "bench: cannot write %s: %s\n", path, strerror(errno));
        free(path);
        return NULL;
    }
    return path;
}

void bench_fill_random_signs(float *x, int64_t n)
{
    uint64_t s = 0x9E3779B97F4A7C15u;
    for (int64_t i = 0; i < n; ++i) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        float mag = 0.5f + (float)(s >> 40) / (float)(1u << 24);
        x[i] = (s & 1) ? mag : -mag;
    }
}
