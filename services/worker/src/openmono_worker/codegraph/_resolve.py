"""From imports as written to workspace files, per language, and what each file can see.

`Resolver(workspace, tags)` holds the lookup tables of one snapshot of the file set (Python
modules, Go modules from `go.mod`, Rust crates from `Cargo.toml` and their module trees, Java /
C# / PHP packages and namespaces). `scope(file)` is what a file's names can resolve to: names
bound by a named import (`bound`: name -> files) and whole files it sees (`visible`: imported
modules, included headers and their sources, the other files of its Go package, Java package or
C# / PHP namespace). Anything else a name could mean is only a name match (`_graph.py`).
Imports of what is not in the workspace (the standard library, packages) resolve to nothing.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from openmono_worker.codegraph._tags import FileTags, Import

_JS_SUFFIXES = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
_C_SOURCES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".m", ".mm")
_TRANSITIVE = frozenset({"c", "cpp", "ruby"})  # includes / requires reach what they include
_MAX_DEPTH = 6
_CARGO_NAME = re.compile(r'^\s*name\s*=\s*"([^"]+)"', re.MULTILINE)
_GO_MODULE = re.compile(r"^\s*module\s+(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Scope:
    bound: dict[str, tuple[str, ...]] = field(default_factory=dict)
    visible: frozenset[str] = frozenset()


def _read(path: Path, limit: int = 65536) -> str:
    try:
        with path.open("rb") as fh:
            return fh.read(limit).decode("utf-8", "replace")
    except OSError:
        return ""


class Resolver:
    def __init__(self, workspace: Path, tags: dict[str, FileTags]) -> None:
        self.workspace = workspace
        self.tags = tags
        self.files = frozenset(tags)
        self.by_dir: dict[str, list[str]] = defaultdict(list)
        self.by_package: dict[tuple[str, str], list[str]] = defaultdict(list)
        for rel, t in tags.items():
            self.by_dir[posixpath.dirname(rel)].append(rel)
            if t.package:
                self.by_package[(t.lang, t.package)].append(rel)
        self._py_modules = self._python_modules()
        self._go_modules = self._manifests("go.mod", _GO_MODULE, (".go",))
        self._crates = self._manifests("Cargo.toml", _CARGO_NAME, (".rs",))
        self._suffix_cache: dict[str, list[str]] = {}

    # -- tables -----------------------------------------------------------------------------

    def _python_modules(self) -> dict[str, str]:
        """Dotted module name -> file, for every root a package could be imported from."""
        out: dict[str, str] = {}
        for rel, t in sorted(self.tags.items(), key=lambda kv: kv[0].count("/")):
            if t.lang != "python":
                continue
            parts = rel[: rel.rfind(".")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            for i in range(len(parts)):
                out.setdefault(".".join(parts[i:]), rel)
        return out

    def _manifests(
        self, name: str, pattern: re.Pattern[str], suffixes: tuple[str, ...]
    ) -> dict[str, str]:
        """Manifest's declared name -> its directory (relative), for dirs holding such files."""
        dirs = {posixpath.dirname(r) for r in self.tags if r.endswith(suffixes)}
        seen: set[str] = set()
        out: dict[str, str] = {}
        for d in sorted(dirs):
            cur = d
            while cur not in seen:
                seen.add(cur)
                found = pattern.search(_read(self.workspace / cur / name))
                if found and found.group(1) not in out:
                    out[found.group(1)] = cur
                if not cur:
                    break
                cur = posixpath.dirname(cur)
        return out

    def _by_suffix(self, tail: str) -> list[str]:
        """Files whose path ends with `/tail` (or is `tail`)."""
        found = self._suffix_cache.get(tail)
        if found is None:
            found = [r for r in self.files if r == tail or r.endswith("/" + tail)]
            self._suffix_cache[tail] = found
        return found

    @staticmethod
    def _closest(candidates: Iterable[str], near: str) -> list[str]:
        """The candidates sharing the longest directory prefix with `near`."""
        best: list[str] = []
        best_len = -1
        here = near.split("/")[:-1]
        for cand in candidates:
            parts = cand.split("/")[:-1]
            common = 0
            for a, b in zip(here, parts, strict=False):
                if a != b:
                    break
                common += 1
            if common > best_len:
                best, best_len = [cand], common
            elif common == best_len:
                best.append(cand)
        return best

    # -- per language -----------------------------------------------------------------------

    def _python(self, rel: str, imp: Import) -> list[str]:
        target = imp.target
        if target.startswith("."):
            dots = len(target) - len(target.lstrip("."))
            base = posixpath.dirname(rel)
            for _ in range(dots - 1):
                base = posixpath.dirname(base)
            tail = target[dots:]
            path = posixpath.join(base, *tail.split(".")) if tail else base
            mods = [f"{path}.py", f"{path}/__init__.py", f"{path}.pyi"]
            found = [m for m in mods if m in self.files]
            if imp.kind == "names":  # from . import sub: the names may be modules
                found += [
                    m
                    for n in imp.names
                    for m in (f"{path}/{n}.py", f"{path}/{n}/__init__.py")
                    if m in self.files
                ]
            return found
        found = []
        hit = self._py_modules.get(target)
        if hit:
            found.append(hit)
        if imp.kind == "names":
            found += [m for n in imp.names if (m := self._py_modules.get(f"{target}.{n}"))]
        return found

    def _js(self, rel: str, imp: Import) -> list[str]:
        spec = imp.target
        if not spec.startswith("."):
            return []
        base = posixpath.normpath(posixpath.join(posixpath.dirname(rel), spec))
        if base in self.files:
            return [base]
        stem = base
        for js in (".js", ".jsx", ".mjs", ".cjs"):  # TS code imports "./x.js" meaning x.ts
            if base.endswith(js):
                stem = base[: -len(js)]
        for cand in (stem + s for s in _JS_SUFFIXES):
            if cand in self.files:
                return [cand]
        for cand in (f"{base}/index{s}" for s in _JS_SUFFIXES):
            if cand in self.files:
                return [cand]
        return []

    def _go(self, rel: str, imp: Import) -> list[str]:
        path = imp.target
        for module, root in self._go_modules.items():
            if path == module or path.startswith(module + "/"):
                sub = path[len(module) :].lstrip("/")
                d = posixpath.join(root, sub) if root else sub
                return [f for f in self.by_dir.get(d, ()) if f.endswith(".go")]
        parts = path.split("/")  # no go.mod for it: a directory ending the same way (GOPATH)
        for i in range(len(parts)):
            tail = "/".join(parts[i:])
            dirs = [d for d in self.by_dir if d == tail or d.endswith("/" + tail)]
            if dirs:
                return [f for d in dirs for f in self.by_dir[d] if f.endswith(".go")]
        return []

    def _rust_module_file(self, directory: str, name: str) -> str | None:
        for cand in (f"{directory}/{name}.rs", f"{directory}/{name}/mod.rs"):
            cand = cand.lstrip("/")
            if cand in self.files:
                return cand
        return None

    @staticmethod
    def _rust_children_dir(rel: str) -> str:
        """Where `mod x;` in `rel` looks for x (beside lib.rs / main.rs / mod.rs, else below)."""
        d, base = posixpath.split(rel)
        if base in ("lib.rs", "main.rs", "mod.rs"):
            return d
        return posixpath.join(d, base[:-3])

    def _rust_crate_root(self, rel: str) -> str | None:
        best = None
        for root in self._crates.values():
            src = posixpath.join(root, "src") if root else "src"
            if (rel.startswith(src + "/")) and (best is None or len(src) > len(best)):
                best = src
        return best

    def _rust(self, rel: str, imp: Import) -> list[str]:
        if imp.kind == "path":  # mod x;
            child = self._rust_module_file(self._rust_children_dir(rel), imp.target)
            return [child] if child else []
        parts = imp.target.split("::")
        head = parts[0]
        crate_src = self._rust_crate_root(rel)
        if head == "crate" and crate_src:
            start, rest = crate_src, parts[1:]
        elif head == "self":
            start, rest = self._rust_children_dir(rel), parts[1:]
        elif head == "super":
            start, rest = posixpath.dirname(self._rust_children_dir(rel)), parts[1:]
            while rest and rest[0] == "super":
                start, rest = posixpath.dirname(start), rest[1:]
        elif head.replace("_", "-") in self._crates or head in self._crates:
            root = self._crates.get(head) or self._crates.get(head.replace("_", "-"), "")
            start, rest = (posixpath.join(root, "src") if root else "src"), parts[1:]
        else:
            start, rest = self._rust_children_dir(rel), parts
        found: list[str] = []
        here = start
        for part in rest:
            module = self._rust_module_file(here, part)
            if module is None:
                break
            found = [module]
            here = posixpath.join(here, part)
        if not found and head == "crate" and crate_src:  # `use crate::Name`: a root item
            found = [f for f in (f"{crate_src}/lib.rs", f"{crate_src}/main.rs") if f in self.files]
        elif not found and head == "self":
            found = [rel]
        return found

    def _java(self, rel: str, imp: Import) -> list[str]:
        files = self.by_package.get(("java", imp.target), [])
        if imp.kind == "all":
            return list(files)
        names = set(imp.names)
        exact = [f for f in files if posixpath.basename(f)[:-5] in names]
        if exact:
            return exact
        tail = "/".join([*imp.target.split("."), *imp.names[:1]]) + ".java"
        return self._by_suffix(tail)

    def _csharp(self, rel: str, imp: Import) -> list[str]:
        return list(self.by_package.get(("csharp", imp.target), []))

    def _php(self, rel: str, imp: Import) -> list[str]:
        if imp.kind == "path":
            here = posixpath.normpath(posixpath.join(posixpath.dirname(rel), imp.target))
            if here in self.files:
                return [here]
            return self._closest(self._by_suffix(imp.target.lstrip("./")), rel)
        files = self.by_package.get(("php", imp.target), [])
        names = set(imp.names)
        named = [f for f in files if any(d.name in names for d in self.tags[f].defs)]
        return named or list(files)

    def _c(self, rel: str, imp: Import) -> list[str]:
        here = posixpath.normpath(posixpath.join(posixpath.dirname(rel), imp.target))
        headers = [here] if here in self.files else self._closest(self._by_suffix(imp.target), rel)
        out = list(headers)
        for h in headers:  # the header's implementation: same stem, same folder
            stem = h[: h.rfind(".")]
            out += [stem + s for s in _C_SOURCES if stem + s in self.files and stem + s != rel]
        return out

    def _ruby(self, rel: str, imp: Import) -> list[str]:
        target = imp.target if imp.target.endswith(".rb") else imp.target + ".rb"
        if imp.kind == "relative":
            here = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
            return [here] if here in self.files else []
        return self._closest(self._by_suffix(target), rel)

    def targets(self, rel: str, lang: str, imp: Import) -> list[str]:
        reader = {
            "python": self._python,
            "javascript": self._js,
            "typescript": self._js,
            "tsx": self._js,
            "go": self._go,
            "rust": self._rust,
            "java": self._java,
            "csharp": self._csharp,
            "php": self._php,
            "c": self._c,
            "cpp": self._c,
            "ruby": self._ruby,
        }.get(lang)
        if reader is None:
            return []
        return [f for f in reader(rel, imp) if f != rel]

    # -- scopes -----------------------------------------------------------------------------

    def _implicit(self, rel: str, t: FileTags) -> set[str]:
        """Files a file sees without importing them (its package's, its namespace's)."""
        if t.lang == "go":
            return {f for f in self.by_dir.get(posixpath.dirname(rel), ()) if f.endswith(".go")}
        if t.lang in ("java", "php") and t.package:
            return set(self.by_package.get((t.lang, t.package), ()))
        if t.lang == "csharp" and t.package:
            out: set[str] = set()
            parts = t.package.split(".")
            for i in range(1, len(parts) + 1):
                out.update(self.by_package.get(("csharp", ".".join(parts[:i])), ()))
            return out
        return set()

    def scope(self, rel: str) -> Scope:
        t = self.tags[rel]
        bound: dict[str, list[str]] = defaultdict(list)
        visible = self._implicit(rel, t)
        for imp in t.imports:
            files = self.targets(rel, t.lang, imp)
            if not files:
                continue
            if imp.kind == "names":
                for name in imp.names:
                    bound[name].extend(files)
                    if imp.alias and imp.alias != name:
                        bound[imp.alias].extend(files)
            visible.update(files)
        if t.lang in _TRANSITIVE:
            todo = [(f, 1) for f in visible]
            while todo:
                f, depth = todo.pop()
                if depth >= _MAX_DEPTH:
                    continue
                for imp in self.tags[f].imports:
                    for g in self.targets(f, self.tags[f].lang, imp):
                        if g not in visible and g != rel:
                            visible.add(g)
                            todo.append((g, depth + 1))
        visible.discard(rel)
        return Scope({k: tuple(dict.fromkeys(v)) for k, v in bound.items()}, frozenset(visible))
