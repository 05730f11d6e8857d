/* npy_test.c - .npy and .npz files: round trips of every dtype, headers written byte for byte
 * as numpy writes them, hand-made numpy files (v1, v2, v3, stored and deflated zips, numpy's
 * zip64 members) and every refusal. */
#include "pd_test.h"
#include "pdext_npy.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* --- Helpers ------------------------------------------------------------------------------ */

/* A fresh directory per test, removed by tmp_done. */
static char tmp_root[256];

static const char *tmp_path(const char *name)
{
    static char buf[8][512];
    static int slot;
    if (tmp_root[0] == '\0') {
        snprintf(tmp_root, sizeof tmp_root, "/tmp/pdext_npy_test.XXXXXX");
        if (mkdtemp(tmp_root) == NULL)
            abort();
    }
    char *p = buf[slot++ % 8];
    snprintf(p, 512, "%s/%s", tmp_root, name);
    return p;
}

static int tmp_count(void)
{
    DIR *d = opendir(tmp_root);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void tmp_done(void)
{
    DIR *d = opendir(tmp_root);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;)
        if (e->d_name[0] != '.')
            unlink(tmp_path(e->d_name));
    if (d)
        closedir(d);
    rmdir(tmp_root);
    tmp_root[0] = '\0';
}

static void write_bytes(const char *path, const void *data, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (fp == NULL || fwrite(data, 1, n, fp) != n)
        abort();
    fclose(fp);
}

/* Reads a whole file into a malloc'd buffer. */
static unsigned char *read_bytes(const char *path, size_t *n)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return NULL;
    fseek(fp, 0, SEEK_END);
    *n = (size_t)ftell(fp);
    fseek(fp, 0, SEEK_SET);
    unsigned char *b = malloc(*n + 1);
    if (fread(b, 1, *n, fp) != *n)
        abort();
    fclose(fp);
    return b;
}

/* A .npy image: magic, version, length field of 2 or 4 bytes, the dict padded to 64 bytes
 * with spaces and '\n' exactly as numpy pads it, then `data`. */
static size_t make_npy(unsigned char *out, int major, const char *dict, const void *data, size_t n)
{
    size_t len_bytes = major == 1 ? 2 : 4, pre = 8 + len_bytes;
    size_t total = (pre + strlen(dict) + 1 + 63) / 64 * 64, hlen = total - pre;
    memcpy(out, "\x93NUMPY", 6);
    out[6] = (unsigned char)major;
    out[7] = 0;
    for (size_t i = 0; i < len_bytes; ++i)
        out[8 + i] = (unsigned char)(hlen >> (8 * i));
    memset(out + pre, ' ', hlen);
    memcpy(out + pre, dict, strlen(dict));
    out[total - 1] = '\n';
    memcpy(out + total, data, n);
    return total + n;
}

static void expect_shape(const pd_tensor *t, int32_t ndim, const int64_t *shape)
{
    PD_EXPECT_EQ(t->ndim, ndim);
    for (int32_t i = 0; i < ndim && i < t->ndim; ++i)
        PD_EXPECT_EQ(t->shape[i], shape[i]);
}

static const float six[6] = {1, -2, 3.5f, 0, -0.25f, 6};

/* Writes a .npy with this dict and the six floats, then expects pd_npy_load to refuse it. */
static void expect_refused(const char *dict, size_t data_bytes, const char *needle)
{
    unsigned char buf[512];
    size_t n = make_npy(buf, 1, dict, six, data_bytes);
    const char *path = tmp_path("bad.npy");
    write_bytes(path, buf, n);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_npy_load(path, &t), PD_ERR_INVALID_ARGUMENT, needle);
    PD_EXPECT_CONTAINS(pd_last_error(), "bad.npy");
    PD_EXPECT(!pd_defined(&t));
    /* The in-memory parser gives the same verdict. */
    PD_EXPECT_ERROR(pd_npy_load_buffer(buf, n, "mem", &t), PD_ERR_INVALID_ARGUMENT, needle);
    tmp_done();
}

/* --- .npy round trips and numpy's exact bytes ------------------------------------------------ */

