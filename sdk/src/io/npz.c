/*
 * npz.c - NumPy's .npz archives: a zip file of .npy members, read through its central
 * directory and written in one pass with stored or deflated members.
 *
 * Only what .npz needs of zip: one disk, no encryption, methods 0 (stored) and 8 (deflate),
 * sizes taken from the central directory (numpy writes its members through
 * ZipFile.open(force_zip64=True), whose local headers carry 0xFFFFFFFF sizes and the real ones
 * in a zip64 extra field, so the central directory, with the zip64 extra read when present, is
 * the one reliable source). Every member's CRC-32 is checked before its bytes are believed.
 *
 * Longer than 500 lines because reading and writing share the zip record layouts defined
 * here; split, each half would need them from a header of their own.
 */
#include "io/io_internal.h"
#include "pdext_npy.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define ZIP_LOCAL_SIG 0x04034b50u
#define ZIP_CENTRAL_SIG 0x02014b50u
#define ZIP_END_SIG 0x06054b50u
#define ZIP_LOCAL_LEN 30
#define ZIP_CENTRAL_LEN 46
#define ZIP_END_LEN 22
#define ZIP_MAX_COMMENT 65535
#define ZIP_U32_MAX 0xffffffffu
/* Fixed timestamp (1980-01-01 00:00) so that saving the same tensors gives the same bytes. */
#define ZIP_DOS_TIME 0
#define ZIP_DOS_DATE 0x21

/* One member, from the central directory. */
typedef struct zip_entry {
    char *name;
    uint16_t flags, method;
    uint32_t crc;
    uint64_t csize, usize, offset;
} zip_entry;

typedef struct zip_dir {
    zip_entry *entries;
    int32_t count;
} zip_dir;

static uint16_t get16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get64(const unsigned char *p) { return get32(p) | (uint64_t)get32(p + 4) << 32; }
static unsigned char *put16(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v;
    p[1] = (unsigned char)(v >> 8);
    return p + 2;
}
static unsigned char *put32(unsigned char *p, uint32_t v)
{
    return put16(put16(p, v & 0xffff), v >> 16);
}

static pd_status zip_corrupt(const char *who, const char *path, const char *what)
{
    return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s: not a valid .npz (zip) archive: %s", who,
                    path, what);
}

static pd_status zip_io_error(const char *who, const char *what, const char *path)
{
    int e = errno;
    return pd__fail(e == ENOENT ? PD_ERR_NOT_FOUND : PD_ERR_IO, "%s: cannot %s '%s': %s", who, what,
                    path, e ? strerror(e) : "unexpected end of file");
}

static bool read_at(FILE *fp, uint64_t offset, void *buf, size_t n)
{
    errno = 0;
    return fseeko(fp, (off_t)offset, SEEK_SET) == 0 && fread(buf, 1, n, fp) == n;
}

static void zip_dir_free(zip_dir *d)
{
    for (int32_t i = 0; i < d->count; ++i)
        free(d->entries[i].name);
    free(d->entries);
    d->entries = NULL;
    d->count = 0;
}

/* Replaces 0xFFFFFFFF sizes and offset by the values of the zip64 extra field (id 1). */
static bool zip64_extra(zip_entry *e, const unsigned char *x, size_t len)
{
    while (len >= 4) {
        uint16_t id = get16(x), n = get16(x + 2);
        if ((size_t)n + 4 > len)
            return false;
        if (id == 1) {
            const unsigned char *v = x + 4, *end = x + 4 + n;
            uint64_t *fields[3] = {&e->usize, &e->csize, &e->offset};
            for (int i = 0; i < 3; ++i) {
                if (*fields[i] != ZIP_U32_MAX)
                    continue;
                if (v + 8 > end)
                    return false;
                *fields[i] = get64(v);
                v += 8;
            }
            return true;
        }
        x += 4 + n;
        len -= 4 + (size_t)n;
    }
    return true;
}

