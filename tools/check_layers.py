#!/usr/bin/env python3
"""check_layers.py - the folders of sdk/src are layers: checks that nothing points up.

Reads the layer table of docs/architecture.md (rows "| N | `sdk/src/FOLDER/` | ..."; a file
directly under sdk/src, pd_internal.h, has a row of its own), then the #include lines of every
C/C++ source and header under sdk/src, and fails (exit 1, one line per finding) when

  - a folder of sdk/src (or a file directly under it) has no row in the table: the map would
    no longer tell the truth about the tree;
  - a row names a folder that does not exist;
  - a file includes a header of a folder on a higher layer (an arrow pointing up);
  - the folders' include graph has a circle (folders on one layer may include each other's
    headers only where that makes no circle);
  - a file includes the header of a library above libpdext (FORBIDDEN_INCLUDES): the arrows
    that must never exist, such as adapters -> jit (libpdext_aot needs libpdext alone, so a
    program running AOT ops from a bundle needs no JIT and no zlib).

With --objects DIR (the object files of libpdext, e.g.
build/sdk/CMakeFiles/pdext_objects.dir/src) it also reads who calls whom from `nm`: a folder
whose objects use a symbol that a higher layer's objects define is an upward call, and call
circles between folders are reported the same way.

Folders are the first path component under sdk/src (device/cuda belongs to device/).
Only quoted includes that resolve to a file under sdk/src count; public headers
(sdk/include) are below every folder and are not checked here.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys

SOURCE_EXT = (".c", ".h", ".cc", ".cpp", ".cu", ".cuh", ".hpp")
ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*`sdk/src/([^`]*)`")


def read_table(doc):
    """{folder key: layer} from the layout table of the map."""
    layers = {}
    with open(doc, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if m:
                key = m.group(2).rstrip("/")
                layers[key] = int(m.group(1))
    return layers


def folder_of(src, path):
    rel = os.path.relpath(path, src)
    parts = rel.split(os.sep)
    return parts[0]


def source_files(src):
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            if name.endswith(SOURCE_EXT):
                yield os.path.join(root, name)


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def include_edges(src):
    """[(from file, to file)] for quoted includes that resolve under src."""
    edges = []
    for path in source_files(src):
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                name = m.group(1)
                for base in (os.path.dirname(path), src):
                    target = os.path.normpath(os.path.join(base, name))
                    if os.path.isfile(target) and target.startswith(src + os.sep):
                        edges.append((path, lineno, target))
                        break
    return edges


def nm_symbols(obj):
    out = subprocess.run(["nm", "--defined-only", obj], capture_output=True, text=True,
                         check=True).stdout
    defined = {l.split()[-1] for l in out.splitlines() if len(l.split()) == 3 and
               l.split()[1] in "TDBRVW"}
    out = subprocess.run(["nm", "--undefined-only", obj], capture_output=True, text=True,
                         check=True).stdout
    used = {l.split()[-1] for l in out.splitlines() if l.split()}
    return defined, used


# Calls up the layers that are the design, each with its reason.
ALLOWED_CALLS = {
    # The module loader hands every module the function table; the table names the
    # implementations of every layer, so it is defined at the top (api/api_table.c) and the
    # loader only passes its address on.
    ("ops", "api", "pd__runtime_api"),
}


# Headers of libraries above libpdext that nothing in sdk/src may include: {header: (library,
# why)}. The JIT builds on libpdext and its adapters, never the other way round.
FORBIDDEN_INCLUDES = {
    "pdext_jit.h": ("jit", "libpdext_jit is above libpdext and its adapters; compiling an AOT "
                           "source is the JIT's (pd_jit_aot_build)"),
}
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s+["<]([^">]+)[">]')


def forbidden_includes(src):
    """[(folder, library, where, why)] for includes of FORBIDDEN_INCLUDES under src."""
    found = []
    for path in source_files(src):
        with open(path, encoding="utf-8", errors="replace") as f:
            for lineno, line in enumerate(f, 1):
                m = ANY_INCLUDE.match(line)
                if m and os.path.basename(m.group(1)) in FORBIDDEN_INCLUDES:
                    lib, why = FORBIDDEN_INCLUDES[os.path.basename(m.group(1))]
                    found.append((folder_of(src, path), lib,
                                  f"{os.path.relpath(path, src)}:{lineno} includes "
                                  f"{m.group(1)}", why))
    return found


def call_edges(objdir, src):
    """[(from folder, to folder, symbol)] from the objects' undefined and defined symbols.
    Objects whose source is gone (a file moved since the build) are left out."""
    owner, uses = {}, []
    for root, _, files in os.walk(objdir):
        for name in files:
            obj = os.path.join(root, name)
            if not name.endswith(".o") or not os.path.isfile(
                    os.path.join(src, os.path.relpath(obj, objdir)[:-2])):
                continue
            folder = folder_of(objdir, obj)
            defined, used = nm_symbols(obj)
            for s in defined:
                owner[s] = folder
            uses.append((folder, used))
    edges = []
    for folder, used in uses:
        for s in sorted(used):
            if s in owner and owner[s] != folder and (folder, owner[s], s) not in ALLOWED_CALLS:
                edges.append((folder, owner[s], s))
    return edges


def circles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def check(kind, edges, layers, problems):
    """edges: [(from folder, to folder, why)]. Appends findings to problems."""
    graph = {}
    for a, b, why in edges:
        if a == b:
            continue
        graph.setdefault(a, set()).add(b)
        if a in layers and b in layers and layers[b] > layers[a]:
            problems.append(f"{kind} points up: {why} ({a}/ is layer {layers[a]}, "
                            f"{b}/ is layer {layers[b]})")
    for comp in circles(graph):
        inside = [why for a, b, why in edges if a in comp and b in comp and a != b]
        problems.append(f"{kind} circle between folders {', '.join(comp)}: " +
                        "; ".join(inside[:6]) + (" ..." if len(inside) > 6 else ""))
    return graph


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=os.path.join(here, "..", "sdk", "src"))
    ap.add_argument("--doc", default=os.path.join(here, "..", "docs", "architecture.md"))
    ap.add_argument("--objects", help="libpdext's object directory (adds the call check)")
    ap.add_argument("--graph", action="store_true", help="print the folder graph")
    args = ap.parse_args()
    src = os.path.normpath(os.path.abspath(args.src))

    layers = read_table(args.doc)
    problems = []
    present = sorted({folder_of(src, p) for p in source_files(src)})
    for key in present:
        if key not in layers:
            problems.append(f"sdk/src/{key} is missing from the layer table of {args.doc}")
    for key in sorted(layers):
        if key not in present:
            problems.append(f"the layer table of {args.doc} names sdk/src/{key}, which holds "
                            "no source")

    edges = []
    for a, lineno, b in include_edges(src):
        fa, fb = folder_of(src, a), folder_of(src, b)
        edges.append((fa, fb, f"{os.path.relpath(a, src)}:{lineno} includes "
                              f"{os.path.relpath(b, src)}"))
    graphs = {"include": check("include", edges, layers, problems)}
    for folder, lib, where, why in forbidden_includes(src):
        problems.append(f"forbidden arrow {folder} -> {lib}: {where} ({why})")
    if args.objects and not os.path.isdir(args.objects):
        print(f"check_layers: no objects at {args.objects} (build libpdext first); call check "
              "skipped")
    elif args.objects and not shutil.which("nm"):
        print("check_layers: no nm (binutils) on PATH; call check skipped")
    elif args.objects:
        objdir = os.path.normpath(os.path.abspath(args.objects))
        cedges = [(a, b, f"{a}/ calls {s} ({b}/)") for a, b, s in call_edges(objdir, src)]
        graphs["call"] = check("call", cedges, layers, problems)

    if args.graph:
        for kind, graph in graphs.items():
            print(f"{kind} arrows between folders (layer: folder -> folders below it):")
            for a in sorted(graph, key=lambda k: (-layers.get(k, -1), k)):
                print(f"  {layers.get(a, '?')}: {a} -> " +
                      ", ".join(sorted(graph[a], key=lambda k: (-layers.get(k, -1), k))))
    for p in problems:
        print(p)
    if problems:
        print(f"check_layers: {len(problems)} problem(s)")
        return 1
    print(f"check_layers: {len(present)} folders, no arrow up, no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