PD_TEST(Npy, RoundTripsEveryDtypeAndShape)
{
    static const int64_t shapes[][3] = {{0}, {5}, {2, 3}, {2, 0, 4}, {1, 1, 3}};
    static const int32_t ndims[] = {0, 1, 2, 3, 3};
    for (int dt = PD_BOOL; dt < PD_NUM_DTYPES; ++dt) {
        if (dt == PD_BFLOAT16)
            continue;
        for (size_t s = 0; s < sizeof ndims / sizeof ndims[0]; ++s) {
            pd_tensor t, back = PD_TENSOR_UNDEFINED;
            PD_ASSERT_OK(
                pd_tensor_empty(&t, (pd_data_type)dt, pd_place_cpu(), ndims[s], shapes[s]));
            unsigned char *b = t.data;
            for (size_t i = 0; i < pd_nbytes(&t); ++i)
                b[i] = dt == PD_BOOL ? (unsigned char)(i % 2) : (unsigned char)(i * 37 + dt);
            const char *path = tmp_path("x.npy");
            PD_EXPECT_OK(pd_npy_save(path, &t));
            PD_EXPECT_OK(pd_npy_load(path, &back));
            PD_EXPECT_EQ(back.dtype, dt);
            expect_shape(&back, ndims[s], shapes[s]);
            PD_EXPECT(pd_is_cpu(&back));
            PD_EXPECT(pd_nbytes(&back) == pd_nbytes(&t) &&
                      memcmp(back.data, t.data, pd_nbytes(&t)) == 0);
            pd_tensor_release(&back);
            pd_tensor_release(&t);
        }
    }
    PD_EXPECT_EQ(tmp_count(), 1); /* x.npy, no temporary left behind */
    tmp_done();
}

PD_TEST(Npy, WritesTheHeaderNumpyWrites)
{
    pd_tensor t;
    PD_ASSERT_OK(pd_tensor_empty(&t, PD_FLOAT32, pd_place_cpu(), 2, (int64_t[]){2, 3}));
    memcpy(t.data, six, sizeof six);
    const char *path = tmp_path("a.npy");
    PD_ASSERT_OK(pd_npy_save(path, &t));
    unsigned char expected[256];
    size_t n = make_npy(expected, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                        six, sizeof six);
    size_t got_n = 0;
    unsigned char *got = read_bytes(path, &got_n);
    PD_EXPECT_EQ(got_n, n);
    PD_EXPECT(got && got_n == n && memcmp(got, expected, n) == 0);
    free(got);
    pd_tensor_release(&t);
    tmp_done();
}

PD_TEST(Npy, WritesScalarAndOneDimShapesAsPythonTuples)
{
    static const struct {
        int32_t ndim;
        int64_t shape[1];
        const char *text;
    } cases[] = {{0, {0}, "'shape': (), }"}, {1, {4}, "'shape': (4,), }"}};
    for (int c = 0; c < 2; ++c) {
        pd_tensor t;
        PD_ASSERT_OK(pd_tensor_zeros(&t, PD_BOOL, pd_place_cpu(), cases[c].ndim, cases[c].shape));
        const char *path = tmp_path("s.npy");
        PD_ASSERT_OK(pd_npy_save(path, &t));
        size_t n = 0;
        unsigned char *got = read_bytes(path, &n);
        size_t total = 10 + (size_t)(got[8] | got[9] << 8); /* data starts 64-byte aligned */
        PD_ASSERT(total % 64 == 0 && total + pd_nbytes(&t) == n && got[total - 1] == '\n');
        got[total - 1] = '\0';
        PD_EXPECT_CONTAINS((char *)got + 10, "'descr': '|b1'");
        PD_EXPECT_CONTAINS((char *)got + 10, cases[c].text);
        free(got);
        pd_tensor_release(&t);
    }
    tmp_done();
}

PD_TEST(Npy, DescrNamesEveryNumpyDtypeAndNoneForBfloat16)
{
    PD_EXPECT_STREQ(pd_npy_descr(PD_BOOL), "|b1");
    PD_EXPECT_STREQ(pd_npy_descr(PD_UINT8), "|u1");
    PD_EXPECT_STREQ(pd_npy_descr(PD_FLOAT16), "<f2");
    PD_EXPECT_STREQ(pd_npy_descr(PD_UINT64), "<u8");
    PD_EXPECT_STREQ(pd_npy_descr(PD_COMPLEX128), "<c16");
    PD_EXPECT(pd_npy_descr(PD_BFLOAT16) == NULL);
    PD_EXPECT(pd_npy_descr(PD_UNDEFINED) == NULL);
    PD_EXPECT(pd_npy_descr((pd_data_type)99) == NULL);
}

