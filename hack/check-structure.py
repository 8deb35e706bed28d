#!/usr/bin/env python3
"""Fails when the modules of a crate import each other in a circle.

For every crate under crates/*, reads the non-test Rust code of src/ (skipping `#[cfg(test)]`
items, `mod tests { ... }` blocks, files named tests.rs and files under a tests/ directory) and
builds the graph of module -> module imports. A module is a file. An import is a path into the
crate: `crate::a::b`, `super::x`, `self::x`, a child module's name (`child::x`), or a name a `use`
brought in (`use crate::status; status::report::gather()`), in `use` statements (also inside
`{...}` groups, and `pub use`/`pub(crate) use`) and in code. A path lands on the deepest module
file it names (`a/b.rs` or `a/b/mod.rs`, else `a.rs` or `a/mod.rs`); a path to an item that
module only re-exports (`pub use c::Item`) lands where the item comes from.

Two graphs are checked, each for circles (strongly connected components of more than one node):
the modules, and the top-level entries of src/ (a folder, with its `foo.rs` when both exist, or
a file at the top). Edges into a module's own descendants (`mod.rs` using its children) are
ordinary edges: they close a circle only with an edge back up, such as a child using an item
its parent defines.

On a circle it prints every arrow in it with one example import (file:line) and exits 1. When
a crate passes it prints its modules, imports and floors: the levels of the longest chain of
imports (a crate whose modules import nothing from each other has 1 floor).

    hack/check-structure.py [CRATE_DIR...]   (default: every crates/*; make check-structure)
    hack/check-structure.py --self-test      (checks the check on small trees of its own)
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import tempfile
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# ---------------------------------------------------------------------------------------------
# Reading Rust: comments and literals blanked out, then tokens.

TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|::|\S")
OPEN, CLOSE = "([{", ")]}"
RAW_STRING = re.compile(r'b?r(#*)"')


def blank(text: str) -> str:
    """The text with comments, string and char literals replaced by spaces (newlines kept)."""
    out: list[str] = []
    i, n = 0, len(text)

    def keep_lines(chunk: str) -> str:
        return "".join(c if c == "\n" else " " for c in chunk)

    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(keep_lines(text[i:j]))
            i = j
        elif c in "br" and (m := RAW_STRING.match(text, i)) and not _ident_before(text, i):
            end = text.find('"' + m.group(1), m.end())
            j = n if end < 0 else end + 1 + len(m.group(1))
            out.append(keep_lines(text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(keep_lines(text[i:j + 1]))
            i = j + 1
        elif c == "'":
            # A char literal ('a', '\n', '\u{1F600}', '\''), else a lifetime or label ('a).
            if text.startswith("\\", i + 1):
                j = i + 2
                while j < n and text[j] != "'":
                    j += 2 if text[j] == "\\" else 1
                out.append(" " * (j + 1 - i))
                i = j + 1
            elif i + 2 < n and text[i + 2] == "'":
                out.append("   ")
                i += 3
            else:
                out.append(c)
                i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _ident_before(text: str, i: int) -> bool:
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")


@dataclass
class Tok:
    text: str
    line: int


def tokens(text: str) -> list[Tok]:
    starts = [0] + [m.end() for m in re.finditer("\n", text)]
    return [Tok(m.group(), bisect_right(starts, m.start())) for m in TOKEN.finditer(blank(text))]


# ---------------------------------------------------------------------------------------------
# One file: its `mod` declarations, `use` imports and paths, per (inline) module scope.


@dataclass
class Use:
    """One name a `use` brings into a scope: `path` (segments as written), bound to `name`."""

    scope: tuple[str, ...]  # inline modules inside the file, outermost first
    path: list[str]
    name: str | None  # None for a glob
    public: bool
    line: int


@dataclass
class PathRef:
    """A path in code (not in a `use`)."""

    scope: tuple[str, ...]
    path: list[str]
    line: int


@dataclass
class FileItems:
    mods: dict[tuple[str, ...], list[tuple[str, int]]] = field(default_factory=dict)
    inline: set[tuple[str, ...]] = field(default_factory=set)
    uses: list[Use] = field(default_factory=list)
    paths: list[PathRef] = field(default_factory=list)


def is_test_cfg(attr: list[Tok]) -> bool:
    """`#[cfg(test)]`, `#[cfg(all(test, ...))]`; not `#[cfg(not(test))]`."""
    words = [t.text for t in attr]
    if len(words) < 3 or words[0] != "cfg":
        return False
    for k, w in enumerate(words):
        if w == "test" and not (k >= 2 and words[k - 2] == "not"):
            return True
    return False


def skip_item(toks: list[Tok], i: int) -> int:
    """The index after the item starting at i: its `;` or the `}` closing its block."""
    depth = 0
    while i < len(toks):
        t = toks[i].text
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            depth -= 1
            if depth == 0 and t == "}":
                return i + 1
        elif t == ";" and depth == 0:
            return i + 1
        i += 1
    return i


def read_attr(toks: list[Tok], i: int) -> tuple[list[Tok], int]:
    """At `#[` (or `#![`): the attribute's tokens and the index after its `]`."""
    j = i + 1
    if toks[j].text == "!":
        j += 1
    start, depth = j + 1, 0
    while j < len(toks):
        if toks[j].text in OPEN:
            depth += 1
        elif toks[j].text in CLOSE:
            depth -= 1
            if depth == 0:
                return toks[start:j], j + 1
        j += 1
    return toks[start:], j