/* Parses `n` central directory entries from cd[0..size). */
static pd_status zip_parse_central(const char *who, const char *path, const unsigned char *cd,
                                   size_t size, uint32_t n, zip_dir *d)
{
    d->entries = calloc(n ? n : 1, sizeof *d->entries);
    if (d->entries == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    size_t at = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const unsigned char *p = cd + at;
        if (size - at < ZIP_CENTRAL_LEN || get32(p) != ZIP_CENTRAL_SIG)
            return zip_corrupt(who, path, "bad central directory entry");
        size_t name_len = get16(p + 28), extra_len = get16(p + 30), comment_len = get16(p + 32);
        if (size - at - ZIP_CENTRAL_LEN < name_len + extra_len + comment_len)
            return zip_corrupt(who, path, "central directory entry runs past its end");
        zip_entry *e = &d->entries[d->count];
        e->flags = get16(p + 8);
        e->method = get16(p + 10);
        e->crc = get32(p + 16);
        e->csize = get32(p + 20);
        e->usize = get32(p + 24);
        e->offset = get32(p + 42);
        if (!zip64_extra(e, p + ZIP_CENTRAL_LEN + name_len, extra_len))
            return zip_corrupt(who, path, "malformed zip64 extra field");
        if ((e->name = malloc(name_len + 1)) == NULL)
            return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
        memcpy(e->name, p + ZIP_CENTRAL_LEN, name_len);
        e->name[name_len] = '\0';
        d->count++;
        at += ZIP_CENTRAL_LEN + name_len + extra_len + comment_len;
    }
    return PD_OK;
}

/* Finds the end record (it may be followed by a comment of up to 64 KiB) and reads the
 * central directory it points at. */
static pd_status zip_read_dir(const char *who, const char *path, FILE *fp, zip_dir *d)
{
    struct stat sb;
    memset(d, 0, sizeof *d);
    if (fstat(fileno(fp), &sb) != 0)
        return zip_io_error(who, "stat", path);
    uint64_t fsize = (uint64_t)sb.st_size;
    size_t tail = fsize < ZIP_END_LEN + ZIP_MAX_COMMENT ? (size_t)fsize
                                                        : ZIP_END_LEN + ZIP_MAX_COMMENT;
    if (tail < ZIP_END_LEN)
        return zip_corrupt(who, path, "too short to hold a zip end record (truncated?)");
    unsigned char *buf = malloc(tail);
    if (buf == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    pd_status st = PD_OK;
    const unsigned char *end = NULL;
    if (!read_at(fp, fsize - tail, buf, tail)) {
        st = zip_io_error(who, "read", path);
        goto done;
    }
    for (size_t i = tail - ZIP_END_LEN + 1; i-- > 0;)
        if (get32(buf + i) == ZIP_END_SIG) {
            end = buf + i;
            break;
        }
    if (end == NULL) {
        st = zip_corrupt(who, path, "no end of central directory record (truncated?)");
        goto done;
    }
    uint32_t n = get16(end + 10), cd_size = get32(end + 12), cd_offset = get32(end + 16);
    if (n == 0xffff || cd_size == ZIP_U32_MAX || cd_offset == ZIP_U32_MAX) {
        st = pd__fail(PD_ERR_INVALID_ARGUMENT,
                      "%s: %s: zip64 archives (over 65535 members or 4 GiB) are not supported", who,
                      path);
        goto done;
    }
    if (get16(end + 4) != 0 || get16(end + 8) != n || (uint64_t)cd_offset + cd_size > fsize) {
        st = zip_corrupt(who, path, "central directory out of bounds or split over disks");
        goto done;
    }
    unsigned char *cd = malloc(cd_size ? cd_size : 1);
    if (cd == NULL) {
        st = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
        goto done;
    }
    if (!read_at(fp, cd_offset, cd, cd_size))
        st = zip_io_error(who, "read", path);
    else
        st = zip_parse_central(who, path, cd, cd_size, n, d);
    free(cd);
    if (st != PD_OK)
        zip_dir_free(d);
done:
    free(buf);
    return st;
}

/* Reads and opens the archive's directory; on failure nothing is left open. */
static pd_status zip_open(const char *who, const char *path, FILE **fp, zip_dir *d)
{
    *fp = fopen(path, "rb");
    if (*fp == NULL)
        return zip_io_error(who, "open", path);
    pd_status st = zip_read_dir(who, path, *fp, d);
    if (st != PD_OK)
        fclose(*fp);
    return st;
}

static bool has_npy_suffix(const char *name)
{
    size_t n = strlen(name);
    return n >= 4 && strcmp(name + n - 4, ".npy") == 0;
}

/* The entry named `member` or `member`.npy. */
static const zip_entry *zip_find(const zip_dir *d, const char *member)
{
    size_t n = strlen(member);
    for (int32_t i = 0; i < d->count; ++i) {
        const char *name = d->entries[i].name;
        if (strcmp(name, member) == 0 ||
            (strncmp(name, member, n) == 0 && strcmp(name + n, ".npy") == 0))
            return &d->entries[i];
    }
    return NULL;
}

/* Inflates raw deflate data (no zlib header, as zip stores it) into out[0..usize). */
static bool inflate_raw(const unsigned char *in, uint64_t csize, unsigned char *out, uint64_t usize)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
        return false;
    zs.next_in = (unsigned char *)in;
    zs.avail_in = (uInt)csize;
    zs.next_out = out;
    zs.avail_out = (uInt)usize;
    int rc = inflate(&zs, Z_FINISH);
    bool ok = rc == Z_STREAM_END && zs.total_out == usize;
    inflateEnd(&zs);
    return ok;
}

