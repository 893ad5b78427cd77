#!/usr/bin/env python3
"""Finds import circles between sibling modules in every crate of the workspace.

For each module M and each pair of its children A and B (a child counts together with all
of its own submodules), there is an edge A -> B when any file in A's subtree refers to
anything in B's subtree. A cycle among the children of any module is an import circle: it
is printed with one file:line per edge, and the script exits 1. Otherwise it prints one
line ("no import circles in N crates, M modules") and exits 0.

Crates: every package of the root Cargo.toml's `[workspace]` (members, globs expanded,
excluded directories that hold a package, such as `fuzz/`, and any `crates/*` package). Each target of a package
is its own crate with its own module tree: the library, every binary (`[[bin]]`,
`src/main.rs`, `src/bin/*`), every integration test, example and bench.

What counts as a reference, read from the source text (comments, doc comments and string
literals are skipped):
  - `use` declarations (also `pub use`, grouped `use a::{b, c::{d}}`, renames, globs);
  - paths in code that start with `crate::`, `$crate::`, `super::` or `self::`.
A path resolves to the longest prefix that is a module; when the next segment is a name
that module imports (`use child::Name`, `pub use child::*`), it follows the import, so
`super::Name` re-exported by the parent from a child resolves to that child.

Test code counts like any other code: `#[cfg(test)] mod tests { ... }` blocks and test
files are read too (a test of `a` that reaches into a sibling of `a` is a dependency of
`a`'s subtree). Items behind `#[cfg(...)]` are all read, whatever the configuration.

Usage: check-circles.py [ROOT]   (ROOT defaults to the repository this script is in)
       check-circles.py --self-test
`--self-test` builds two small crates with circles in a temporary directory, checks that
each circle is reported with the right file:line, then breaks them and checks the crates
pass; it exits 1 when a verdict is wrong.
"""

import glob
import os
import re
import sys
import tempfile

try:
    import tomllib
except ImportError:  # Python < 3.11: the few keys read here are simple enough.
    tomllib = None

# `$crate::` in a macro is the `$` token, then `crate`.
MODULE_REF_STARTS = ("crate", "super", "self")
ITEM_KEYWORDS = ("fn", "struct", "enum", "trait", "type", "const", "static", "union")


# ---- Cargo.toml ---------------------------------------------------------------------------


def read_toml(path):
    with open(path, "rb") as f:
        data = f.read()
    if tomllib is not None:
        return tomllib.loads(data.decode("utf-8"))
    return mini_toml(data.decode("utf-8"))


def mini_toml(text):
    """Tables, arrays of tables, strings, booleans and string arrays: what Cargo.toml
    files use for the keys read here."""
    root = {}
    cur = root
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].split("#", 1)[0].strip() if '"' not in lines[i] else lines[i].strip()
        i += 1
        if not line or line.startswith("#"):
            continue
        m = re.match(r"^\[\[([^\]]+)\]\]$", line)
        if m:
            cur = {}
            root.setdefault(m.group(1).strip(), []).append(cur)
            continue
        m = re.match(r"^\[([^\]]+)\]$", line)
        if m:
            cur = root
            for part in m.group(1).strip().split("."):
                cur = cur.setdefault(part.strip(), {})
            continue
        m = re.match(r"^([A-Za-z0-9_.-]+)\s*=\s*(.*)$", line)
        if not m:
            continue
        key, value = m.group(1), m.group(2)
        if value.startswith("[") and "]" not in value:
            while i < len(lines) and "]" not in value:
                value += " " + lines[i].split("#", 1)[0]
                i += 1
        if value.startswith("["):
            cur[key] = re.findall(r'"([^"]*)"', value)
        elif value.startswith('"'):
            cur[key] = re.match(r'"([^"]*)"', value).group(1)
        elif value in ("true", "false"):
            cur[key] = value == "true"
        else:
            cur[key] = value
    return root