/* --- Hand-made numpy files -------------------------------------------------------------------- */

static void expect_six_floats(const pd_tensor *t)
{
    PD_EXPECT_EQ(t->dtype, PD_FLOAT32);
    expect_shape(t, 2, (int64_t[]){2, 3});
    for (int i = 0; i < 6 && pd_numel(t) == 6; ++i)
        PD_EXPECT_NEAR(((float *)t->data)[i], six[i], 0);
}

PD_TEST(Npy, ReadsHandMadeHeadersOfVersions1And2And3)
{
    for (int major = 1; major <= 3; ++major) {
        unsigned char buf[256];
        size_t n = make_npy(buf, major,
                            "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", six,
                            sizeof six);
        const char *path = tmp_path("v.npy");
        write_bytes(path, buf, n);
        pd_tensor t = PD_TENSOR_UNDEFINED;
        PD_EXPECT_OK(pd_npy_load(path, &t));
        expect_six_floats(&t);
        pd_tensor_release(&t);
    }
    tmp_done();
}

PD_TEST(Npy, ReadsKeysInAnyOrderWithEitherQuote)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, "{\"shape\": (2,3), \"fortran_order\": False, \"descr\": \"=f4\"}",
                        six, sizeof six);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_OK(pd_npy_load_buffer(buf, n, NULL, &t));
    expect_six_floats(&t);
    pd_tensor_release(&t);
}

PD_TEST(Npy, ReadsNumpyBoolAndOneByteTypesWithAnyByteOrderMark)
{
    static const unsigned char data[3] = {1, 0, 1};
    static const char *const descrs[] = {"|b1", "<b1", "?", "|u1", ">u1", "|i1"};
    static const pd_data_type types[] = {PD_BOOL, PD_BOOL, PD_BOOL, PD_UINT8, PD_UINT8, PD_INT8};
    for (int i = 0; i < 6; ++i) {
        char dict[128];
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (3,), }",
                 descrs[i]);
        unsigned char buf[256];
        size_t n = make_npy(buf, 1, dict, data, sizeof data);
        pd_tensor t = PD_TENSOR_UNDEFINED;
        PD_EXPECT_OK(pd_npy_load_buffer(buf, n, descrs[i], &t));
        PD_EXPECT_EQ(t.dtype, types[i]);
        PD_EXPECT(pd_numel(&t) == 3 && memcmp(t.data, data, 3) == 0);
        pd_tensor_release(&t);
    }
}

/* --- Refusals ------------------------------------------------------------------------------- */

PD_TEST(Npy, RefusesFortranOrder)
{
    expect_refused("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", 24,
                   "Fortran-order");
}

PD_TEST(Npy, RefusesBigEndianData)
{
    expect_refused("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", 24,
                   "big-endian data ('>f4')");
}

PD_TEST(Npy, RefusesObjectArrays)
{
    expect_refused("{'descr': '|O', 'fortran_order': False, 'shape': (3,), }", 24,
                   "object arrays ('|O')");
}

PD_TEST(Npy, RefusesStructuredAndUnsupportedDtypes)
{
    expect_refused("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }", 24,
                   "structured");
    expect_refused("{'descr': '<U3', 'fortran_order': False, 'shape': (2,), }", 24,
                   "unsupported dtype '<U3'");
}

PD_TEST(Npy, RefusesShapeThatDoesNotMatchTheData)
{
    expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 4), }", 24,
                   "truncated data");
    expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (5,), }", 24,
                   "trailing bytes");
}

PD_TEST(Npy, RefusesMoreDimensionsThanPdMaxDims)
{
    expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 6), "
                   "}",
                   24, "more than 8 dimensions");
}

PD_TEST(Npy, RefusesMalformedHeaders)
{
    expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), ", 24, "malformed");
    expect_refused("{'descr': '<f4', 'fortran_order': Nope, 'shape': (2, 3), }", 24,
                   "True or False");
    expect_refused("{'descr': '<f4', 'shape': (2, 3), }", 24, "missing key 'fortran_order'");
    expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }", 24, "dimension");
    expect_refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'x': 1}", 24,
                   "unexpected");
    expect_refused("['descr', '<f4']", 24, "'{'");
}