/* The member's uncompressed bytes (malloc'd), CRC checked. */
static pd_status zip_extract(const char *who, const char *path, FILE *fp, const zip_entry *e,
                             unsigned char **out)
{
    unsigned char local[ZIP_LOCAL_LEN];
    if (e->flags & 1)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s: member '%s' is encrypted", who, path,
                        e->name);
    if (e->method != 0 && e->method != 8)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: member '%s' uses zip compression method %u (supported: 0 "
                        "stored, 8 deflate)",
                        who, path, e->name, e->method);
    if (e->usize > ZIP_U32_MAX || e->csize > ZIP_U32_MAX ||
        (e->method == 0 && e->csize != e->usize))
        return zip_corrupt(who, path, "member sizes are inconsistent or past 4 GiB");
    if (!read_at(fp, e->offset, local, sizeof local))
        return zip_io_error(who, "read", path);
    if (get32(local) != ZIP_LOCAL_SIG)
        return zip_corrupt(who, path, "bad local header");
    uint64_t data_at = e->offset + ZIP_LOCAL_LEN + get16(local + 26) + get16(local + 28);
    /* Checked before anything is allocated, so that a few corrupt bytes cannot cost 4 GiB:
     * the data lies inside the file, and deflate expands at most 1032:1. */
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0)
        return zip_io_error(who, "stat", path);
    if (data_at > (uint64_t)sb.st_size || e->csize > (uint64_t)sb.st_size - data_at)
        return zip_corrupt(who, path, "member data runs past the end (truncated?)");
    if (e->method == 8 && e->usize / 1032 > e->csize)
        return zip_corrupt(who, path, "member sizes are inconsistent or past 4 GiB");
    unsigned char *raw = malloc(e->csize ? e->csize : 1);
    unsigned char *data = e->method == 0 ? raw : malloc(e->usize ? e->usize : 1);
    pd_status st = PD_OK;
    if (raw == NULL || data == NULL) {
        st = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    } else if (!read_at(fp, data_at, raw, e->csize)) {
        st = errno ? zip_io_error(who, "read", path)
                   : zip_corrupt(who, path, "member data runs past the end (truncated?)");
    } else if (e->method == 8 && !inflate_raw(raw, e->csize, data, e->usize)) {
        st = pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s: member '%s': corrupt deflate data", who,
                      path, e->name);
    } else {
        uint32_t crc = (uint32_t)crc32(0L, data, (uInt)e->usize);
        if (crc != e->crc)
            st = pd__fail(PD_ERR_INVALID_ARGUMENT,
                          "%s: %s: CRC-32 mismatch in member '%s' (recorded 0x%08x, computed "
                          "0x%08x): the archive is corrupt",
                          who, path, e->name, e->crc, crc);
    }
    if (data != raw)
        free(raw);
    if (st != PD_OK) {
        free(data);
        return st;
    }
    *out = data;
    return PD_OK;
}

