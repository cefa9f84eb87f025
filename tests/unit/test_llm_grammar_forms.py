"""An object's alternative forms in the tool-call grammar: FileEdit takes `old_string` and
`new_string`, or `edits`. Before its schema said so, the grammar allowed a FileEdit call with a
`new_string` and no `old_string` (SmolLM2-135M wrote it four times in a row in the held-out tasks
`h_edit_typo` and `c_edit_rename_fn`); each was refused as invalid. Checked with the GBNF recogniser
of tests/support, on the real tool's schema; arguments are still coerced by its properties."""

from __future__ import annotations

import json

import pytest
from openmono.llm import ToolSpec
from openmono.llm._coerce import coerce_arguments
from openmono.llm._grammar import tool_grammar
from openmono_contracts.toolfacts import params_schema
from openmono_worker.tools.file_edit import Params
from pydantic import ValidationError

from tests.support.gbnf import Grammar

SCHEMA = params_schema(Params)
GRAMMAR = Grammar(tool_grammar([ToolSpec(name="FileEdit", parameters=SCHEMA)], prose=False))


def _call(arguments: dict[str, object]) -> str:
    body = json.dumps({"name": "FileEdit", "arguments": arguments})
    return f"<tool_call>\n{body}\n</tool_call>"


VALID = [
    {"file_path": "mail.py", "old_string": "recieve", "new_string": "receive"},
    {"file_path": "mail.py", "old_string": "a", "new_string": "b", "replace_all": True},
    {"file_path": "mail.py", "edits": [{"old_string": "a", "new_string": "b"}]},
]
INVALID = [
    {"file_path": "mail.py", "new_string": "def receive(box):"},  # the 135M model's call
    {"file_path": "mail.py", "old_string": "recieve"},
    {"file_path": "mail.py", "old_string": None, "new_string": "x"},
    {"file_path": "mail.py", "old_string": "a", "new_string": "b", "edits": []},
    {"file_path": "mail.py"},
]


@pytest.mark.parametrize("arguments", VALID)
def test_each_form_is_allowed_and_valid(arguments: dict[str, object]) -> None:
    assert GRAMMAR.accepts(_call(arguments))
    Params.model_validate(arguments)


@pytest.mark.parametrize("arguments", INVALID)
def test_what_the_tool_refuses_the_grammar_does_not_allow(arguments: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        Params.model_validate(arguments)
    assert not GRAMMAR.accepts(_call(arguments))


def test_the_forms_still_coerce_by_property() -> None:
    got = coerce_arguments({"file_path": "a", "old_string": "x", "new_string": "y",
                            "replace_all": "true"}, SCHEMA)  # fmt: skip
    assert got["replace_all"] is True


def test_a_value_anyof_stays_a_choice_of_values() -> None:
    schema = {"type": "object", "properties": {"n": {"anyOf": [{"type": "integer"},
              {"type": "null"}]}}, "required": ["n"]}  # fmt: skip
    grammar = Grammar(tool_grammar([ToolSpec(name="T", parameters=schema)], prose=False))
    text = '<tool_call>\n{{"name": "T", "arguments": {{"n": {}}}}}\n</tool_call>'
    assert grammar.accepts(text.format("3")) and grammar.accepts(text.format("null"))
    assert not grammar.accepts(text.format('"3"'))