PD_TEST(Npy, RefusesTruncatedHeaders)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", six,
                        24);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_npy_load_buffer(buf, 40, "cut", &t), PD_ERR_INVALID_ARGUMENT,
                    "truncated .npy header");
    PD_EXPECT_ERROR(pd_npy_load_buffer(buf, 9, "cut", &t), PD_ERR_INVALID_ARGUMENT,
                    "truncated .npy header");
    PD_EXPECT_ERROR(pd_npy_load_buffer(buf, 3, "cut", &t), PD_ERR_INVALID_ARGUMENT, "truncated");
    const char *path = tmp_path("cut.npy");
    write_bytes(path, buf, 40);
    PD_EXPECT_ERROR(pd_npy_load(path, &t), PD_ERR_INVALID_ARGUMENT, "truncated .npy header");
    write_bytes(path, buf, 0);
    PD_EXPECT_ERROR(pd_npy_load(path, &t), PD_ERR_INVALID_ARGUMENT, "not a .npy file");
    buf[6] = 4;
    PD_EXPECT_ERROR(pd_npy_load_buffer(buf, n, "v4", &t), PD_ERR_INVALID_ARGUMENT, "version 4.0");
    PD_EXPECT(!pd_defined(&t));
    tmp_done();
}

PD_TEST(Npy, MissingFileIsNotFoundNamingThePath)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_npy_load("/nonexistent/x.npy", &t), PD_ERR_NOT_FOUND, "/nonexistent/x.npy");
    PD_EXPECT_ERROR(pd_npy_load(NULL, &t), PD_ERR_INVALID_ARGUMENT, "pd_npy_load");
}

PD_TEST(Npy, RefusesSavingBfloat16AndLeavesTheOldFile)
{
    pd_tensor t, bf;
    PD_ASSERT_OK(pd_tensor_full(&t, PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){3}, 2.0));
    PD_ASSERT_OK(pd_tensor_zeros(&bf, PD_BFLOAT16, pd_place_cpu(), 1, (int64_t[]){3}));
    const char *path = tmp_path("keep.npy");
    PD_ASSERT_OK(pd_npy_save(path, &t));
    PD_EXPECT_ERROR(pd_npy_save(path, &bf), PD_ERR_INVALID_ARGUMENT, "bfloat16 has no NumPy dtype");
    pd_tensor back = PD_TENSOR_UNDEFINED;
    PD_EXPECT_OK(pd_npy_load(path, &back));
    PD_EXPECT(back.dtype == PD_FLOAT32 && ((float *)back.data)[2] == 2.0f);
    PD_EXPECT_EQ(tmp_count(), 1);
    pd_tensor undefined = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_npy_save(path, &undefined), PD_ERR_INVALID_ARGUMENT, "undefined");
    pd_tensor_release(&back);
    pd_tensor_release(&bf);
    pd_tensor_release(&t);
    tmp_done();
}

PD_TEST(Npy, SaveIntoAMissingDirectoryFailsLeavingNothing)
{
    pd_tensor t;
    PD_ASSERT_OK(pd_tensor_zeros(&t, PD_INT32, pd_place_cpu(), 1, (int64_t[]){2}));
    PD_EXPECT_ERROR(pd_npy_save(tmp_path("no/such/dir.npy"), &t), PD_ERR_NOT_FOUND,
                    "no/such/dir.npy");
    PD_EXPECT_EQ(tmp_count(), 0);
    pd_tensor_release(&t);
    tmp_done();
}

/* --- .npz --------------------------------------------------------------------------------- */

typedef struct zip_member {
    const char *name;
    const unsigned char *data;
    size_t n;
    int method; /* 0 stored, 8 deflated */
} zip_member;

static unsigned char *le16(unsigned char *p, unsigned v)
{
    p[0] = v & 0xff;
    p[1] = (v >> 8) & 0xff;
    return p + 2;
}
static unsigned char *le32(unsigned char *p, unsigned long v)
{
    return le16(le16(p, v & 0xffff), (v >> 16) & 0xffff);
}

/* A zip archive built from the APPNOTE layout: local headers, data, central directory, end
 * record. `bad_crc` records a wrong CRC for every member. Returns the size. */