def parse_use_tree(toks: list[Tok], i: int, prefix: list[str], out: list[tuple[list[str], str | None]]) -> int:
    """Parses a use tree at i into (path, bound name) pairs; returns the index after it."""
    path = list(prefix)
    while i < len(toks):
        t = toks[i].text
        if t == "{":
            i += 1
            while toks[i].text != "}":
                i = parse_use_tree(toks, i, path, out)
                if toks[i].text == ",":
                    i += 1
            return i + 1
        if t == "*":
            out.append((path, None))
            return i + 1
        if t == "::":
            i += 1
            continue
        if re.match(r"[A-Za-z_]", t):
            path.append(t)
            i += 1
            if i < len(toks) and toks[i].text == "as":
                out.append((path, toks[i + 1].text))
                return i + 2
            if i >= len(toks) or toks[i].text != "::":
                name = path[-2] if t == "self" and len(path) > 1 else t
                out.append((path[:-1] if t == "self" and len(path) > 1 else path, name))
                return i
            continue
        return i + 1
    return i


def read_file(text: str) -> FileItems:
    toks = tokens(text)
    items = FileItems()
    scope: list[tuple[str, int]] = []  # (inline module, depth at its `{`)
    depth = 0
    i = 0

    def here() -> tuple[str, ...]:
        return tuple(name for name, _ in scope)

    while i < len(toks):
        t = toks[i].text
        if t == "#" and i + 1 < len(toks) and toks[i + 1].text == "[":
            attr, j = read_attr(toks, i)
            if is_test_cfg(attr):
                while j < len(toks) and toks[j].text == "#":
                    j = read_attr(toks, j)[1]
                i = skip_item(toks, j)
                continue
            # Any other attribute is read as code: it can name paths (`#[arg(add = crate::x::f)]`).
        if t == "mod" and i + 2 < len(toks) and re.match(r"[A-Za-z_]", toks[i + 1].text):
            name, nxt = toks[i + 1].text, toks[i + 2].text
            if nxt == ";":
                if name != "tests":
                    items.mods.setdefault(here(), []).append((name, toks[i].line))
                i += 3
                continue
            if nxt == "{":
                if name == "tests":
                    i = skip_item(toks, i)
                    continue
                items.mods.setdefault(here(), []).append((name, toks[i].line))
                depth += 1
                scope.append((name, depth))
                items.inline.add(here())
                i += 3
                continue
        if t == "use":
            public = i > 0 and (toks[i - 1].text == "pub" or (toks[i - 1].text == ")" and _pub_paren(toks, i - 1)))
            found: list[tuple[list[str], str | None]] = []
            j = i + 1
            if toks[j].text == "::":
                j += 1
            j = parse_use_tree(toks, j, [], found)
            for path, name in found:
                items.uses.append(Use(here(), path, name, public, toks[i].line))
            i = j
            continue
        if t in OPEN:
            depth += 1
        elif t in CLOSE:
            if t == "}" and scope and scope[-1][1] == depth:
                scope.pop()
            depth -= 1
        elif re.match(r"[A-Za-z_]", t) and i + 2 < len(toks) and toks[i + 1].text == "::":
            prev = toks[i - 1].text if i else ""
            if prev not in ("::", "$", ".", "'"):
                path, j = [t], i + 1
                while j + 1 < len(toks) and toks[j].text == "::" and re.match(r"[A-Za-z_]", toks[j + 1].text):
                    path.append(toks[j + 1].text)
                    j += 2
                if len(path) > 1:
                    items.paths.append(PathRef(here(), path, toks[i].line))
                i = j
                continue
        i += 1
    return items