def package_dirs(root):
    manifest = read_toml(os.path.join(root, "Cargo.toml"))
    ws = manifest.get("workspace", {})
    dirs = []
    if "package" in manifest:
        dirs.append(root)
    for pattern in list(ws.get("members", [])) + list(ws.get("exclude", [])):
        for d in sorted(glob.glob(os.path.join(root, pattern))):
            d = os.path.normpath(d)
            if os.path.isfile(os.path.join(d, "Cargo.toml")) and d not in dirs:
                dirs.append(d)
    # Crates that sit under crates/ without being listed yet still get checked.
    for d in sorted(glob.glob(os.path.join(root, "crates", "*"))):
        if os.path.isfile(os.path.join(d, "Cargo.toml")) and d not in dirs:
            dirs.append(d)
    return dirs


def crate_targets(pkg_dir):
    """(name, root file) of every target of one package."""
    manifest = read_toml(os.path.join(pkg_dir, "Cargo.toml"))
    package = manifest.get("package", {})
    name = package.get("name", os.path.basename(pkg_dir))
    targets = []
    seen = set()

    def add(kind, tname, rel):
        path = os.path.normpath(os.path.join(pkg_dir, rel))
        if path in seen or not os.path.isfile(path):
            return
        seen.add(path)
        targets.append((f"{name} {kind} {tname}" if tname else f"{name} {kind}", path))

    lib = manifest.get("lib", {})
    add("lib", "", lib.get("path", "src/lib.rs"))
    for kind, key, auto_key, auto_dirs in (
        ("bin", "bin", "autobins", ["src/bin"]),
        ("test", "test", "autotests", ["tests"]),
        ("example", "example", "autoexamples", ["examples"]),
        ("bench", "bench", "autobenches", ["benches"]),
    ):
        for t in manifest.get(key, []):
            tname = t.get("name", "")
            add(kind, tname, t.get("path", f"{auto_dirs[0]}/{tname}.rs"))
        if package.get(auto_key, True) is False:
            continue
        if kind == "bin":
            add(kind, name, "src/main.rs")
        for d in auto_dirs:
            for f in sorted(glob.glob(os.path.join(pkg_dir, d, "*.rs"))):
                add(kind, os.path.basename(f)[:-3], os.path.relpath(f, pkg_dir))
            for f in sorted(glob.glob(os.path.join(pkg_dir, d, "*", "main.rs"))):
                add(kind, os.path.basename(os.path.dirname(f)), os.path.relpath(f, pkg_dir))
    build = package.get("build", "build.rs")
    if isinstance(build, str):
        add("build script", "", build)
    return targets


# ---- Rust source: tokens ------------------------------------------------------------------

IDENT_START = re.compile(r"[A-Za-z_\u00c0-\uffff]")
RAW_OR_BYTE_STR = re.compile(r'(?:br|cr|b|c|r)#*"')
NUMBER = re.compile(r"[0-9][0-9A-Za-z_]*(?:\.[0-9][0-9A-Za-z_]*)?")
IDENT = re.compile(r"(?:r#)?[A-Za-z_\u00c0-\uffff][A-Za-z0-9_\u00c0-\uffff]*")


def tokenize(text):
    """Tokens (kind, value, line) of Rust source, without comments. Kinds: 'id' (identifier
    or keyword), 'str' (the literal's raw contents), 'p' (punctuation; `::` is one token)."""
    toks = []
    i, n, line = 0, len(text), 1
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
            i += 1
        elif c.isspace():
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    if text[i] == "\n":
                        line += 1
                    i += 1
        elif c == '"' or (
            c in "rbc"
            and (i == 0 or not re.match(r"[A-Za-z0-9_]", text[i - 1]))
            and RAW_OR_BYTE_STR.match(text, i)
        ):
            start_line = line
            m = re.match(r'(br|cr|b|c|r)?(#*)"', text[i:])
            prefix, hashes = m.group(1) or "", m.group(2)
            i += m.end()
            raw = "r" in prefix
            end = '"' + hashes
            j = i
            while j < n:
                if not raw and text[j] == "\\":
                    j += 2
                    continue
                if text.startswith(end, j):
                    break
                j += 1
            value = text[i:j]
            line += value.count("\n")
            toks.append(("str", value, start_line))
            i = j + len(end)
        elif c == "'":
            # A character literal ('x', '\n', '\u{..}') or a lifetime / label ('a).
            if i + 1 < n and text[i + 1] == "\\":
                j = text.find("'", i + 2)
                if text[i + 2 : i + 3] == "'":
                    j = text.find("'", i + 3)
                i = n if j < 0 else j + 1
                toks.append(("str", "", line))
            elif i + 2 < n and text[i + 2] == "'":
                toks.append(("str", text[i + 1], line))
                i += 3
            else:
                m = IDENT.match(text, i + 1)
                i = m.end() if m else i + 1
        elif IDENT_START.match(c):
            m = IDENT.match(text, i)
            toks.append(("id", m.group(0).removeprefix("r#"), line))
            i = m.end()
        elif c.isdigit():
            m = NUMBER.match(text, i)
            i = m.end()
        elif text.startswith("::", i):
            toks.append(("p", "::", line))
            i += 2
        else:
            toks.append(("p", c, line))
            i += 1
    return toks