static size_t make_zip(unsigned char *out, const zip_member *m, int n, bool bad_crc)
{
    unsigned char *p = out;
    unsigned long offsets[8], csizes[8], crcs[8];
    unsigned char *cdata[8];
    for (int i = 0; i < n; ++i) {
        crcs[i] = crc32(0L, m[i].data, (uInt)m[i].n) ^ (bad_crc ? 1u : 0u);
        uLongf clen = compressBound(m[i].n) + 16;
        cdata[i] = malloc(clen);
        if (m[i].method == 8) {
            z_stream zs;
            memset(&zs, 0, sizeof zs);
            deflateInit2(&zs, 9, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
            zs.next_in = (unsigned char *)m[i].data;
            zs.avail_in = (uInt)m[i].n;
            zs.next_out = cdata[i];
            zs.avail_out = (uInt)clen;
            deflate(&zs, Z_FINISH);
            csizes[i] = zs.total_out;
            deflateEnd(&zs);
        } else {
            memcpy(cdata[i], m[i].data, m[i].n);
            csizes[i] = m[i].n;
        }
        offsets[i] = (unsigned long)(p - out);
        p = le32(p, 0x04034b50);
        p = le16(p, 20);
        p = le16(p, 0);
        p = le16(p, (unsigned)m[i].method);
        p = le16(p, 0);
        p = le16(p, 0x21);
        p = le32(p, crcs[i]);
        p = le32(p, csizes[i]);
        p = le32(p, m[i].n);
        p = le16(p, (unsigned)strlen(m[i].name));
        p = le16(p, 0);
        memcpy(p, m[i].name, strlen(m[i].name));
        p += strlen(m[i].name);
        memcpy(p, cdata[i], csizes[i]);
        p += csizes[i];
        free(cdata[i]);
    }
    unsigned char *cd = p;
    for (int i = 0; i < n; ++i) {
        p = le32(p, 0x02014b50);
        p = le16(p, 20);
        p = le16(p, 20);
        p = le16(p, 0);
        p = le16(p, (unsigned)m[i].method);
        p = le16(p, 0);
        p = le16(p, 0x21);
        p = le32(p, crcs[i]);
        p = le32(p, csizes[i]);
        p = le32(p, m[i].n);
        p = le16(p, (unsigned)strlen(m[i].name));
        p = le16(p, 0);
        p = le16(p, 0);
        p = le16(p, 0);
        p = le16(p, 0);
        p = le32(p, 0);
        p = le32(p, offsets[i]);
        memcpy(p, m[i].name, strlen(m[i].name));
        p += strlen(m[i].name);
    }
    unsigned long cd_size = (unsigned long)(p - cd), cd_off = (unsigned long)(cd - out);
    p = le32(p, 0x06054b50);
    p = le16(p, 0);
    p = le16(p, 0);
    p = le16(p, (unsigned)n);
    p = le16(p, (unsigned)n);
    p = le32(p, cd_size);
    p = le32(p, cd_off);
    p = le16(p, 0);
    return (size_t)(p - out);
}

/* An archive with "a.npy" (the six floats) and "b.npy" (three int64), each member `method`. */
static const char *make_npz(const char *file, int method, bool bad_crc)
{
    static const int64_t b[3] = {7, -8, (int64_t)1 << 40};
    unsigned char a_npy[256], b_npy[256], zip[2048];
    size_t na = make_npy(a_npy, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                         six, sizeof six);
    size_t nb = make_npy(b_npy, 1, "{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", b,
                         sizeof b);
    zip_member m[2] = {{"a.npy", a_npy, na, method}, {"b.npy", b_npy, nb, method}};
    size_t n = make_zip(zip, m, 2, bad_crc);
    const char *path = tmp_path(file);
    write_bytes(path, zip, n);
    return path;
}

static void expect_b(const pd_tensor *t)
{
    PD_EXPECT_EQ(t->dtype, PD_INT64);
    expect_shape(t, 1, (int64_t[]){3});
    if (pd_numel(t) == 3) {
        PD_EXPECT_EQ(((int64_t *)t->data)[1], -8);
        PD_EXPECT_EQ(((int64_t *)t->data)[2], (int64_t)1 << 40);
    }
}

PD_TEST(Npz, ReadsStoredAndDeflatedMembersByEitherName)
{
    for (int method = 0; method <= 8; method += 8) {
        const char *path = make_npz("m.npz", method, false);
        pd_tensor a = PD_TENSOR_UNDEFINED, b = PD_TENSOR_UNDEFINED;
        PD_EXPECT_OK(pd_npz_load(path, "a", &a));
        expect_six_floats(&a);
        PD_EXPECT_OK(pd_npz_load(path, "b.npy", &b));
        expect_b(&b);
        pd_tensor_release(&a);
        pd_tensor_release(&b);
    }
    tmp_done();
}

PD_TEST(Npz, ReadsArchivesAsNumpySavezWritesThemWithZip64Extras)
{
    static const char *const files[] = {"numpy_style.npz", "numpy_style_compressed.npz"};
    for (int i = 0; i < 2; ++i) {
        char path[512];
        snprintf(path, sizeof path, "%s/tests/cli/%s", PD_TEST_SOURCE_DIR, files[i]);
        pd_tensor a = PD_TENSOR_UNDEFINED, b = PD_TENSOR_UNDEFINED;
        PD_EXPECT_OK(pd_npz_load(path, "a", &a));
        expect_six_floats(&a);
        PD_EXPECT_OK(pd_npz_load(path, "b", &b));
        expect_b(&b);
        pd_tensor_release(&a);
        pd_tensor_release(&b);
    }
}

PD_TEST(Npz, ReadsAnArchiveMadeByTheZipTool)
{
    if (system("command -v zip >/dev/null 2>&1") != 0)
        return; /* no zip tool here: the hand-built archives cover the format */
    unsigned char npy[256];
    size_t n = make_npy(npy, 1, "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", six,
                        sizeof six);
    write_bytes(tmp_path("x.npy"), npy, n);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd %s && zip -q -9 z.npz x.npy", tmp_root);
    PD_ASSERT_EQ(system(cmd), 0);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_OK(pd_npz_load(tmp_path("z.npz"), "x", &t));
    expect_six_floats(&t);
    pd_tensor_release(&t);
    tmp_done();
}

PD_TEST(Npz, RefusesACrcMismatch)
{
    for (int method = 0; method <= 8; method += 8) {
        const char *path = make_npz("crc.npz", method, true);
        pd_tensor t = PD_TENSOR_UNDEFINED;
        PD_EXPECT_ERROR(pd_npz_load(path, "a", &t), PD_ERR_INVALID_ARGUMENT,
                        "CRC-32 mismatch in member 'a.npy'");
        PD_EXPECT(!pd_defined(&t));
    }
    tmp_done();
}

PD_TEST(Npz, MissingMemberIsNotFoundListingTheMembers)
{
    const char *path = make_npz("m.npz", 0, false);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_npz_load(path, "c", &t), PD_ERR_NOT_FOUND,
                    "no member 'c' (members: 'a.npy', 'b.npy')");
    PD_EXPECT_ERROR(pd_npz_load(tmp_path("none.npz"), "a", &t), PD_ERR_NOT_FOUND, "none.npz");
    tmp_done();
}

