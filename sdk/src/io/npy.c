/*
 * npy.c - NumPy's .npy format: parsing and writing the header (a Python dict literal), reading
 * and writing whole files (through atomic_file.c).
 *
 * The header parser is deliberately strict: it accepts exactly the dict numpy writes (keys
 * 'descr', 'fortran_order' and 'shape' in any order, quoted with ' or ", an optional trailing
 * comma) and refuses everything else with a message saying what it found, because a silently
 * misread array is worse than no array.
 *
 * Just over 500 lines: the strict header parser and the writer that must produce exactly
 * what it accepts are kept together.
 */
#include "io/io_internal.h"
#include "pdext_npy.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "npy.c assumes a little-endian host: .npy data is read and written as is"
#endif

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
#define NPY_ALIGN 64

/* numpy's descr of each pdext dtype; NULL where numpy has none. */
static const char *const npy_descrs[PD_NUM_DTYPES] =
    {[PD_BOOL] = "|b1",      [PD_INT8] = "|i1",       [PD_UINT8] = "|u1",   [PD_INT16] = "<i2",
     [PD_UINT16] = "<u2",    [PD_INT32] = "<i4",      [PD_UINT32] = "<u4",  [PD_INT64] = "<i8",
     [PD_UINT64] = "<u8",    [PD_FLOAT16] = "<f2",    [PD_FLOAT32] = "<f4", [PD_FLOAT64] = "<f8",
     [PD_COMPLEX64] = "<c8", [PD_COMPLEX128] = "<c16"};

/* What a parsed header says. */
typedef struct npy_header {
    char descr[64];
    bool fortran_order;
    int32_t ndim;
    int64_t shape[PD_MAX_DIMS];
} npy_header;

/* A cursor over the header dict, with the names used in messages. */
typedef struct npy_parser {
    const char *who, *origin;
    const char *p, *end, *start;
} npy_parser;

static pd_status npy_malformed(const npy_parser *ps, const char *expected)
{
    size_t at = (size_t)(ps->p - ps->start);
    char found[24] = "end of header";
    if (ps->p < ps->end) {
        size_t n = (size_t)(ps->end - ps->p) < 16 ? (size_t)(ps->end - ps->p) : 16;
        found[0] = '"';
        memcpy(found + 1, ps->p, n);
        found[n + 1] = '"';
        found[n + 2] = '\0';
    }
    return pd__fail(PD_ERR_INVALID_ARGUMENT,
                    "%s: %s: malformed .npy header: expected %s at offset %zu of the dict, "
                    "found %s",
                    ps->who, ps->origin, expected, at, found);
}

