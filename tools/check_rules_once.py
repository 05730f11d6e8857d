#!/usr/bin/env python3
"""check_rules_once.py - each of pdext's shared rules is written once (issue 22, "one rule, one
place"); this fails when a second copy appears in a product folder (cli/, jit/, python/, sdk/):

  identifier   a C identifier: pd_name_is_identifier (sdk/src/ops/decl.c), no local is_identifier
  aot-spec     "FILE:FUNC": pd_aot_spec_split (pdext_aot.h), no strrchr(spec, ':') or
               rsplit(":") of a spec elsewhere
  runtime-dir  libpdext's directory: pd_runtime_dir (sdk/src/base/runtime_dir.c), no other
               dladdr in libpdext or its adapters
  vector-room  a vector output's items: the runner sizes them (tensors NULL, count 0;
               pd_arg_release), no guessed room (VECTOR_OUTPUT_CAPACITY, OUT_CAPACITY, ...)
  check-rows   the checks of `pdext check` and pdext.check: pd_check_op
               (sdk/src/autograd/check.c), no second writer of their rows ("shapes+infer",
               "deterministic", "gradcheck x2" as a string)
  random-fill  the random values gradcheck and the check run ops on: pd__random_tensor
               (sdk/src/autograd/args.c), no second copy of its generator (the LCG multiplier)
  grad-binding a grad op's inputs and outputs bound to its forward op's: computed once at
               registration (sdk/src/ops/decl.c, published as pd_op_grad_input_source /
               pd_op_grad_output_target, op.grad_inputs / op.grad_outputs in Python), no
               "@GRAD" suffix matched anywhere else (name + "@GRAD", endswith("@GRAD"))

Usage: check_rules_once.py [--root DIR] [--extra FILE]... (--extra: a file checked under every
rule, to show the check biting); files with a reason to differ are listed with it in RULES. Exit 1 listing file:line per copy.
"""
import argparse
import os
import re
import sys

RULES = [
    ("identifier", re.compile(r"\bstatic\s+bool\s+\w*is_ident\w*\s*\(|\bdef\s+_?is_c_identifier\b"),
     ("cli/", "jit/", "python/", "sdk/src/"), {"sdk/src/ops/decl.c": "the one place"}),
    ("aot-spec", re.compile(r"strrchr\([^,()]*spec[^,()]*,\s*':'\)|\.rsplit\(\s*[\"']:[\"']"),
     ("cli/", "jit/", "python/", "sdk/src/"),
     {"cli/cmd_run.c": "its ':' splits ARCHIVE.npz:MEMBER, an input file, not an AOT spec"}),
    ("runtime-dir", re.compile(r"\bdladdr\s*\("),
     ("sdk/src/",), {"sdk/src/base/runtime_dir.c": "the one place"}),
    ("vector-room", re.compile(r"\b(VECTOR_OUTPUT_CAPACITY|OUT_CAPACITY)\b|total\s*>\s*64\s*\?"),
     ("cli/", "jit/", "python/", "sdk/src/"),
     {"python/pdext/paddle_native.cpp": "Paddle takes vector outputs only as inputs written in "
                                        "place: their items are the input's, never more"}),
    ("check-rows", re.compile(r"[\"'](shapes\+infer|deterministic|gradcheck x2)[\"']"),
     ("cli/", "jit/", "python/", "sdk/src/"), {"sdk/src/autograd/check.c": "the one place"}),
    ("random-fill", re.compile(r"\b6364136223846793005"),
     ("cli/", "jit/", "python/", "sdk/src/"), {"sdk/src/autograd/args.c": "the one place"}),
    ("grad-binding", re.compile(r"[\"']@GRAD[\"']"),
     ("cli/", "jit/", "python/", "sdk/src/"), {"sdk/src/ops/decl.c": "the one place"}),
]
EXTS = (".c", ".h", ".cc", ".cpp", ".cu", ".py")


def files(root):
    for top in ("cli", "jit", "python", "sdk"):
        for d, _, names in os.walk(os.path.join(root, top)):
            for n in sorted(names):
                if n.endswith(EXTS):
                    p = os.path.join(d, n)
                    yield os.path.relpath(p, root).replace(os.sep, "/"), p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--extra", action="append", default=[])
    a = ap.parse_args()
    found = []
    todo = list(files(a.root)) + [(os.path.basename(e), e) for e in a.extra]
    for rel, path in todo:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.readlines()
        for name, pattern, where, owners in RULES:
            extra = path in a.extra
            if rel in owners or not (extra or rel.startswith(where)):
                continue
            for i, line in enumerate(lines, 1):
                if pattern.search(line):
                    found.append("%s:%d: a second copy of the %s rule: %s"
                                 % (rel, i, name, line.strip()))
    for f in found:
        print(f)
    if found:
        print("%d copies of rules that have one place (tools/check_rules_once.py)" % len(found))
        return 1
    print("every rule in one place")
    return 0


if __name__ == "__main__":
    sys.exit(main())