# ---- Rust source: modules, imports, references --------------------------------------------


class Crate:
    def __init__(self, name, root_file):
        self.name = name
        self.root_file = root_file
        self.modules = {(): root_file}  # module path -> file that holds it
        self.imports = {}  # module -> {name: (context module, segments)}
        self.globs = {}  # module -> [(context module, segments)]
        self.items = {}  # module -> {item names defined there}
        self.refs = []  # (module, segments, file, line)
        self.read_files = set()

    def parse(self):
        self.parse_file(self.root_file, (), mod_rs=True)

    def parse_file(self, path, module, mod_rs):
        if path in self.read_files:
            return
        self.read_files.add(path)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (OSError, UnicodeDecodeError):
            return
        toks = tokenize(text)
        file_dir = os.path.dirname(path)
        if mod_rs:
            child_dir = file_dir
        else:
            child_dir = os.path.join(file_dir, os.path.basename(path)[:-3])
        self.parse_tokens(toks, path, module, child_dir, file_dir)

    def parse_tokens(self, toks, path, module, child_dir, file_dir):
        # Each scope: (module, directory of its `mod x;` files, inline depth) or None for
        # a block that is not a module.
        stack = [(module, child_dir, 0)]
        attrs = []
        i, n = 0, len(toks)

        def scope():
            for s in reversed(stack):
                if s is not None:
                    return s
            return stack[0]

        while i < n:
            kind, val, line = toks[i]
            prev = toks[i - 1][1] if i else ""
            if kind == "p" and val == "#":
                j = i + 1
                inner = j < n and toks[j][1] == "!"
                if inner:
                    j += 1
                if j < n and toks[j][1] == "[":
                    end = match_close(toks, j, "[", "]")
                    if not inner:
                        attrs.append(toks[j + 1 : end])
                    i = end + 1
                    continue
                i += 1
                continue
            if kind == "p" and val == "{":
                stack.append(None)
                attrs = []
                i += 1
                continue
            if kind == "p" and val == "}":
                if len(stack) > 1:
                    stack.pop()
                attrs = []
                i += 1
                continue
            cur, cur_dir, depth = scope()
            if kind == "id" and val == "mod" and i + 2 < n and toks[i + 1][0] == "id":
                name = toks[i + 1][1]
                after = toks[i + 2][1]
                child = cur + (name,)
                path_attr = find_path_attr(attrs)
                attrs = []
                if after == "{":
                    self.modules.setdefault(child, path)
                    self.items.setdefault(cur, set()).add(name)
                    stack.append((child, os.path.join(cur_dir, name), depth + 1))
                    i += 3
                    continue
                if after == ";":
                    self.items.setdefault(cur, set()).add(name)
                    if path_attr is not None:
                        base = file_dir if depth == 0 else cur_dir
                        target = os.path.normpath(os.path.join(base, path_attr))
                        mod_rs = True
                    else:
                        target = os.path.join(cur_dir, name + ".rs")
                        mod_rs = False
                        if not os.path.isfile(target):
                            target = os.path.join(cur_dir, name, "mod.rs")
                            mod_rs = True
                    if os.path.isfile(target):
                        self.modules[child] = target
                        self.parse_file(target, child, mod_rs)
                    i += 3
                    continue
            if kind == "id" and val == "use" and prev not in ("::", ".") and i + 1 < n:
                end = i + 1
                depth_b = 0
                while end < n and not (toks[end][1] == ";" and depth_b == 0):
                    if toks[end][1] == "{":
                        depth_b += 1
                    elif toks[end][1] == "}":
                        depth_b -= 1
                        if depth_b < 0:
                            break
                    end += 1
                for segs, alias, is_glob, uline in use_paths(toks[i + 1 : end]):
                    if not segs:
                        continue
                    if is_glob:
                        self.globs.setdefault(cur, []).append((cur, segs))
                    else:
                        last = alias or segs[-1]
                        if last != "_":
                            self.imports.setdefault(cur, {})[last] = (cur, segs)
                    self.refs.append((cur, segs, path, uline))
                attrs = []
                i = end + 1
                continue
            if kind == "id" and val in ITEM_KEYWORDS and i + 1 < n and toks[i + 1][0] == "id":
                self.items.setdefault(cur, set()).add(toks[i + 1][1])
            if kind == "id" and val == "macro_rules" and i + 2 < n and toks[i + 1][1] == "!":
                self.items.setdefault(cur, set()).add(toks[i + 2][1])
            starts_path = kind == "id" and val in MODULE_REF_STARTS and prev != "::"
            if starts_path and i + 1 < n and toks[i + 1][1] == "::":
                segs = [val]
                j = i + 1
                while j + 1 < n and toks[j][1] == "::" and toks[j + 1][0] == "id":
                    segs.append(toks[j + 1][1])
                    j += 2
                self.refs.append((cur, segs, path, line))
                i = j
                continue
            if val == ";":
                attrs = []  # attributes belong to the next item; this one has ended
            i += 1

    # -- resolution

    def resolve(self, ctx, segs, depth=0):
        """The module a path refers to, or None when it leaves the crate."""
        if depth > 12 or not segs:
            return None
        i = 0
        first = segs[0]
        if first == "crate":
            m, i = (), 1
        elif first == "self":
            m, i = ctx, 1
        elif first == "super":
            m = ctx
            while i < len(segs) and segs[i] == "super":
                m = m[:-1]
                i += 1
        elif ctx + (first,) in self.modules:
            m = ctx
        elif first in self.imports.get(ctx, {}):
            ictx, isegs = self.imports[ctx][first]
            return self.resolve(ictx, isegs + segs[1:], depth + 1)
        else:
            return None
        while i < len(segs):
            seg = segs[i]
            if m + (seg,) in self.modules:
                m = m + (seg,)
                i += 1
                continue
            via = self.follow_import(m, seg, segs[i + 1 :], depth)
            return via if via is not None else m
        return m

    def follow_import(self, m, name, rest, depth):
        imp = self.imports.get(m, {}).get(name)
        if imp is not None:
            ictx, isegs = imp
            t = self.resolve(ictx, isegs + rest, depth + 1)
            if t is not None:
                return t
        if name in self.items.get(m, ()):
            return None
        for gctx, gsegs in self.globs.get(m, []):
            g = self.resolve(gctx, gsegs, depth + 1)
            if g is None or g == m:
                continue
            if name in self.items.get(g, ()) or name in self.imports.get(g, {}):
                t = self.resolve(g, ["self", name] + rest, depth + 1)
                if t is not None:
                    return t
        return None