static void npy_skip_space(npy_parser *ps)
{
    while (ps->p < ps->end && (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static bool npy_accept(npy_parser *ps, char c)
{
    npy_skip_space(ps);
    if (ps->p < ps->end && *ps->p == c) {
        ps->p++;
        return true;
    }
    return false;
}

/* A quoted Python string without escapes (numpy never writes any in these fields). */
static pd_status npy_string(npy_parser *ps, char *buf, size_t cap)
{
    npy_skip_space(ps);
    if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"'))
        return npy_malformed(ps, "a quoted string");
    char quote = *ps->p++;
    const char *s = ps->p;
    while (ps->p < ps->end && *ps->p != quote && *ps->p != '\\')
        ps->p++;
    if (ps->p >= ps->end || *ps->p != quote)
        return npy_malformed(ps, "the end of a quoted string");
    size_t n = (size_t)(ps->p - s);
    if (n >= cap)
        return npy_malformed(ps, "a shorter string");
    memcpy(buf, s, n);
    buf[n] = '\0';
    ps->p++;
    return PD_OK;
}

static pd_status npy_bool(npy_parser *ps, bool *out)
{
    npy_skip_space(ps);
    size_t left = (size_t)(ps->end - ps->p);
    if (left >= 4 && memcmp(ps->p, "True", 4) == 0) {
        ps->p += 4;
        *out = true;
        return PD_OK;
    }
    if (left >= 5 && memcmp(ps->p, "False", 5) == 0) {
        ps->p += 5;
        *out = false;
        return PD_OK;
    }
    return npy_malformed(ps, "True or False");
}

/* "(2, 3)", "(3,)" or "()". */
static pd_status npy_shape(npy_parser *ps, npy_header *h)
{
    if (!npy_accept(ps, '('))
        return npy_malformed(ps, "'(' opening the shape tuple");
    h->ndim = 0;
    while (!npy_accept(ps, ')')) {
        npy_skip_space(ps);
        if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
            return npy_malformed(ps, "a non-negative dimension or ')'");
        int64_t v = 0;
        while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
            if (v > (INT64_MAX - 9) / 10)
                return npy_malformed(ps, "a dimension that fits in 64 bits");
            v = v * 10 + (*ps->p++ - '0');
        }
        if (ps->p < ps->end && *ps->p == 'L') /* Python 2 longs */
            ps->p++;
        if (h->ndim == PD_MAX_DIMS)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: %s: the array has more than %d dimensions (PD_MAX_DIMS)", ps->who,
                            ps->origin, PD_MAX_DIMS);
        h->shape[h->ndim++] = v;
        if (!npy_accept(ps, ',')) {
            if (!npy_accept(ps, ')'))
                return npy_malformed(ps, "',' or ')' in the shape tuple");
            break;
        }
    }
    return PD_OK;
}

static pd_status npy_parse_dict(npy_parser *ps, npy_header *h)
{
    bool seen_descr = false, seen_fortran = false, seen_shape = false;
    pd_status st;
    if (!npy_accept(ps, '{'))
        return npy_malformed(ps, "'{' opening the header dict");
    while (!npy_accept(ps, '}')) {
        char key[32];
        if ((st = npy_string(ps, key, sizeof key)) != PD_OK)
            return st;
        if (!npy_accept(ps, ':'))
            return npy_malformed(ps, "':' after a key");
        if (strcmp(key, "descr") == 0 && !seen_descr) {
            npy_skip_space(ps);
            if (ps->p < ps->end && *ps->p == '[')
                return pd__fail(PD_ERR_INVALID_ARGUMENT,
                                "%s: %s: structured arrays (a list descr) are not supported",
                                ps->who, ps->origin);
            st = npy_string(ps, h->descr, sizeof h->descr);
            seen_descr = true;
        } else if (strcmp(key, "fortran_order") == 0 && !seen_fortran) {
            st = npy_bool(ps, &h->fortran_order);
            seen_fortran = true;
        } else if (strcmp(key, "shape") == 0 && !seen_shape) {
            st = npy_shape(ps, h);
            seen_shape = true;
        } else {
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: %s: malformed .npy header: unexpected or repeated key '%s' "
                            "(expected 'descr', 'fortran_order' and 'shape')",
                            ps->who, ps->origin, key);
        }
        if (st != PD_OK)
            return st;
        if (!npy_accept(ps, ',')) {
            if (!npy_accept(ps, '}'))
                return npy_malformed(ps, "',' or '}' after a value");
            break;
        }
    }
    npy_skip_space(ps);
    if (ps->p != ps->end)
        return npy_malformed(ps, "only padding after the dict");
    if (!seen_descr || !seen_fortran || !seen_shape)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s: malformed .npy header: missing key '%s'",
                        ps->who, ps->origin,
                        !seen_descr     ? "descr"
                        : !seen_fortran ? "fortran_order"
                                        : "shape");
    return PD_OK;
}

