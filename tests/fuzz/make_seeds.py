#!/usr/bin/env python3
"""make_seeds.py - writes a small seed corpus for the fuzzers in tests/fuzz (no NumPy
needed): `python3 make_seeds.py OUTDIR` creates OUTDIR/{npy,npz,opdef,manifest}/."""
import io
import os
import struct
import sys
import zipfile


def npy(descr, shape, data, version=(1, 0), fortran=False):
    shape_s = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape_s)
    lb = 2 if version[0] == 1 else 4
    total = (8 + lb + len(d) + 1 + 63) // 64 * 64
    d = d + " " * (total - 8 - lb - len(d) - 1) + "\n"
    ln = struct.pack("<H" if lb == 2 else "<I", len(d))
    return b"\x93NUMPY" + bytes(version) + ln + d.encode() + data


def npz(members, method, force_zip64=False):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=method) as z:
        for name, blob in members:
            with z.open(name + ".npy", "w", force_zip64=force_zip64) as f:
                f.write(blob)
    return buf.getvalue()


def main(out):
    seeds = {
        "npy": {
            "f4_2x3": npy("<f4", (2, 3), struct.pack("<6f", *range(6))),
            "i8_vec": npy("<i8", (3,), struct.pack("<3q", 1, -2, 3)),
            "b1_scalar": npy("|b1", (), b"\x01"),
            "u1_empty": npy("|u1", (0, 4), b""),
            "c16_v2": npy("<c16", (1,), b"\0" * 16, version=(2, 0)),
            "f2_v3": npy("<f2", (2,), b"\0\x3c\0\x40", version=(3, 0)),
            "fortran_1d": npy("<u2", (2,), b"\1\0\2\0", fortran=True),
        },
        "opdef": {
            # 1 def; kind, #inputs, #outputs, #attrs, #inplace; then '\n'-separated strings
            "plain": bytes([0, 0, 1, 1, 0, 0]) + b"relu\nX\nOut",
            "attrs": bytes([0, 0, 2, 1, 3, 0]) + b"scale\nX\nY@OPTIONAL\nOut\n"
                     b"alpha: float\nshape: std::vector<int64_t>\nname:std::string",
            "inplace": bytes([0, 0, 1, 1, 0, 1]) + b"add_\nX@VECTOR\nOut@VECTOR\nX\nOut",
            "grad": bytes([1, 0, 1, 1, 0, 0, 1, 2, 1, 0, 0]) +
                    b"relu\nX\nOut\nrelu\nOut\nOut@GRAD\nX@GRAD",
        },
        "manifest": {
            "basic": b"pdext-jit-manifest 1\nkey 0123456789abcdef\nlibrary librelu-0011223344556677.so\n"
                     b"version c /usr/bin/cc 1234 5678\nwarning relu.c:3: unused\n"
                     b"input 120 1700000000000000000 00000000deadbeef /src/relu.c\n",
            "minimal": b"pdext-jit-manifest 1\nkey 1\nlibrary l.so\n",
        },
    }
    blob = npy("<f4", (2, 2), struct.pack("<4f", 1, 2, 3, 4))
    seeds["npz"] = {
        "stored": npz([("x", blob), ("y", npy("<i4", (1,), b"\7\0\0\0"))], zipfile.ZIP_STORED),
        "deflated": npz([("x", blob)], zipfile.ZIP_DEFLATED),
        "zip64": npz([("x", blob)], zipfile.ZIP_STORED, force_zip64=True),
        "zip64_deflated": npz([("x", blob)], zipfile.ZIP_DEFLATED, force_zip64=True),
    }
    for kind, files in seeds.items():
        os.makedirs(os.path.join(out, kind), exist_ok=True)
        for name, data in files.items():
            with open(os.path.join(out, kind, name), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "seeds")