PD_TEST(Npz, RefusesTruncatedAndNonZipFiles)
{
    const char *path = make_npz("m.npz", 8, false);
    size_t n = 0;
    unsigned char *bytes = read_bytes(path, &n);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    write_bytes(tmp_path("cut.npz"), bytes, n - 30);
    PD_EXPECT_ERROR(pd_npz_load(tmp_path("cut.npz"), "a", &t), PD_ERR_INVALID_ARGUMENT,
                    "no end of central directory");
    write_bytes(tmp_path("tiny.npz"), "PK", 2);
    PD_EXPECT_ERROR(pd_npz_load(tmp_path("tiny.npz"), "a", &t), PD_ERR_INVALID_ARGUMENT,
                    "not a valid .npz");
    bytes[60] ^= 0xff; /* inside a's deflated data */
    write_bytes(tmp_path("bad.npz"), bytes, n);
    PD_EXPECT(pd_npz_load(tmp_path("bad.npz"), "a", &t) == PD_ERR_INVALID_ARGUMENT);
    PD_EXPECT(!pd_defined(&t));
    free(bytes);
    tmp_done();
}

PD_TEST(Npz, ListGivesNamesWithoutTheNpySuffix)
{
    const char *path = make_npz("m.npz", 0, false);
    char **names = NULL;
    int32_t count = 0;
    PD_ASSERT_OK(pd_npz_list(path, &names, &count));
    PD_ASSERT_EQ(count, 2);
    PD_EXPECT_STREQ(names[0], "a");
    PD_EXPECT_STREQ(names[1], "b");
    pd_npz_names_free(names, count);
    tmp_done();
}