/* Maps a descr to a dtype, or explains why it cannot. */
static pd_status npy_dtype_of(const char *who, const char *origin, const char *descr,
                              pd_data_type *out)
{
    char order = descr[0];
    const char *code = descr + 1;
    if (order != '<' && order != '>' && order != '|' && order != '=') {
        order = '|';
        code = descr;
    }
    if (code[0] == 'O')
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: object arrays ('%s') are not supported: they hold pickled "
                        "Python objects, not numbers",
                        who, origin, descr);
    if (strcmp(code, "?") == 0)
        code = "b1";
    for (int t = 1; t < PD_NUM_DTYPES; ++t) {
        if (npy_descrs[t] == NULL || strcmp(npy_descrs[t] + 1, code) != 0)
            continue;
        if (order == '>' && pd_dtype_size((pd_data_type)t) > 1)
            return pd__fail(PD_ERR_INVALID_ARGUMENT,
                            "%s: %s: big-endian data ('%s') is not supported; convert it with "
                            "arr.astype('<%s')",
                            who, origin, descr, code);
        *out = (pd_data_type)t;
        return PD_OK;
    }
    return pd__fail(PD_ERR_INVALID_ARGUMENT,
                    "%s: %s: unsupported dtype '%s' (supported: bool, int8..int64, "
                    "uint8..uint64, float16, float32, float64, complex64, complex128)",
                    who, origin, descr);
}

/* Checks magic, version and header length of a preamble of `avail` bytes; on success
 * *header / *header_len locate the dict and *data_offset the first element. */
static pd_status npy_preamble(const char *who, const char *origin, const unsigned char *b,
                              size_t avail, size_t *header_len, size_t *data_offset)
{
    if (avail < NPY_MAGIC_LEN || memcmp(b, NPY_MAGIC, NPY_MAGIC_LEN) != 0)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s: not a .npy file (no \\x93NUMPY magic)%s",
                        who, origin, avail < NPY_MAGIC_LEN ? ": truncated" : "");
    if (avail < NPY_MAGIC_LEN + 2)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s: truncated .npy header (no version)", who,
                        origin);
    unsigned major = b[6], minor = b[7];
    size_t len_bytes = major == 1 ? 2 : (major == 2 || major == 3) ? 4 : 0;
    if (len_bytes == 0 || minor != 0)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: unsupported .npy format version %u.%u (supported: 1.0, 2.0, "
                        "3.0)",
                        who, origin, major, minor);
    if (avail < 8 + len_bytes)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s: truncated .npy header (no header length)",
                        who, origin);
    size_t len = (size_t)b[8] | (size_t)b[9] << 8;
    if (len_bytes == 4)
        len |= (size_t)b[10] << 16 | (size_t)b[11] << 24;
    *header_len = len;
    *data_offset = 8 + len_bytes + len;
    return PD_OK;
}

/* Parses the dict of `len` bytes and checks it describes an array pdext can hold. */
static pd_status npy_parse_header(const char *who, const char *origin, const char *dict, size_t len,
                                  pd_data_type *dtype, npy_header *h)
{
    npy_parser ps = {who, origin, dict, dict + len, dict};
    memset(h, 0, sizeof *h);
    pd_status st = npy_parse_dict(&ps, h);
    if (st != PD_OK)
        return st;
    if ((st = npy_dtype_of(who, origin, h->descr, dtype)) != PD_OK)
        return st;
    /* A 0-d or 1-D array is the same in either order; from 2 dims on, reading Fortran-order
     * data as C order would transpose it silently. */
    if (h->fortran_order && h->ndim > 1)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: Fortran-order arrays (fortran_order: True) are not "
                        "supported; save a C-order array (np.ascontiguousarray)",
                        who, origin);
    return PD_OK;
}

/* "(2, 3)" into buf, for messages. */
static const char *npy_shape_str(const int64_t *shape, int32_t ndim, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "(");
    for (int32_t i = 0; i < ndim && n < cap; ++i)
        n += (size_t)snprintf(buf + n, cap - n, i ? ", %" PRId64 : "%" PRId64, shape[i]);
    if (n < cap)
        snprintf(buf + n, cap - n, ndim == 1 ? ",)" : ")");
    return buf;
}

