"""Schema coercion of tool arguments (the schemas look like pydantic's)."""

from __future__ import annotations

from typing import Any

import pytest
from openmono.llm._coerce import coerce_arguments

SCHEMA: dict[str, Any] = {
    "$defs": {
        "Edit": {
            "type": "object",
            "properties": {
                "old_string": {"type": "string"},
                "replace_all": {"type": "boolean"},
            },
        }
    },
    "type": "object",
    "properties": {
        "s": {"type": "string"},
        "i": {"type": "integer"},
        "n": {"type": "number"},
        "b": {"type": "boolean"},
        "oi": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
        "arr": {"type": "array", "items": {"type": "integer"}},
        "edits": {"type": "array", "items": {"$ref": "#/$defs/Edit"}},
        "obj": {"type": "object", "properties": {"k": {"type": "integer"}}},
        "multi": {"type": ["integer", "string"]},
        "free": {},
    },
}


@pytest.mark.parametrize(
    ("key", "given", "expected"),
    [
        ("i", "42", 42),
        ("i", " -3 ", -3),
        ("i", "5.0", 5),
        ("i", "5.5", "5.5"),  # not an integer: left for validation to report
        ("i", 7.0, 7),
        ("n", "2.5", 2.5),
        ("n", "3", 3),
        ("n", "abc", "abc"),
        ("b", "true", True),
        ("b", "False", False),
        ("b", "yes", "yes"),
        ("oi", "null", None),
        ("oi", "12", 12),
        ("s", 12, "12"),
        ("s", 1.5, "1.5"),
        ("s", "true", "true"),
        ("arr", "[1, 2]", [1, 2]),
        ("arr", ["1", "2"], [1, 2]),
        ("arr", "[1,", "[1,"),
        (
            "edits",
            '[{"old_string": "a", "replace_all": "true"}]',
            [{"old_string": "a", "replace_all": True}],
        ),
        ("obj", '{"k": "3"}', {"k": 3}),
        ("obj", "[1]", "[1]"),  # an array where an object is wanted: untouched
        ("multi", "5", "5"),  # a string is acceptable as it is
        ("free", "5", "5"),
    ],
)
def test_coercion(key: str, given: Any, expected: Any) -> None:
    assert coerce_arguments({key: given}, SCHEMA) == {key: expected}


def test_unknown_keys_and_missing_schema_are_untouched() -> None:
    assert coerce_arguments({"zzz": "1"}, SCHEMA) == {"zzz": "1"}
    assert coerce_arguments({"i": "1"}, None) == {"i": "1"}
    assert coerce_arguments({"i": "1"}, {}) == {"i": "1"}


def test_input_is_not_mutated() -> None:
    args = {"i": "1", "arr": ["2"]}
    coerce_arguments(args, SCHEMA)
    assert args == {"i": "1", "arr": ["2"]}