def _pub_paren(toks: list[Tok], close: int) -> bool:
    """Whether the `)` at close ends `pub(...)`."""
    j = close
    while j > 0 and toks[j].text != "(":
        j -= 1
    return j > 0 and toks[j - 1].text == "pub"


# ---------------------------------------------------------------------------------------------
# A crate's module tree and import graph.


def is_test_file(rel: Path) -> bool:
    return rel.name == "tests.rs" or "tests" in rel.parts[:-1]


@dataclass
class Edge:
    src: str
    dst: str
    where: str  # file:line
    path: str


@dataclass
class Tree:
    """The modules of one crate root (lib.rs, main.rs, bin/x.rs)."""

    src: Path
    files: dict[tuple[str, ...], str] = field(default_factory=dict)  # module path -> file
    items: dict[str, FileItems] = field(default_factory=dict)  # file -> its items
    scope_of: dict[str, tuple[str, ...]] = field(default_factory=dict)  # file -> module path

    def load(self, rel: Path, modpath: tuple[str, ...], is_dir_owner: bool) -> None:
        key = rel.as_posix()
        self.files[modpath] = key
        self.scope_of[key] = modpath
        items = read_file((self.src / rel).read_text(encoding="utf-8"))
        self.items[key] = items
        base = rel.parent if is_dir_owner else rel.with_suffix("")
        for inline, mods in items.mods.items():
            for name, _ in mods:
                child_modpath = modpath + inline + (name,)
                if inline + (name,) in items.inline:
                    self.files[child_modpath] = key
                    continue
                folder = base.joinpath(*inline)
                for cand, owner in ((folder / f"{name}.rs", False), (folder / name / "mod.rs", True)):
                    if (self.src / cand).is_file() and not is_test_file(cand):
                        self.load(cand, child_modpath, owner)
                        break

    def children(self, modpath: tuple[str, ...]) -> set[str]:
        key = self.files.get(modpath)
        if key is None:
            return set()
        inner = modpath[len(self.scope_of[key]):]
        return {name for name, _ in self.items[key].mods.get(inner, [])}