/* A new CPU tensor for the header, with the data size checked against `data_bytes`. */
static pd_status npy_make_tensor(const char *who, const char *origin, pd_data_type dtype,
                                 const npy_header *h, uint64_t data_bytes, pd_tensor *out)
{
    size_t need;
    char shape[PD_MAX_DIMS * 22 + 8];
    npy_shape_str(h->shape, h->ndim, shape, sizeof shape);
    if (pd__shape_check(who, dtype, h->ndim, h->shape, &need) != PD_OK)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: %s: shape %s of %s is too large", who, origin,
                        shape, pd_dtype_name(dtype));
    if ((uint64_t)need != data_bytes)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: shape %s of %s needs %zu data bytes but the file holds "
                        "%" PRIu64 " (%s)",
                        who, origin, shape, pd_dtype_name(dtype), need, data_bytes,
                        (uint64_t)need > data_bytes ? "truncated data" : "trailing bytes");
    return pd_tensor_empty(out, dtype, pd_place_cpu(), h->ndim, h->shape);
}

static pd_status npy_io_error(const char *who, const char *what, const char *path)
{
    int e = errno;
    return pd__fail(e == ENOENT ? PD_ERR_NOT_FOUND : PD_ERR_IO, "%s: cannot %s '%s': %s", who, what,
                    path, strerror(e));
}

/* --- Shared with npz.c --------------------------------------------------------------------- */

pd_status pd__npy_check_savable(const char *who, const pd_tensor *t)
{
    if (t == NULL || !pd_initialized(t))
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: the tensor is undefined or has no memory",
                        who);
    if (t->dtype == PD_BFLOAT16)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: bfloat16 has no NumPy dtype, so it cannot be saved as .npy; cast "
                        "it to float32 first (pd_tensor_cast)",
                        who);
    if (pd_npy_descr(t->dtype) == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: dtype %s has no NumPy equivalent", who,
                        pd_dtype_name(t->dtype));
    if (!pd_place_is_host(t->place))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the tensor is on %s, not in host memory; copy it to the CPU "
                        "first (pd_tensor_copy_to)",
                        who, pd_place_type_name(&t->place));
    /* The writers copy pd_nbytes from data: only a dense tensor inside its storage is that. */
    if (!pd_is_contiguous(t))
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: the tensor is a strided view; make it contiguous first "
                        "(pd_tensor_contiguous)",
                        who);
    return pd__tensor_check_bounds(who, "the tensor", t);
}

size_t pd__npy_header_format(const pd_tensor *t, char *buf, size_t cap)
{
    char shape[PD_MAX_DIMS * 22 + 8];
    npy_shape_str(t->shape, t->ndim, shape, sizeof shape);
    char dict[PD__NPY_HEADER_MAX];
    int n = snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }",
                     pd_npy_descr(t->dtype), shape);
    size_t total = 10 + (size_t)n + 1; /* preamble, dict, '\n' */
    total = (total + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
    if (n < 0 || total > cap)
        return 0;
    size_t header_len = total - 10;
    memcpy(buf, NPY_MAGIC "\x01\x00", 8);
    buf[8] = (char)(header_len & 0xff);
    buf[9] = (char)(header_len >> 8);
    memcpy(buf + 10, dict, (size_t)n);
    memset(buf + 10 + n, ' ', total - 10 - (size_t)n - 1);
    buf[total - 1] = '\n';
    return total;
}

pd_status pd__npy_parse(const char *who, const char *origin, const void *data, size_t size,
                        pd_tensor *out)
{
    const unsigned char *b = data;
    size_t header_len = 0, offset = 0; /* set by the header reader; -O3 cannot see it */
    pd_data_type dtype;
    npy_header h;
    pd_status st = npy_preamble(who, origin, b, size, &header_len, &offset);
    if (st != PD_OK)
        return st;
    if (offset > size)
        return pd__fail(PD_ERR_INVALID_ARGUMENT,
                        "%s: %s: truncated .npy header (%zu header bytes announced, %zu present)",
                        who, origin, header_len, size - (offset - header_len));
    st = npy_parse_header(who, origin, (const char *)b + offset - header_len, header_len, &dtype,
                          &h);
    if (st != PD_OK)
        return st;
    pd_tensor t;
    if ((st = npy_make_tensor(who, origin, dtype, &h, size - offset, &t)) != PD_OK)
        return st;
    if (pd_nbytes(&t))
        memcpy(t.data, b + offset, pd_nbytes(&t));
    *out = t;
    return PD_OK;
}

