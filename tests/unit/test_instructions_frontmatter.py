"""Front matter as other agents write it: YAML, Cursor's unquoted globs, and what is malformed
(one error naming the file and the line)."""

from __future__ import annotations

from pathlib import Path

import pytest
from openmono.instructions import FrontMatterError, parse

FILE = Path("rule.mdc")


def test_yaml_front_matter_and_body() -> None:
    doc = parse(FILE, "---\ndescription: Go\nglobs: ['**/*.go']\nalwaysApply: false\n---\n\nBody\n")
    assert doc.fields == {"description": "Go", "globs": ["**/*.go"], "alwaysApply": False}
    assert doc.body == "Body"


@pytest.mark.parametrize(
    ("line", "value"),
    [
        ("globs: **/*.go", "**/*.go"),  # a YAML alias: an error for YAML, Cursor's usual form
        ("globs: *.ts, *.tsx", "*.ts, *.tsx"),
        ("globs: src/**/*.{ts,tsx} # the sources", "src/**/*.{ts,tsx}"),
        ("globs: [*.ts, '*.tsx']", ["*.ts", "*.tsx"]),
    ],
)
def test_cursor_unquoted_globs_are_read_as_written(line: str, value: object) -> None:
    doc = parse(FILE, f"---\ndescription: Uses: colons\n{line}\nalwaysApply: TRUE\n---\nx")
    assert doc.fields["globs"] == value
    assert doc.fields["alwaysApply"] is True
    assert doc.fields["description"] == "Uses: colons"


def test_an_indented_list_under_an_empty_key() -> None:
    text = "---\npaths:\n  - **/*.py\n  - 'tests/**'\nname: x: y\n---\nbody"
    assert parse(FILE, text).fields == {"paths": ["**/*.py", "tests/**"], "name": "x: y"}


def test_no_front_matter_is_all_body() -> None:
    assert parse(FILE, "\ufeff# Title\n\ntext\n").fields == {}
    assert parse(FILE, "\ufeff# Title\n\ntext\n").body == "# Title\n\ntext"
    assert parse(FILE, "---\n---\nonly body").body == "only body"


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        ("---\ndescription: x\nglobs: **/*.go\n  stray indented text\n---\n", 4, "cannot read"),
        ("---\ndescription: x\nthis line has no colon\n---\n", 3, "expected `key: value`"),
        ("---\ndescription: x\n", 1, "no closing '---' line"),
        ("---\n- a\n- b\n---\n", 2, "expected `key: value` lines"),
    ],
)
def test_malformed_front_matter_names_the_file_and_line(text: str, line: int, problem: str) -> None:
    with pytest.raises(FrontMatterError) as caught:
        parse(Path("/w/.cursor/rules/bad.mdc"), text)
    assert caught.value.line == line
    assert problem in caught.value.problem
    assert str(caught.value).startswith(f"/w/.cursor/rules/bad.mdc:{line}: malformed front matter")


@pytest.mark.parametrize(
    "block",
    [
        "name: x\ndescription: Plain words\nmax_turns: 8\nalwaysApply: false\nmodel:",
        "flag: yes\nother: off\nempty: ~\nnull_value: null\nversion: 1.0\nwhen: 2024-01-02",
        'description: it\'s fine\nhint: [a, b]\nquoted: "x: y"\nn: -3\nkey.dotted: v',
    ],
)
def test_plain_lines_mean_what_yaml_makes_of_them(block: str) -> None:
    import yaml

    assert parse(FILE, f"---\n{block}\n---\nbody").fields == yaml.safe_load(block)