class Resolver:
    def __init__(self, tree: Tree):
        self.tree = tree
        # module path -> name -> (absolute path, file, line) for every name a `use` binds there
        self.names: dict[tuple[str, ...], dict[str, list[str]]] = {}
        self.public: dict[tuple[str, ...], dict[str, list[str]]] = {}
        for key, items in tree.items.items():
            for use in items.uses:
                scope = tree.scope_of[key] + use.scope
                if use.name is None:
                    continue
                absolute = self.absolute(use.path, scope, names=False)
                if absolute is None:
                    continue
                self.names.setdefault(scope, {})[use.name] = absolute
                if use.public:
                    self.public.setdefault(scope, {})[use.name] = absolute

    def absolute(self, path: list[str], scope: tuple[str, ...], names: bool = True) -> list[str] | None:
        """The path from the crate root, or None when it does not start in this crate. With
        `names`, a path may start with a name a `use` bound in the scope."""
        first = path[0]
        if first == "crate":
            return path[1:]
        if first in ("super", "self"):
            base = list(scope)
            k = 0
            while k < len(path) and path[k] in ("super", "self"):
                if path[k] == "super":
                    if not base:
                        return None
                    base.pop()
                k += 1
            return base + path[k:]
        if first in self.tree.children(scope):
            return list(scope) + path
        if names:
            bound = self.names.get(scope, {}).get(first)
            if bound is not None:
                return bound + path[1:]
        return None

    def land(self, absolute: list[str], depth: int = 0) -> tuple[str, list[str]] | None:
        """The module file a path from the crate root lands on, and what is left of the path."""
        for k in range(len(absolute), -1, -1):
            modpath = tuple(absolute[:k])
            if modpath in self.tree.files:
                rest = absolute[k:]
                again = self.public.get(modpath, {}).get(rest[0]) if rest else None
                if again is not None and depth < 8 and again + rest[1:] != absolute:
                    return self.land(again + rest[1:], depth + 1)
                return self.tree.files[modpath], rest
        return None

    def edges(self) -> list[Edge]:
        out: list[Edge] = []
        for key, items in self.tree.items.items():
            base = self.tree.scope_of[key]
            for use in items.uses:
                absolute = self.absolute(use.path, base + use.scope, names=False)
                landed = self.land(absolute) if absolute is not None else None
                # Importing a module by name is no edge: its uses in code are.
                if landed and (landed[1] or use.name is None):
                    out.append(Edge(key, landed[0], f"{key}:{use.line}", "::".join(use.path)))
            for ref in items.paths:
                absolute = self.absolute(ref.path, base + ref.scope)
                landed = self.land(absolute) if absolute is not None else None
                if landed and landed[1]:
                    out.append(Edge(key, landed[0], f"{key}:{ref.line}", "::".join(ref.path)))
        return [e for e in out if e.src != e.dst]


# ---------------------------------------------------------------------------------------------
# Graphs: circles (strongly connected components) and floors.