/* --- Public functions ---------------------------------------------------------------------- */

const char *pd_npy_descr(pd_data_type dtype)
{
    return ((unsigned)dtype < PD_NUM_DTYPES) ? npy_descrs[dtype] : NULL;
}

pd_status pd_npy_load_buffer(const void *data, size_t size, const char *origin, pd_tensor *out)
{
    static const char who[] = "pd_npy_load_buffer";
    if ((data == NULL && size) || out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: data and out must not be NULL", who);
    return pd__npy_parse(who, origin ? origin : "(buffer)", data, size, out);
}

pd_status pd_npy_load(const char *path, pd_tensor *out)
{
    static const char who[] = "pd_npy_load";
    if (path == NULL || out == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: path and out must not be NULL", who);
    FILE *fp = fopen(path, "rb");
    if (fp == NULL)
        return npy_io_error(who, "open", path);
    pd_status st;
    struct stat sb;
    unsigned char pre[12];
    size_t got = fread(pre, 1, sizeof pre, fp);
    size_t header_len = 0, offset = 0; /* set by the header reader; -O3 cannot see it */
    char *dict = NULL;
    pd_data_type dtype;
    npy_header h;
    pd_tensor t = PD_TENSOR_UNDEFINED;
    if (fstat(fileno(fp), &sb) != 0) {
        st = npy_io_error(who, "stat", path);
        goto done;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: '%s' is not a regular file", who, path);
        goto done;
    }
    if ((st = npy_preamble(who, path, pre, got, &header_len, &offset)) != PD_OK)
        goto done;
    if ((uint64_t)offset > (uint64_t)sb.st_size) {
        st = pd__fail(PD_ERR_INVALID_ARGUMENT,
                      "%s: %s: truncated .npy header (%zu header bytes announced, %lld present)",
                      who, path, header_len,
                      (long long)sb.st_size - (long long)(offset - header_len));
        goto done;
    }
    if ((dict = malloc(header_len + 1)) == NULL) {
        st = pd__fail(PD_ERR_OUT_OF_MEMORY, "%s: out of memory", who);
        goto done;
    }
    if (fseek(fp, (long)(offset - header_len), SEEK_SET) != 0 ||
        fread(dict, 1, header_len, fp) != header_len) {
        st = npy_io_error(who, "read", path);
        goto done;
    }
    if ((st = npy_parse_header(who, path, dict, header_len, &dtype, &h)) != PD_OK)
        goto done;
    if ((st = npy_make_tensor(who, path, dtype, &h, (uint64_t)sb.st_size - offset, &t)) != PD_OK)
        goto done;
    if (pd_nbytes(&t) && fread(t.data, 1, pd_nbytes(&t), fp) != pd_nbytes(&t)) {
        st = npy_io_error(who, "read", path);
        pd_tensor_release(&t);
        goto done;
    }
    *out = t;
done:
    free(dict);
    fclose(fp);
    return st;
}

pd_status pd_npy_save(const char *path, const pd_tensor *t)
{
    static const char who[] = "pd_npy_save";
    if (path == NULL)
        return pd__fail(PD_ERR_INVALID_ARGUMENT, "%s: path must not be NULL", who);
    pd_status st = pd__npy_check_savable(who, t);
    if (st == PD_OK)
        st = pd__tensor_ready(t); /* an async call may still be writing it */
    if (st != PD_OK)
        return st;
    char header[PD__NPY_HEADER_MAX];
    size_t n = pd__npy_header_format(t, header, sizeof header);
    if (n == 0)
        return pd__fail(PD_ERR_INTERNAL, "%s: header does not fit", who);
    pd__atomic_file f;
    if ((st = pd__atomic_open(who, path, 0666, &f)) != PD_OK)
        return st;
    size_t bytes = pd_nbytes(t);
    if (fwrite(header, 1, n, f.fp) != n || (bytes && fwrite(t->data, 1, bytes, f.fp) != bytes)) {
        st = npy_io_error(who, "write", path);
        pd__atomic_abort(&f);
        return st;
    }
    return pd__atomic_commit(who, &f);
}
