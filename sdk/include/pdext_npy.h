/*
 * pdext_npy.h - NumPy's .npy and .npz files in and out of pdext tensors, so that hosts, tests
 * and the `pdext run` command exchange arrays with Python without NumPy being present.
 *
 * Formats (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
 *   - .npy: "\x93NUMPY", version byte pair, header length (2 bytes for 1.0, 4 bytes for 2.0
 *     and 3.0), a Python dict literal {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3),}
 *     padded with spaces and a '\n' so that the data starts on a 64-byte boundary, then the
 *     raw elements. All three header versions are read; 1.0 is written.
 *   - .npz: a zip archive of .npy members named "<name>.npy" (what numpy.savez writes),
 *     stored or deflated. Zip64 extra fields (numpy writes them for every member) are read;
 *     archives or members past 4 GiB are not.
 *
 * Dtypes: every type both NumPy and pdext have, little-endian, C order:
 *   |b1 bool, |i1 |u1, <i2 <u2, <i4 <u4, <i8 <u8, <f2 float16, <f4, <f8, <c8, <c16.
 * '=' (native) and '|' byte orders are read as little-endian. bfloat16 has no NumPy dtype:
 * saving one is refused (cast it to float32 first); reading never produces one.
 *
 * Refused with PD_ERR_INVALID_ARGUMENT and a message saying which: Fortran-order arrays (of
 * 2 or more dims; 0-d and 1-D arrays are the same in either order and are read),
 * big-endian data ('>f4'), object arrays ('|O'), structured or other unsupported dtypes,
 * truncated or malformed headers, data sizes that do not match the shape, ndim > PD_MAX_DIMS,
 * corrupt zip structures and CRC-32 mismatches. A missing file or member gives
 * PD_ERR_NOT_FOUND; other operating-system failures PD_ERR_IO.
 *
 * Tensors read are new CPU tensors (64-byte aligned) the caller releases with
 * pd_tensor_release. Files are written atomically: a temporary file in the same directory,
 * renamed over the target once complete, so a failed or interrupted save leaves the old file
 * (or none) and never a half-written one.
 *
 * The library assumes a little-endian host (every platform pdext builds on).
 */
#ifndef PDEXT_NPY_H
#define PDEXT_NPY_H

#include "pdext.h"

PD_EXTERN_C_BEGIN
#pragma GCC visibility push(default)

/* Reads the .npy file at `path` into a new CPU tensor *out. */
pd_status pd_npy_load(const char *path, pd_tensor *out);

/* Parses a whole .npy image held in memory (`size` bytes at `data`); `origin` names it in
 * messages (may be NULL). The elements are copied into a new CPU tensor *out. */
pd_status pd_npy_load_buffer(const void *data, size_t size, const char *origin, pd_tensor *out);

/* Writes `t` (a defined tensor in host memory, not bfloat16) to `path` as a version 1.0 .npy
 * file, atomically. A 0-d tensor gives shape (). */
pd_status pd_npy_save(const char *path, const pd_tensor *t);

/* Reads member `member` of the .npz archive at `path` into a new CPU tensor *out. The member
 * is found by its name as numpy.savez gives it ("x") or by its file name ("x.npy"). Deflated
 * members are inflated and every member's CRC-32 is checked. */
pd_status pd_npz_load(const char *path, const char *member, pd_tensor *out);

/* The array names of the .npz archive at `path`, in archive order, with the ".npy" suffix
 * removed (as numpy's NpzFile.files). *names is a malloc'd array of *count malloc'd strings;
 * free it with pd_npz_names_free. */
pd_status pd_npz_list(const char *path, char ***names, int32_t *count);

/* Frees what pd_npz_list returned. NULL is fine. */
void pd_npz_names_free(char **names, int32_t count);

/* Writes `n` tensors to a new .npz archive at `path`, atomically, as members "<names[i]>.npy"
 * (a name already ending in ".npy" is kept as is). Names must be non-empty and distinct.
 * `compress` deflates the members (numpy.savez_compressed); otherwise they are stored
 * (numpy.savez). Each member must fit in 4 GiB. */
pd_status pd_npz_save(const char *path, const char *const *names, const pd_tensor *tensors,
                      int32_t n, bool compress);

/* The .npy dtype string for `dtype` ("<f4", "|b1", ...), or NULL for PD_UNDEFINED and
 * bfloat16, which NumPy lacks. */
const char *pd_npy_descr(pd_data_type dtype);

#pragma GCC visibility pop
PD_EXTERN_C_END

#endif /* PDEXT_NPY_H */