def components(nodes: set[str], arrows: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(nodes):
        if start in index:
            continue
        work = [(start, iter(sorted(arrows.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(arrows.get(nxt, ())))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    comp.append(top)
                    if top == node:
                        break
                found.append(sorted(comp))
    return found


def floors(nodes: set[str], arrows: dict[str, set[str]]) -> int:
    """Levels of the longest chain in the graph with every circle collapsed to one node."""
    return max(levels(nodes, arrows).values(), default=0)


def levels(nodes: set[str], arrows: dict[str, set[str]]) -> dict[str, int]:
    """Each node's level: 1 for a node that imports nothing, else one above the highest node it
    imports (a circle is one node)."""
    comp_of = {}
    comps = components(nodes, arrows)
    for k, comp in enumerate(comps):
        for n in comp:
            comp_of[n] = k
    # Tarjan emits a component after every component it reaches: levels in emission order.
    level = [1] * len(comps)
    for k, comp in enumerate(comps):
        for n in comp:
            for m in arrows.get(n, ()):
                if comp_of[m] != k:
                    level[k] = max(level[k], level[comp_of[m]] + 1)
    return {n: level[comp_of[n]] for n in nodes}


@dataclass
class Graph:
    """One graph of a crate: its nodes, arrows (one example import each) and circles."""

    nodes: set[str]
    arrows: dict[tuple[str, str], Edge]
    circles: list[list[Edge]]
    floors: int
    level: dict[str, int]


def graph(nodes: set[str], edges: list[Edge], key) -> Graph:
    """The graph of `edges` with every file mapped to its node by `key`."""
    arrows: dict[tuple[str, str], Edge] = {}
    for e in edges:
        a, b = key(e.src), key(e.dst)
        if a != b:
            arrows.setdefault((a, b), Edge(a, b, e.where, e.path))
    succ: dict[str, set[str]] = {}
    for a, b in arrows:
        succ.setdefault(a, set()).add(b)
    found = []
    for comp in components(nodes, succ):
        if len(comp) > 1:
            inside = set(comp)
            found.append([e for (a, b), e in sorted(arrows.items()) if a in inside and b in inside])
    return Graph(nodes, arrows, found, floors(nodes, succ), levels(nodes, succ))


@dataclass
class Report:
    name: str  # the crate's directory, from the repository root when inside it
    modules: Graph
    entries: Graph
    downward: int  # arrows into a module's own descendants
    unmapped: list[str]  # folders of src/ the crate root's `//!` map does not name

    @property
    def entry_circles(self) -> list[list[Edge]]:
        """Circles of top-level entries through a folder (one of files only is a module circle)."""
        return [c for c in self.entries.circles if any(e.src.endswith("/") for e in c)]

    @property
    def ok(self) -> bool:
        return not self.modules.circles and not self.entry_circles and not self.unmapped

    def folders_top_down(self) -> str:
        """The folders of src/ by floor, highest first: `a/ > b/ c/ > d/`."""
        by_level: dict[int, list[str]] = {}
        for node, level in self.entries.level.items():
            if node.endswith("/"):
                by_level.setdefault(level, []).append(node)
        return " > ".join(" ".join(sorted(by_level[k])) for k in sorted(by_level, reverse=True))


def check_crate(crate: Path) -> Report:
    src = crate / "src"
    roots = [p for p in (src / "lib.rs", src / "main.rs") if p.is_file()]
    roots += sorted((src / "bin").glob("*.rs")) if (src / "bin").is_dir() else []
    edges: list[Edge] = []
    files: set[str] = set()
    downward: set[tuple[str, str]] = set()
    for root in roots:  # each root is a crate of its own: `crate::` means its tree
        tree = Tree(src)
        tree.load(root.relative_to(src), (), True)
        files |= set(tree.items)
        found = Resolver(tree).edges()
        edges += found
        downward |= {(e.src, e.dst) for e in found if is_descendant(tree, e.src, e.dst)}
    folders = {f.split("/")[0] for f in files if "/" in f}

    def entry(file: str) -> str:
        """The top-level entry of src/ a module file belongs to: `status/` for status/x.rs,
        and for status.rs when the folder exists; else the file itself."""
        if "/" in file:
            return file.split("/")[0] + "/"
        if file[:-3] in folders:
            return file[:-3] + "/"
        return file

    crate = crate.resolve()
    root_doc = "\n".join(
        line for line in roots[0].read_text(encoding="utf-8").splitlines() if line.startswith("//!")
    ) if roots else ""
    return Report(
        str(crate.relative_to(ROOT)) if crate.is_relative_to(ROOT) else str(crate),
        modules=graph(files, edges, lambda f: f),
        entries=graph({entry(f) for f in files}, edges, entry),
        downward=len(downward),
        # src/bin/ holds crate roots of their own, not modules of this one.
        unmapped=sorted(f for f in folders if f != "bin" and not named_in(f, root_doc)),
    )


def named_in(folder: str, doc: str) -> bool:
    """Whether `doc` (a crate root's `//!` lines) names `folder` in code: `x`, [`x`] or `x/`."""
    return re.search(rf"`{re.escape(folder)}/?`", doc) is not None


def is_descendant(tree: Tree, src: str, dst: str) -> bool:
    a, b = tree.scope_of[src], tree.scope_of[dst]
    return len(b) > len(a) and b[: len(a)] == a


def print_circles(report: Report) -> None:
    for kind, found in (("modules", report.modules.circles), ("top-level entries of src/", report.entry_circles)):
        for circle in found:
            members = sorted({e.src for e in circle})
            print(f"{report.name}: import circle between {len(members)} {kind}: {', '.join(members)}")
            width = max(len(f"{e.src} -> {e.dst}") for e in circle)
            for e in circle:
                print(f"  {f'{e.src} -> {e.dst}':<{width}}  {report.name}/src/{e.where}  {e.path}")


def main(argv: list[str]) -> int:
    if argv == ["--self-test"]:
        return self_test()
    if argv and argv[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        return 2
    crates = [Path(a) for a in argv] or sorted(p for p in (ROOT / "crates").iterdir() if (p / "src").is_dir())
    failed = []
    for crate in crates:
        report = check_crate(crate)
        if report.ok:
            print(
                f"ok   {report.name}: {len(report.modules.nodes)} modules, "
                f"{len(report.modules.arrows)} imports ({report.downward} into a module's own "
                f"descendants), {report.modules.floors} floors; {len(report.entries.nodes)} "
                f"top-level entries, {report.entries.floors} floors"
            )
            if any(n.endswith("/") for n in report.entries.nodes):
                print(f"     folders, top down: {report.folders_top_down()}")
        else:
            print_circles(report)
            print(f"{report.name}: folders, top down: {report.folders_top_down()}")
            for folder in report.unmapped:
                print(
                    f"{report.name}: the folder src/{folder}/ is missing from the crate's map: name it "
                    f"(`{folder}`) in the `//!` doc of src/lib.rs (or src/main.rs), where it stands"
                )
            failed.append(report.name)
    if failed:
        print(
            f"\nimport circles or unmapped folders in {', '.join(failed)}: move what both sides use "
            "into a module below both, so that every import points one way, and name every folder "
            "in the crate's map (docs/development.md, Module structure)",
            file=sys.stderr,
        )
        return 1
    return 0


# ---------------------------------------------------------------------------------------------
# Self-test: small trees with known answers, so the check cannot silently pass everything.


@dataclass
class Case:
    files: dict[str, str]
    module_circles: list[list[str]]
    entry_circles: list[list[str]]
    arrows: set[tuple[str, str]] | None = None  # every module arrow, when given
    unmapped: list[str] | None = None  # the folders missing from the map, when given


CASES = {
    "a folder the crate's map does not name": Case(
        {
            "lib.rs": "//! The map: [`named`] first, then `also/`.\npub mod named;\npub mod also;\npub mod forgotten;\n",
            "named/mod.rs": "pub mod x;\n",
            "named/x.rs": "pub struct X;\n",
            "also/mod.rs": "pub struct A;\n",
            "forgotten/mod.rs": "pub struct F;\n",
        },
        [],
        [],
        unmapped=["forgotten"],
    ),
    "a circle of two files": Case(
        {
            "lib.rs": "mod x;\nmod y;\n",
            "x.rs": "use crate::y::B;\npub struct A(B);\n",
            "y.rs": "pub struct B;\npub fn f() -> crate::x::A { todo!() }\n",
        },
        [["x.rs", "y.rs"]],
        [],
    ),
    "a circle of two folders, none of files": Case(
        {
            "lib.rs": "mod f;\nmod g;\n",
            "f/mod.rs": "mod one;\nmod three;\n",
            "f/one.rs": "use crate::g::two::T;\n",
            "f/three.rs": "pub struct U;\n",
            "g/mod.rs": "pub mod two;\n",
            "g/two.rs": "pub struct T(crate::f::three::U);\n",
        },
        [],
        [["f/", "g/"]],
        {("f/one.rs", "g/two.rs"), ("g/two.rs", "f/three.rs")},
    ),
    "a child using its parent's item, no circle; tests, comments and strings ignored": Case(
        {
            "lib.rs": "pub mod p;\n/// See [`crate::p::c::g`], `use crate::p::c;`\n",
            "p/mod.rs": (
                "mod c;\nmod d;\nmod e;\npub struct Item;\n"
                "#[cfg(test)]\nmod tests { use super::c::g; }\n"
                "#[cfg(test)]\n#[allow(dead_code)]\nfn helper() { c::g(Item); }\n"
                "mod tests;\n"
                "// crate::p::c::g()\nconst S: &str = \"crate::p::c::g\";\nconst C: char = '\"';\n"
                "/* crate::p::c::g() /* nested */ crate::p::c::g() */\n"
            ),
            "p/c.rs": (
                "use super::Item;\npub struct Thing;\npub fn g(_: Item) {}\n"
                "const R: &str = r#\"crate::p::d::h \"quoted\" \"#;\npub fn i() -> super::e::E { todo!() }\n"
            ),
            "p/d.rs": "use super::c::Thing;\npub fn h<'a>(_: &'a Thing, _: super::Item) {}\n",
            "p/e.rs": "pub struct E;\n",
            "p/tests.rs": "use super::c::g;\n",
        },
        [],
        [],
        {("p/c.rs", "p/mod.rs"), ("p/c.rs", "p/e.rs"), ("p/d.rs", "p/c.rs"), ("p/d.rs", "p/mod.rs")},
    ),
    "a parent using the child that uses the parent's item": Case(
        {
            "lib.rs": "mod p;\n",
            "p/mod.rs": "mod c;\npub struct Item;\npub fn f() { c::g(Item) }\n",
            "p/c.rs": "pub fn g(_: super::Item) {}\n",
        },
        [["p/c.rs", "p/mod.rs"]],
        [],
    ),
    "foo.rs with a foo/ folder, use groups, aliases, re-exports and attributes": Case(
        {
            "lib.rs": "mod a;\nmod b;\nmod z;\n",
            "a.rs": "mod inner;\npub(crate) use inner::Deep as Shallow;\npub struct Top;\n",
            "a/inner.rs": (
                "use crate::b::{self, leaf::{L}};\npub struct Deep;\n"
                "pub fn k() -> L { b::leaf::f(); todo!() }\n"
            ),
            "b.rs": "pub mod leaf;\npub struct Root;\n",
            "b/leaf.rs": (
                "pub struct L;\npub fn f() -> super::super::a::Shallow { todo!() }\n"
                "pub fn r() -> super::Root { todo!() }\n"
            ),
            "z.rs": "#[arg(value = crate::b::Root::new)]\npub struct Z;\n",
        },
        [["a/inner.rs", "b/leaf.rs"]],
        [["a/", "b/"]],
        {
            ("a.rs", "a/inner.rs"),
            ("a/inner.rs", "b/leaf.rs"),
            ("b/leaf.rs", "a/inner.rs"),
            ("b/leaf.rs", "b.rs"),
            ("z.rs", "b.rs"),
        },
    ),
}


def self_test() -> int:
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, case) in enumerate(CASES.items()):
            crate = Path(tmp) / f"case{k}"
            for rel, text in case.files.items():
                (crate / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
                (crate / "src" / rel).write_text(text, encoding="utf-8")
            report = check_crate(crate)
            got = {
                "module circles": sorted(sorted({e.src for e in c}) for c in report.modules.circles),
                "entry circles": sorted(sorted({e.src for e in c}) for c in report.entry_circles),
                "arrows": set(report.modules.arrows),
                "unmapped": report.unmapped,
            }
            want = {
                "module circles": case.module_circles,
                "entry circles": case.entry_circles,
                "arrows": case.arrows if case.arrows is not None else got["arrows"],
                "unmapped": case.unmapped if case.unmapped is not None else got["unmapped"],
            }
            wrong = [f"{what} {got[what]}, want {want[what]}" for what in got if got[what] != want[what]]
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                status = main([str(crate)])
            if status != (0 if report.ok else 1):
                wrong.append(f"exit status {status} for a tree {'without' if report.ok else 'with'} circles or unmapped folders")
            print(f"{'FAIL' if wrong else 'ok  '} {name}{': ' if wrong else ''}{'; '.join(wrong)}")
            failures += bool(wrong)
    print(f"self-test: {len(CASES) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
