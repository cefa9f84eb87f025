"""The languages the graph reads: grammar, file extensions, tag query and the node types of names.

Each language's definitions and imports are one tree-sitter query (`queries/<lang>.scm`; JS and
TS share `js-common.scm`): a definition is `@def.<kind>` around its `@name`; `@import`,
`@package`, `@scope` mark the rest. Where a name is used is found from the nodes of the
language's identifier types (`ref_types`). Grammars come from the `tree-sitter-language-pack`
wheel (0.13: bundled, nothing is downloaded at run time). Parsers are not thread-safe: each
thread gets its own.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from tree_sitter import Language, Parser, Query
from tree_sitter_language_pack import get_language

_QUERIES = Path(__file__).parent / "queries"
_local = threading.local()


@dataclass(frozen=True)
class LangSpec:
    id: str  # our name for it (what the tool shows)
    grammar: str  # the language pack's name
    extensions: tuple[str, ...]
    query_files: tuple[str, ...]  # concatenated, in order (earlier patterns win a name)
    ref_types: tuple[str, ...]
    # node types that call something, for callers / callees
    call_types: tuple[str, ...]
    # what a name looks like in the source (the words counted as uses)
    word: str = r"[A-Za-z_][A-Za-z0-9_]*"
    # JSDoc comments name code (`{@link X}`, `@returns {X}`): uses, as TypeScript's server counts
    jsdoc: bool = False

    @cached_property
    def words(self) -> re.Pattern[bytes]:
        return re.compile(self.word.encode())

    @cached_property
    def language(self) -> Language:
        return get_language(self.grammar)  # type: ignore[arg-type]

    @cached_property
    def tags_query(self) -> Query:
        source = "\n".join((_QUERIES / name).read_text() for name in self.query_files)
        return Query(self.language, source)

    @cached_property
    def comments_query(self) -> Query:
        return Query(self.language, "(comment) @comment")

    @cached_property
    def refs_query(self) -> Query:
        alternatives = " ".join(f"({t})" for t in self.ref_types)
        return Query(self.language, f"[{alternatives}] @ref")

    def parser(self) -> Parser:
        parsers: dict[str, Parser] | None = getattr(_local, "parsers", None)
        if parsers is None:
            parsers = _local.parsers = {}
        found = parsers.get(self.grammar)
        if found is None:
            found = parsers[self.grammar] = Parser(self.language)
        return found


_JS_REFS = ("identifier", "property_identifier", "shorthand_property_identifier")
_JS_CALLS = ("call_expression", "new_expression")
_JS_WORD = r"[A-Za-z_$][A-Za-z0-9_$]*"

LANGS: tuple[LangSpec, ...] = (
    LangSpec(
        "python", "python", (".py", ".pyi"), ("python.scm",), ("identifier",), ("call", "decorator")
    ),
    LangSpec(
        "javascript",
        "javascript",
        (".js", ".jsx", ".mjs", ".cjs"),
        ("js-common.scm", "javascript.scm"),
        _JS_REFS,
        _JS_CALLS,
        _JS_WORD,
        jsdoc=True,
    ),
    LangSpec(
        "typescript",
        "typescript",
        (".ts", ".mts", ".cts"),
        ("js-common.scm", "typescript.scm"),
        (*_JS_REFS, "type_identifier"),
        _JS_CALLS,
        _JS_WORD,
        jsdoc=True,
    ),
    LangSpec(
        "tsx",
        "tsx",
        (".tsx",),
        ("js-common.scm", "typescript.scm"),
        (*_JS_REFS, "type_identifier"),
        _JS_CALLS,
        _JS_WORD,
        jsdoc=True,
    ),
    LangSpec(
        "go",
        "go",
        (".go",),
        ("go.scm",),
        ("identifier", "type_identifier", "field_identifier", "package_identifier"),
        ("call_expression", "composite_literal"),
    ),
    LangSpec(
        "rust",
        "rust",
        (".rs",),
        ("rust.scm",),
        ("identifier", "type_identifier", "field_identifier"),
        ("call_expression", "macro_invocation", "struct_expression"),
    ),
    LangSpec(
        "java",
        "java",
        (".java",),
        ("java.scm",),
        ("identifier", "type_identifier"),
        ("method_invocation", "object_creation_expression"),
    ),
    LangSpec(
        "c",
        "c",
        (".c", ".h"),
        ("c.scm",),
        ("identifier", "type_identifier", "field_identifier"),
        ("call_expression",),
    ),
    LangSpec(
        "cpp",
        "cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp"),
        ("cpp.scm",),
        ("identifier", "type_identifier", "field_identifier", "namespace_identifier"),
        ("call_expression", "new_expression"),
    ),
    LangSpec(
        "csharp",
        "csharp",
        (".cs",),
        ("csharp.scm",),
        ("identifier",),
        ("invocation_expression", "object_creation_expression"),
    ),
    LangSpec(
        "ruby",
        "ruby",
        (".rb", ".rake"),
        ("ruby.scm",),
        ("identifier", "constant"),
        ("call",),
        r"[A-Za-z_][A-Za-z0-9_]*[?!]?",
    ),
    LangSpec(
        "php",
        "php",
        (".php",),
        ("php.scm",),
        ("name",),
        (
            "function_call_expression",
            "member_call_expression",
            "scoped_call_expression",
            "object_creation_expression",
            "nullsafe_member_call_expression",
        ),
    ),
)

BY_EXTENSION: dict[str, LangSpec] = {ext: spec for spec in LANGS for ext in spec.extensions}
BY_ID: dict[str, LangSpec] = {spec.id: spec for spec in LANGS}


def spec_for(path: str) -> LangSpec | None:
    """The language of a file by its extension (case-insensitive), or None."""
    dot = path.rfind(".")
    return BY_EXTENSION.get(path[dot:].lower()) if dot > path.rfind("/") else None
