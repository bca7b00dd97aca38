#!/usr/bin/env python3
"""Refuse a dependency cycle between the library's modules (ARCHITECTURE.md, "Layers").

Reads every file of the library under src/ (the binary under src/bin/ is a client, not a
module), resolves each `crate::…`, `super::…` and `self::…` path its code names (comments
and `#[cfg(test)]` modules left out: a test may reach anywhere), and builds two graphs:

- top-level modules (`tool` → `retrieval` when a file of `tool/` names `crate::retrieval`);
- files inside one top-level module (`retrieval/hit.rs` → `retrieval/snippet.rs`), where a
  path is resolved to the deepest file that defines it.

Any strongly connected component of more than one node in either graph is printed, and the
script exits 1. `--layers` also prints the modules in dependency order. Standard library
only; run from the repository root (CI does).
"""
import os
import re
import sys

SRC = "src"


def module_path(rel):
    """src/a/b.rs -> ['a', 'b']; src/a/mod.rs -> ['a']; src/lib.rs -> []."""
    parts = rel[:-3].split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts


def strip(code):
    """Drop comments, string literals and `#[cfg(test)]` modules."""
    code = re.sub(r"/\*.*?\*/", "", code, flags=re.S)
    code = re.sub(r'r#*"(?:.|\n)*?"#*', '""', code)
    code = re.sub(r'"(?:\\.|[^"\\])*"', '""', code)
    code = re.sub(r"//[^\n]*", "", code)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*mod\s+\w+\s*\{", code):
        if m.start() < i:
            continue
        out.append(code[i : m.start()])
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        i = j
    out.append(code[i:])
    return "".join(out)


def expand(prefix, body):
    """`a::{b, c::{d, e}}` -> ['a::b', 'a::c::d', 'a::c::e'] (first segments only matter)."""
    out, depth, cur = [], 0, ""
    for ch in body + ",":
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            item = cur.strip()
            if item:
                m = re.match(r"([\w:]*?)(?:::)?\{(.*)\}$", item, re.S)
                if m:
                    out += expand(prefix + [s for s in m.group(1).split("::") if s], m.group(2))
                else:
                    out.append(prefix + [s for s in item.split(" as ")[0].split("::") if s])
            cur = ""
        else:
            cur += ch
    return out


def paths_in(code):
    """Every path the code names that starts at crate, super or self."""
    found = []
    for m in re.finditer(r"\b((?:crate|super|self)(?:::(?:super|\w+))*)::\{", code):
        depth, j = 1, m.end()
        while j < len(code) and depth:
            depth += {"{": 1, "}": -1}.get(code[j], 0)
            j += 1
        for p in expand([], code[m.end() : j - 1]):
            found.append(m.group(1).split("::") + p)
    for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", code):
        found.append(m.group(1).split("::"))
    return found


def resolve(here, path, is_dir_module):
    """Absolute module path of `path` as named in module `here`."""
    base = list(here)
    segs = list(path)
    if segs[0] == "crate":
        base, segs = [], segs[1:]
    else:
        while segs and segs[0] in ("self", "super"):
            if segs[0] == "super":
                base = base[:-1]
            segs = segs[1:]
    return base + segs


def scc(graph):
    index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
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
                comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def main():
    files = {}
    for root, dirs, names in os.walk(SRC):
        dirs[:] = [d for d in dirs if os.path.join(root, d) != os.path.join(SRC, "bin")]
        for name in names:
            if name.endswith(".rs"):
                rel = os.path.relpath(os.path.join(root, name), SRC).replace(os.sep, "/")
                files[tuple(module_path(rel))] = rel
    top, inner, why = {}, {}, {}
    for mod, rel in files.items():
        if not mod:
            continue
        code = strip(open(os.path.join(SRC, rel), encoding="utf-8").read())
        for p in paths_in(code):
            target = resolve(mod, p, rel.endswith("mod.rs"))
            if not target:
                continue
            if target[0] != mod[0] and tuple(target[:1]) in files:
                top.setdefault(mod[0], set()).add(target[0])
                why.setdefault((mod[0], target[0]), rel)
            elif target[0] == mod[0]:
                # The deepest file that defines a prefix of the path.
                for k in range(len(target), 0, -1):
                    if tuple(target[:k]) in files:
                        dest = tuple(target[:k])
                        break
                # A file naming its own children or its parent module's re-exports is
                # structure, not a dependency.
                if dest != mod and dest != mod[: len(dest)] and mod != dest[: len(mod)]:
                    inner.setdefault(rel, set()).add(files[dest])
    bad = 0
    for comp in scc(top):
        bad += 1
        edges = [f"{a} → {b} ({why[(a, b)]})" for a in comp for b in comp if (a, b) in why]
        print("cycle between top-level modules: " + ", ".join(comp) + "\n  " + "\n  ".join(edges))
    for comp in scc(inner):
        bad += 1
        print("cycle between files: " + " ↔ ".join(comp))
    if bad:
        sys.exit(1)
    if "--layers" in sys.argv:
        # Each module after everything it depends on (a topological order), with its edges.
        done, order = set(), []
        mods = sorted(set(top) | {d for ds in top.values() for d in ds} | {m[0] for m in files if m})
        while len(order) < len(mods):
            ready = [m for m in mods if m not in done and top.get(m, set()) <= done]
            order += ready
            done |= set(ready)
        for m in order:
            print(f"{m} → {', '.join(sorted(top.get(m, ()))) or '(nothing)'}")
    print(f"no module cycle ({len(files)} files, {len(top)} top-level modules with dependencies)")


if __name__ == "__main__":
    main()
