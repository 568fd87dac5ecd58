#!/usr/bin/env python3
"""Report import cycles between the files of each crate.

Usage: import_cycles.py CRATE_SRC_DIR...   (e.g. xprof-query/src src)
A `pub use` re-export is a facade, not an edge.
Edges: a file that names `crate::a::b…`, `super::…` or `self::…` (in `use`
or in a path) depends on the file that defines module a::b (the longest
prefix that is a file). `mod x;` declarations are not edges. Exit 1 if any
cycle (strongly connected component of 2+ files) is found.
"""
import os, re, sys

def modules(src):
    mods = {}
    for root, _, files in os.walk(src):
        for f in files:
            if not f.endswith('.rs'):
                continue
            p = os.path.join(root, f)
            rel = os.path.relpath(p, src)[:-3].split(os.sep)
            if rel[-1] in ('mod', 'lib', 'main'):
                rel = rel[:-1]
            mods[tuple(rel)] = p
    return mods

PATH = re.compile(r'\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{)')

def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    return '\n'.join(l.split('//')[0] for l in text.splitlines())

def expand_use(text):
    # crate::a::{b, c::d} -> crate::a::b crate::a::c::d (one level)
    out = []
    for m in re.finditer(r'\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^{}]*)\}', text):
        for part in m.group(3).split(','):
            part = part.strip().split(' as ')[0].strip()
            if part and part != 'self' and re.match(r'[A-Za-z_]', part):
                out.append(m.group(1) + m.group(2) + '::' + part)
    return out

def resolve(mods, here, kind, segs):
    if kind == 'crate':
        base = []
    elif kind == 'self':
        base = list(here)
    else:
        base = list(here[:-1])
        while segs and segs[0] == 'super':
            base = base[:-1]; segs = segs[1:]
    full = base + segs
    for n in range(len(full), -1, -1):
        if tuple(full[:n]) in mods:
            return tuple(full[:n])
    return None

def split_bin(src, mods):
    """A package with lib.rs and main.rs holds two crates: main.rs's own
    `mod x;` files form the binary crate."""
    main = os.path.join(src, 'main.rs')
    if not (os.path.exists(main) and os.path.exists(os.path.join(src, 'lib.rs'))):
        return [mods]
    text = strip_comments(open(main).read())
    top = set(re.findall(r'^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_0-9]+)\s*;', text, re.M))
    binmods = {('<main>',) if k == () else k: v for k, v in mods.items()
               if k and k[0] in top}
    binmods[()] = main
    libmods = {k: v for k, v in mods.items() if not (k and k[0] in top) and v != main}
    return [libmods, binmods]

def graph(src):
    allmods = modules(src)
    mods, edges = {}, {}
    for part in split_bin(src, allmods):
        m2, e2 = graph_of(part)
        tag = 'bin:' if any(v.endswith('main.rs') for v in part.values()) else ''
        for k, v in m2.items():
            mods[(tag,) + k] = v
        for k, ts in e2.items():
            edges[(tag,) + k] = {(tag,) + t for t in ts}
    return mods, edges

def graph_of(mods):
    edges = {m: set() for m in mods}
    for m, p in mods.items():
        text = strip_comments(open(p).read())
        # `pub use` re-exports make a facade, not a dependency of this file
        text = re.sub(r'\bpub(?:\([^)]*\))?\s+use\b[^;]*;', '', text, flags=re.S)
        # a file's #[cfg(test)] mod tests block is part of the file: count it
        paths = [x.group(0) for x in PATH.finditer(text)] + expand_use(text)
        # relative paths to a child module (`use line_editor::X`, `child::f()`)
        for x in re.finditer(r'(?<![:\w])([a-z_][a-z0-9_]*)::', text):
            if m + (x.group(1),) in mods and x.group(1) not in ('crate', 'super', 'self'):
                paths.append('self::' + x.group(1))
        for path in paths:
            parts = path.split('::')
            parts = [x for x in parts if x and x != '{']
            t = resolve(mods, m, parts[0], parts[1:])
            if t is not None and t != m:
                # a parent module naming its own child is declaration, not import,
                # only when the child is a direct descendant used via self::
                edges[m].add(t)
    return mods, edges

def sccs(edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)
    def strong(v):
        index[v] = low[v] = counter[0]; counter[0] += 1
        stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            out.append(comp)
    for v in edges:
        if v not in index:
            strong(v)
    return out

bad = 0
for src in sys.argv[1:]:
    mods, edges = graph(src)
    for comp in sccs(edges):
        if len(comp) > 1:
            bad += 1
            names = sorted(os.path.relpath(mods[m], src) for m in comp)
            print(f'{src}: cycle of {len(comp)} files: ' + ', '.join(names))
            cs = set(comp)
            for m in sorted(comp):
                inside = sorted(os.path.relpath(mods[t], src) for t in edges[m] if t in cs)
                print(f'    {os.path.relpath(mods[m], src)} -> {", ".join(inside)}')
print(f'{bad} cycle(s)')
sys.exit(1 if bad else 0)