def match_close(toks, i, open_, close):
    depth = 0
    for j in range(i, len(toks)):
        if toks[j][1] == open_:
            depth += 1
        elif toks[j][1] == close:
            depth -= 1
            if depth == 0:
                return j
    return len(toks) - 1


def find_path_attr(attrs):
    for a in attrs:
        if len(a) >= 3 and a[0] == ("id", "path", a[0][2]) and a[1][1] == "=" and a[2][0] == "str":
            return a[2][1]
    return None


def use_paths(toks):
    """Expands a use tree into (segments, alias, is_glob, line) for each leaf."""
    out = []

    def tree(i, prefix):
        segs = list(prefix)
        line = toks[i][2] if i < len(toks) else 0
        if i < len(toks) and toks[i][1] == "::":
            i += 1  # a leading `::` (extern crate path)
            segs = ["::"]
        while i < len(toks):
            kind, val, line = toks[i]
            if val == "{":
                i += 1
                while i < len(toks) and toks[i][1] != "}":
                    i = tree(i, segs)
                    if i < len(toks) and toks[i][1] == ",":
                        i += 1
                return i + 1
            if val == "*":
                out.append((segs, None, True, line))
                return i + 1
            if kind == "id":
                if val == "self" and segs:
                    pass  # `a::{self}` imports `a` itself
                else:
                    segs = segs + [val]
                i += 1
                if i < len(toks) and toks[i][1] == "::":
                    i += 1
                    continue
                alias = None
                if i + 1 < len(toks) and toks[i][1] == "as":
                    alias = toks[i + 1][1]
                    i += 2
                if segs[:1] != ["::"]:
                    out.append((segs, alias, False, line))
                return i
            return i + 1
        return i

    i = 0
    while i < len(toks):
        i = tree(i, [])
        if i < len(toks) and toks[i][1] == ",":
            i += 1
    return out