/* One member as written: sizes, CRC and, when deflated, the compressed bytes. */
typedef struct npz_member {
    char *name;
    uint32_t crc, csize, usize, offset;
    uint16_t method;
} npz_member;

/* Deflates header + data into a malloc'd buffer. */
static pd_status deflate_member(const char *who, const char *header, size_t hlen,
                                const pd_tensor *t, unsigned char **out, uint32_t *csize)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: zlib deflateInit2 failed", who);
    uLong bound = deflateBound(&zs, (uLong)(hlen + pd_nbytes(t)));
    unsigned char *buf = bound <= ZIP_U32_MAX ? malloc(bound) : NULL;
    if (buf == NULL) {
        deflateEnd(&zs);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
    zs.next_out = buf;
    zs.avail_out = (uInt)bound;
    zs.next_in = (unsigned char *)header;
    zs.avail_in = (uInt)hlen;
    int rc = deflate(&zs, Z_NO_FLUSH);
    zs.next_in = pd_nbytes(t) ? t->data : (unsigned char *)"";
    zs.avail_in = (uInt)pd_nbytes(t);
    if (rc == Z_OK)
        rc = deflate(&zs, Z_FINISH);
    *csize = (uint32_t)zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(buf);
        return pd__fail(PD_ERR_INTERNAL, "%s: zlib deflate failed (%d)", who, rc);
    }
    *out = buf;
    return PD_OK;
}

/* Writes one member's local header and bytes at the current end of the archive. */
static pd_status write_member(const char *who, const char *path, FILE *fp, uint64_t *pos,
                              npz_member *m, const pd_tensor *t, bool compress)
{
    char header[PD__NPY_HEADER_MAX];
    size_t hlen = pd__npy_header_format(t, header, sizeof header);
    size_t bytes = pd_nbytes(t);
    if (hlen == 0 || bytes > ZIP_U32_MAX - hlen || *pos > ZIP_U32_MAX)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: member '%s' or the archive exceeds 4 GiB (zip64 is not "
                        "written)",
                        who, path, m->name);
    m->usize = (uint32_t)(hlen + bytes);
    m->crc = (uint32_t)crc32(crc32(0L, (const unsigned char *)header, (uInt)hlen),
                             bytes ? t->data : (const void *)"", (uInt)bytes);
    m->offset = (uint32_t)*pos;
    m->method = compress ? 8 : 0;
    unsigned char *deflated = NULL;
    m->csize = m->usize;
    if (compress) {
        pd_status st = deflate_member(who, header, hlen, t, &deflated, &m->csize);
        if (st != PD_OK)
            return st;
    }
    unsigned char lh[ZIP_LOCAL_LEN], *p = lh;
    p = put32(p, ZIP_LOCAL_SIG);
    p = put16(p, 20); /* version needed: 2.0 */
    p = put16(p, 0);
    p = put16(p, m->method);
    p = put16(p, ZIP_DOS_TIME);
    p = put16(p, ZIP_DOS_DATE);
    p = put32(p, m->crc);
    p = put32(p, m->csize);
    p = put32(p, m->usize);
    p = put16(p, (uint32_t)strlen(m->name));
    put16(p, 0);
    size_t name_len = strlen(m->name);
    bool ok = fwrite(lh, 1, sizeof lh, fp) == sizeof lh &&
              fwrite(m->name, 1, name_len, fp) == name_len;
    if (compress)
        ok = ok && fwrite(deflated, 1, m->csize, fp) == m->csize;
    else
        ok = ok && fwrite(header, 1, hlen, fp) == hlen &&
             (!bytes || fwrite(t->data, 1, bytes, fp) == bytes);
    free(deflated);
    if (!ok)
        return zip_io_error(who, "write", path);
    *pos += sizeof lh + name_len + m->csize;
    return PD_OK;
}