PD_TEST(Npz, SaveRoundTripsStoredAndDeflated)
{
    pd_tensor in[3];
    PD_ASSERT_OK(pd_tensor_empty(&in[0], PD_FLOAT32, pd_place_cpu(), 2, (int64_t[]){2, 3}));
    memcpy(in[0].data, six, sizeof six);
    PD_ASSERT_OK(pd_tensor_full(&in[1], PD_COMPLEX128, pd_place_cpu(), 0, NULL, -1.5));
    PD_ASSERT_OK(pd_tensor_zeros(&in[2], PD_UINT16, pd_place_cpu(), 2, (int64_t[]){0, 4}));
    const char *names[3] = {"a", "X@GRAD", "empty.npy"};
    for (int compress = 0; compress <= 1; ++compress) {
        const char *path = tmp_path("out.npz");
        PD_ASSERT_OK(pd_npz_save(path, names, in, 3, compress));
        char **listed = NULL;
        int32_t count = 0;
        PD_ASSERT_OK(pd_npz_list(path, &listed, &count));
        PD_EXPECT(count == 3 && strcmp(listed[1], "X@GRAD") == 0 &&
                  strcmp(listed[2], "empty") == 0);
        pd_npz_names_free(listed, count);
        pd_tensor a = PD_TENSOR_UNDEFINED, c = PD_TENSOR_UNDEFINED, e = PD_TENSOR_UNDEFINED;
        PD_EXPECT_OK(pd_npz_load(path, "a", &a));
        expect_six_floats(&a);
        PD_EXPECT_OK(pd_npz_load(path, "X@GRAD", &c));
        PD_EXPECT(c.dtype == PD_COMPLEX128 && c.ndim == 0 && ((double *)c.data)[0] == -1.5);
        PD_EXPECT_OK(pd_npz_load(path, "empty", &e));
        expect_shape(&e, 2, (int64_t[]){0, 4});
        PD_EXPECT_EQ(e.dtype, PD_UINT16);
        pd_tensor_release(&a);
        pd_tensor_release(&c);
        pd_tensor_release(&e);
        if (system("command -v unzip >/dev/null 2>&1") == 0) { /* another reader agrees */
            char cmd[1024];
            snprintf(cmd, sizeof cmd, "unzip -tqq %s >/dev/null", path);
            PD_EXPECT_EQ(system(cmd), 0);
        }
    }
    for (int i = 0; i < 3; ++i)
        pd_tensor_release(&in[i]);
    tmp_done();
}

PD_TEST(Npz, SaveRefusesDuplicateNamesAndBfloat16LeavingNothing)
{
    pd_tensor t[2];
    PD_ASSERT_OK(pd_tensor_zeros(&t[0], PD_FLOAT32, pd_place_cpu(), 1, (int64_t[]){2}));
    PD_ASSERT_OK(pd_tensor_zeros(&t[1], PD_BFLOAT16, pd_place_cpu(), 1, (int64_t[]){2}));
    const char *dup[2] = {"x", "x.npy"}, *ok[2] = {"x", "y"};
    PD_EXPECT_ERROR(pd_npz_save(tmp_path("d.npz"), dup, t, 2, false), PD_ERR_INVALID_ARGUMENT,
                    "both give member 'x.npy'");
    PD_EXPECT_ERROR(pd_npz_save(tmp_path("d.npz"), ok, t, 2, true), PD_ERR_INVALID_ARGUMENT,
                    "member 'y.npy'");
    PD_EXPECT_CONTAINS(pd_last_error(), "bfloat16");
    PD_EXPECT_EQ(tmp_count(), 0);
    pd_tensor_release(&t[0]);
    pd_tensor_release(&t[1]);
    tmp_done();
}

PD_TEST(Npy, ReadsOneDimensionalArraysFlaggedFortranOrder)
{
    unsigned char buf[256];
    size_t n = make_npy(buf, 1, "{'descr': '<f4', 'fortran_order': True, 'shape': (6,), }", six,
                        sizeof six);
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_OK(pd_npy_load_buffer(buf, n, "f1", &t));
    PD_EXPECT(pd_numel(&t) == 6 && ((float *)t.data)[5] == 6.0f);
    pd_tensor_release(&t);
}