# ---- edges and cycles ---------------------------------------------------------------------


def sibling_edges(crate, rel):
    """{parent module: {(A, B): (file, line)}} for every reference between siblings."""
    edges = {}
    for src, segs, path, line in sorted(crate.refs, key=lambda r: (r[2], r[3])):
        tgt = crate.resolve(src, segs)
        if tgt is None:
            continue
        k = 0
        while k < len(src) and k < len(tgt) and src[k] == tgt[k]:
            k += 1
        if k == len(src) or k == len(tgt):
            continue  # an ancestor or a descendant: not between siblings
        parent = src[:k]
        pair = (src[k], tgt[k])
        edges.setdefault(parent, {}).setdefault(pair, (rel(path), line))
    return edges


def strongly_connected(nodes, succ):
    index, low, on_stack, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(succ.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def covering_cycles(comp, succ):
    """For every edge u -> v inside one strongly connected component, the cycle made of
    that edge and a shortest way back from v to u; each cycle once, shortest first. Every
    edge that takes part in a circle is shown, without listing every combination."""
    comp_set = set(comp)
    seen, cycles = set(), []
    for u in comp:
        for v in sorted(succ.get(u, ())):
            if v not in comp_set:
                continue
            back = shortest_path(v, u, succ, comp_set)
            cyc = [u] + back
            ring = cyc[:-1]
            k = ring.index(min(ring))
            ring = ring[k:] + ring[:k]
            if tuple(ring) in seen:
                continue
            seen.add(tuple(ring))
            cycles.append(ring + [ring[0]])
    cycles.sort(key=lambda c: (len(c), c))
    return cycles


def shortest_path(a, b, succ, allowed):
    """Nodes from a to b (both included), breadth first."""
    prev = {a: None}
    queue = [a]
    for v in queue:
        if v == b:
            break
        for w in sorted(succ.get(v, ())):
            if w in allowed and w not in prev:
                prev[w] = v
                queue.append(w)
    path = [b]
    while path[-1] != a:
        path.append(prev[path[-1]])
    return path[::-1]


def check(root, out=sys.stdout):
    root = os.path.abspath(root)

    def rel(p):
        return os.path.relpath(p, root)

    crates = []
    for pkg in package_dirs(root):
        for name, path in crate_targets(pkg):
            c = Crate(name, path)
            c.parse()
            crates.append(c)
    found = 0
    modules = 0
    for c in crates:
        modules += len(c.modules)
        for parent, edges in sorted(sibling_edges(c, rel).items()):
            succ = {}
            for a, b in edges:
                succ.setdefault(a, set()).add(b)
            nodes = {a for a, _ in edges} | {b for _, b in edges}
            for comp in strongly_connected(nodes, succ):
                where = "`" + "::".join(parent) + "`" if parent else "the crate root"
                print(f"import circle in {c.name} ({rel(c.root_file)}) between children "
                      f"of {where}: {', '.join(comp)}", file=out)
                for cyc in covering_cycles(comp, succ):
                    found += 1
                    print("  " + " -> ".join(cyc), file=out)
                    for a, b in zip(cyc, cyc[1:]):
                        f, line = edges[(a, b)]
                        full_a = "::".join(parent + (a,))
                        full_b = "::".join(parent + (b,))
                        print(f"    {full_a} -> {full_b}: {f}:{line}", file=out)
    if found:
        print(f"{found} import circle(s) between sibling modules; break each one (move the shared "
              "part down into its own module, or up into the parent)", file=out)
        return 1
    print(f"no import circles in {len(crates)} crates, {modules} modules", file=out)
    return 0


# ---- self-test ----------------------------------------------------------------------------

SELF_TEST_CRATE = {
    "Cargo.toml": '[package]\nname = "circle"\nversion = "0.0.0"\n\n[workspace]\nmembers = ["crates/*"]\n',
    "src/lib.rs": "pub mod a;\npub mod b;\npub mod c;\n",
    "src/a.rs": "//! Mentions crate::c::Gone only in a comment.\n"
                "pub use inner::Thing;\nmod inner;\npub fn f() -> &'static str { \"crate::c::x\" }\n"
                "pub const Q: char = '\"'; /* crate::c::C /* nested */ crate::c::C */\n"
                "pub const R: &str = r#\"crate::c::\"C\"#;\n",
    "src/a/inner.rs": "use crate::b::{self as bee, deep::{Deep}};\npub struct Thing(bee::B, Deep);\n",
    "src/b.rs": "pub struct B;\npub mod deep;\n",
    "src/b/deep.rs": "pub struct Deep;\n#[cfg(test)]\nmod tests {\n    #[test]\n    fn t() { let _ = super::super::super::c::C; }\n}\n",
    "src/c.rs": "#[path = \"elsewhere/x.rs\"]\nmod x;\npub struct C;\n",
    "src/elsewhere/x.rs": "pub fn g() { let _ = super::super::a::Thing::default; }\n",
    "crates/other/Cargo.toml": '[package]\nname = "other"\nversion = "0.0.0"\n',
    "crates/other/src/main.rs": "mod p;\nmod q;\nuse q::Q;\nfn main() {}\n",
    "crates/other/src/p.rs": "pub struct P;\n\npub fn f(q: super::Q) {}\n",
    "crates/other/src/q.rs": "pub struct Q;\nimpl Q {\n    fn p(&self) -> crate::p::P { crate::p::P }\n}\n",
}


def self_test():
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for rel_path, text in SELF_TEST_CRATE.items():
            p = os.path.join(tmp, rel_path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as f:
                f.write(text)

        class Buf:
            def __init__(self):
                self.parts = []

            def write(self, s):
                self.parts.append(s)

        # a -> b (grouped use in a's child), b -> c (a test in b's grandchild),
        # c -> a (a `#[path]` child of c reaching `a::Thing`, re-exported from a::inner).
        buf = Buf()
        code = check(tmp, out=buf)
        text = "".join(buf.parts)
        expect = [
            "  a -> b -> c -> a",
            "    a -> b: src/a/inner.rs:1",
            "    b -> c: src/b/deep.rs:5",
            "    c -> a: src/elsewhere/x.rs:1",
        ]
        if code != 1 or any(e not in text for e in expect):
            ok = False
            sys.stderr.write("self-test: the circle a -> b -> c -> a was not reported as expected:\n" + text)
        # `super::Q`, a name the parent imports from its child q, is a reference to q.
        expect = [
            "  p -> q -> p",
            "    p -> q: crates/other/src/p.rs:3",
            "    q -> p: crates/other/src/q.rs:3",
        ]
        if any(e not in text for e in expect):
            ok = False
            sys.stderr.write("self-test: the circle p -> q -> p was not reported as expected:\n" + text)
        # Breaking one edge (the test's reference, only in a string now) clears the circle.
        deep = os.path.join(tmp, "src/b/deep.rs")
        with open(deep, "w", encoding="utf-8") as f:
            f.write('pub struct Deep;\nconst S: &str = "super::super::super::c::C";\n')
        with open(os.path.join(tmp, "crates/other/src/q.rs"), "w", encoding="utf-8") as f:
            f.write("pub struct Q;\n")
        buf = Buf()
        code = check(tmp, out=buf)
        text = "".join(buf.parts)
        if code != 0 or "no import circles in 2 crates, 10 modules" not in text:
            ok = False
            sys.stderr.write("self-test: a crate without a circle was not passed:\n" + text)
    if ok:
        print("check-circles self-test: ok")
    return 0 if ok else 1


def main(argv):
    if "--help" in argv or "-h" in argv:
        print(__doc__)
        return 0
    if "--self-test" in argv:
        return self_test()
    roots = [a for a in argv if not a.startswith("-")]
    root = roots[0] if roots else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    return check(root)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