/* The central directory and end record after the members. */
static pd_status write_directory(const char *who, const char *path, FILE *fp, uint64_t pos,
                                 const npz_member *m, int32_t n)
{
    uint64_t cd_start = pos;
    for (int32_t i = 0; i < n; ++i) {
        unsigned char ch[ZIP_CENTRAL_LEN], *p = ch;
        size_t name_len = strlen(m[i].name);
        p = put32(p, ZIP_CENTRAL_SIG);
        p = put16(p, 3u << 8 | 20); /* made by: Unix, 2.0 (so the mode below means something) */
        p = put16(p, 20);
        p = put16(p, 0);
        p = put16(p, m[i].method);
        p = put16(p, ZIP_DOS_TIME);
        p = put16(p, ZIP_DOS_DATE);
        p = put32(p, m[i].crc);
        p = put32(p, m[i].csize);
        p = put32(p, m[i].usize);
        p = put16(p, (uint32_t)name_len);
        p = put16(p, 0);              /* extra */
        p = put16(p, 0);              /* comment */
        p = put16(p, 0);              /* disk */
        p = put16(p, 0);              /* internal attributes */
        p = put32(p, 0100644u << 16); /* regular file, rw-r--r-- */
        put32(p, m[i].offset);
        if (fwrite(ch, 1, sizeof ch, fp) != sizeof ch ||
            fwrite(m[i].name, 1, name_len, fp) != name_len)
            return zip_io_error(who, "write", path);
        pos += sizeof ch + name_len;
    }
    if (pos > ZIP_U32_MAX || n > 0xfffe)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: the archive exceeds 4 GiB or 65534 members (zip64 is not "
                        "written)",
                        who, path);
    unsigned char end[ZIP_END_LEN], *p = end;
    p = put32(p, ZIP_END_SIG);
    p = put16(p, 0);
    p = put16(p, 0);
    p = put16(p, (uint32_t)n);
    p = put16(p, (uint32_t)n);
    p = put32(p, (uint32_t)(pos - cd_start));
    p = put32(p, (uint32_t)cd_start);
    put16(p, 0);
    if (fwrite(end, 1, sizeof end, fp) != sizeof end)
        return zip_io_error(who, "write", path);
    return PD_OK;
}

/* Member names: "<name>.npy", checked non-empty and distinct. */
static pd_status npz_names(const char *who, const char *const *names, int32_t n, npz_member *m)
{
    for (int32_t i = 0; i < n; ++i) {
        const char *s = names[i];
        if (s == NULL || s[0] == '\0' || strlen(s) > 60000)
            return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: names[%d] is NULL, empty or too long",
                            who, (int)i);
        size_t len = strlen(s);
        if ((m[i].name = malloc(len + 5)) == NULL)
            return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
        snprintf(m[i].name, len + 5, has_npy_suffix(s) ? "%s" : "%s.npy", s);
        for (int32_t j = 0; j < i; ++j)
            if (strcmp(m[i].name, m[j].name) == 0)
                return pd__fail(PD_ERR_INVALID_ARGUMENT,
                                "%s: names[%d] and names[%d] both give member '%s'", who, (int)j,
                                (int)i, m[i].name);
    }
    return PD_OK;
}

/* --- Public functions ---------------------------------------------------------------------- */