PD_TEST(Npy, RefusesADirectory)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    PD_EXPECT_ERROR(pd_npy_load("/tmp", &t), PD_ERR_INVALID_ARGUMENT, "not a regular file");
}

/* Found by tests/fuzz/fuzz_npz.c: a 191-byte archive whose deflated member "x.npy" claims
 * 0xFFFFFFFF uncompressed bytes (and no zip64 extra) made the reader allocate 4 GiB before
 * looking at the data. Sizes the file cannot hold are now refused before any allocation. */
static const unsigned char fuzz_npz_4gib_member[] =
    {0x50, 0x4b, 0x03, 0x04, 0x14, 0x01, 0x00, 0x00, 0x32, 0x00, 0x00, 0x00, 0x21, 0x00, 0x4e, 0xfb,
     0x20, 0x75, 0x53, 0x00, 0x00, 0x00, 0x90, 0x00, 0x00, 0x00, 0x05, 0x00, 0x00, 0x00, 0x78, 0x2e,
     0x6e, 0x70, 0x79, 0x9b, 0xec, 0x17, 0xea, 0x1b, 0x10, 0xc9, 0xc8, 0x50, 0xc6, 0x50, 0xad, 0x9e,
     0x92, 0x5a, 0x9c, 0x5c, 0xa4, 0x6e, 0xa5, 0xa0, 0x6e, 0x93, 0x66, 0xa2, 0xae, 0xa3, 0xa0, 0x9e,
     0x96, 0x5f, 0x54, 0x52, 0x94, 0x98, 0x17, 0x9f, 0x5f, 0x94, 0x92, 0x0a, 0x12, 0x77, 0x4b, 0xcc,
     0x29, 0x4e, 0x05, 0x8a, 0x17, 0x67, 0x24, 0x16, 0xa4, 0x02, 0xf9, 0x1a, 0x46, 0x3a, 0x0a, 0x46,
     0x9a, 0x3a, 0x0a, 0xb5, 0x0a, 0x64, 0x03, 0x2e, 0x06, 0x86, 0x06, 0x7b, 0x06, 0x06, 0x06, 0x07,
     0x20, 0x02, 0xe2, 0x06, 0x07, 0x00, 0x50, 0x4b, 0x01, 0x02, 0x14, 0x03, 0x14, 0x00, 0x00, 0x00,
     0x08, 0x00, 0x00, 0x00, 0x21, 0x00, 0x4c, 0xfb, 0x20, 0x75, 0x53, 0x00, 0x00, 0x00, 0xff, 0xff,
     0xff, 0xff, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80, 0x01,
     0x00, 0x00, 0x00, 0x00, 0x78, 0x2e, 0x6e, 0x70, 0x79, 0x50, 0x4b, 0x05, 0x06, 0x00, 0x00, 0x00,
     0x00, 0x01, 0x00, 0x01, 0x00, 0x36, 0x00, 0x00, 0x00, 0x76, 0x00, 0x00, 0x00, 0x00, 0x00};

PD_TEST(Npz, RefusesMemberSizesTheFileCannotHoldBeforeAllocating)
{
    pd_tensor t = PD_TENSOR_UNDEFINED;
    write_bytes(tmp_path("big.npz"), fuzz_npz_4gib_member, sizeof fuzz_npz_4gib_member);
    PD_EXPECT_ERROR(pd_npz_load(tmp_path("big.npz"), "x", &t), PD_ERR_INVALID_ARGUMENT,
                    "member sizes are inconsistent or past 4 GiB");
    /* The same member, stored, claiming more bytes than the file has. */
    unsigned char stored[sizeof fuzz_npz_4gib_member];
    memcpy(stored, fuzz_npz_4gib_member, sizeof stored);
    stored[0x76 + 10] = 0; /* central directory (at 0x76): method 0 */
    memcpy(stored + 0x76 + 20, "\xf0\xff\xff\x7f\xf0\xff\xff\x7f", 8); /* csize = usize */
    write_bytes(tmp_path("past.npz"), stored, sizeof stored);
    PD_EXPECT_ERROR(pd_npz_load(tmp_path("past.npz"), "x", &t), PD_ERR_INVALID_ARGUMENT,
                    "member data runs past the end");
    PD_EXPECT(!pd_defined(&t));
    tmp_done();
}
