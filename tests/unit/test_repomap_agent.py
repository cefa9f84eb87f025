"""The agent's side of the repository map: its budget, and what it says is in play."""

from __future__ import annotations

from openmono.agent._repomap import files_in_play, map_budget, text_in_play
from openmono.llm import ChatMessage, ToolCall
from openmono_contracts.toolfacts import ToolFacts


def test_the_budget_scales_with_the_context_and_can_be_set_or_switched_off() -> None:
    assert map_budget(None, 8192) == 1024
    assert map_budget(None, 32768) == 4096
    assert map_budget(None, 262144) == 4096  # capped
    assert map_budget(0, 8192) == 0
    assert map_budget(300, 8192) == 300


def facts_of(name: str) -> ToolFacts:
    return ToolFacts(path_params=("file_path",) if name.startswith("File") else ())


def call(name: str, arguments: str) -> ChatMessage:
    return ChatMessage(
        role="assistant", tool_calls=[ToolCall(id=name, name=name, arguments=arguments)]
    )


def test_files_in_play_are_the_path_arguments_of_the_calls_most_recent_first() -> None:
    messages = [
        ChatMessage(role="user", content="look at a.ts"),
        call("FileRead", '{"file_path": "src/a.ts"}'),
        call("Bash", '{"command": "cat src/z.ts"}'),  # no path parameter
        call("FileEdit", '{"file_path": "src/b.ts", "old_string": "x"}'),
        call("FileRead", "not json"),
        call("FileRead", '{"file_path": "src/a.ts"}'),
    ]
    assert files_in_play(messages, facts_of) == ["src/a.ts", "src/b.ts"]
    assert files_in_play(messages, None) == []


def test_text_in_play_is_the_prompt_and_the_last_user_messages() -> None:
    messages = [ChatMessage(role="user", content=f"message {i}") for i in range(5)]
    assert text_in_play(messages, "now") == "now\nmessage 4\nmessage 3"
    assert len(text_in_play([], "x" * 20000)) == 8000