pd_status pd_npz_load(const char *path, const char *member, pd_tensor *out)
{
    static const char who[] = "pd_npz_load";
    if (path == NULL || member == NULL || out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: path, member and out must not be NULL", who);
    FILE *fp;
    zip_dir d;
    pd_status st = zip_open(who, path, &fp, &d);
    if (st != PD_OK)
        return st;
    const zip_entry *e = zip_find(&d, member);
    unsigned char *bytes = NULL;
    if (e == NULL) {
        char names[256] = "";
        size_t at = 0;
        for (int32_t i = 0; i < d.count && at < sizeof names; ++i)
            at += (size_t)snprintf(names + at, sizeof names - at, "%s'%s'", i ? ", " : "",
                                   d.entries[i].name);
        st = pd__fail(PD_ERR_NOT_FOUND, "%s: %s has no member '%s' (members: %s)", who, path,
                      member, d.count ? names : "none");
    } else if ((st = zip_extract(who, path, fp, e, &bytes)) == PD_OK) {
        char origin[512];
        snprintf(origin, sizeof origin, "%s:%s", path, e->name);
        st = pd__npy_parse(who, origin, bytes, e->usize, out);
        free(bytes);
    }
    zip_dir_free(&d);
    fclose(fp);
    return st;
}

pd_status pd_npz_list(const char *path, char ***names, int32_t *count)
{
    static const char who[] = "pd_npz_list";
    if (path == NULL || names == NULL || count == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: path, names and count must not be NULL", who);
    FILE *fp;
    zip_dir d;
    pd_status st = zip_open(who, path, &fp, &d);
    if (st != PD_OK)
        return st;
    fclose(fp);
    char **list = malloc(sizeof *list * (size_t)(d.count ? d.count : 1));
    if (list == NULL) {
        zip_dir_free(&d);
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    }
    /* The directory's names become the caller's strings, stripped of ".npy". */
    for (int32_t i = 0; i < d.count; ++i) {
        list[i] = d.entries[i].name;
        if (has_npy_suffix(list[i]))
            list[i][strlen(list[i]) - 4] = '\0';
        d.entries[i].name = NULL;
    }
    *names = list;
    *count = d.count;
    zip_dir_free(&d);
    return PD_OK;
}

void pd_npz_names_free(char **names, int32_t count)
{
    if (names == NULL)
        return;
    for (int32_t i = 0; i < count; ++i)
        free(names[i]);
    free(names);
}

pd_status pd_npz_save(const char *path, const char *const *names, const pd_tensor *tensors,
                      int32_t n, bool compress)
{
    static const char who[] = "pd_npz_save";
    if (path == NULL || n < 0 || (n > 0 && (names == NULL || tensors == NULL)))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: path, names and tensors must not be NULL and n >= 0", who);
    npz_member *m = calloc((size_t)(n ? n : 1), sizeof *m);
    if (m == NULL)
        return pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
    pd_status st = npz_names(who, names, n, m);
    for (int32_t i = 0; i < n && st == PD_OK; ++i) {
        char named[128];
        snprintf(named, sizeof named, "%s: member '%.80s'", who, m[i].name);
        st = pd__npy_check_savable(named, &tensors[i]);
    }
    pd__atomic_file f = {0};
    if (st == PD_OK)
        st = pd__atomic_open(who, path, 0666, &f);
    if (st == PD_OK) {
        uint64_t pos = 0;
        for (int32_t i = 0; i < n && st == PD_OK; ++i)
            st = write_member(who, path, f.fp, &pos, &m[i], &tensors[i], compress);
        if (st == PD_OK)
            st = write_directory(who, path, f.fp, pos, m, n);
        if (st == PD_OK)
            st = pd__atomic_commit(who, &f);
        else
            pd__atomic_abort(&f);
    }
    for (int32_t i = 0; i < n; ++i)
        free(m[i].name);
    free(m);
    return st;
}
