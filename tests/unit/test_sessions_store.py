"""Session files: header + one message a line, torn lines, index, resume, snapshots, replay."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openmono.llm import ChatMessage, ToolCall
from openmono.loop import Conversation, replay
from openmono.sessions import (
    RecordedCall,
    SessionError,
    SessionHeader,
    SessionMessage,
    SessionStore,
    SessionWriter,
    Snapshots,
    load_session,
)


def header(ws: str = "/w") -> SessionHeader:
    return SessionHeader(working_directory=ws, model="m")


def test_round_trip_matches_the_design_format(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    h = header()
    with SessionWriter(path, h) as w:
        w.append(SessionMessage(role="user", content="hi"))
        w.append(
            SessionMessage(
                role="assistant",
                content="",
                tool_calls=[RecordedCall(id="c1", name="FileRead", arguments='{"file_path":"a"}')],
            )
        )
        w.append(SessionMessage(role="tool", content="x", tool_call_id="c1", tool_name="FileRead"))
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    assert {"session_id", "started_at", "working_directory", "model"} <= first.keys()
    second = json.loads(lines[2])
    assert {
        "role",
        "content",
        "tool_calls",
        "tool_call_id",
        "tool_name",
        "is_error",
        "timestamp",
    } <= second.keys()
    assert second["tool_calls"] == [
        {"id": "c1", "name": "FileRead", "arguments": '{"file_path":"a"}'}
    ]
    assert path.stat().st_mode & 0o777 == 0o600
    loaded = load_session(path)
    assert loaded.header.session_id == h.session_id
    assert [m.role for m in loaded.messages] == ["user", "assistant", "tool"]
    assert loaded.skipped_lines == 0


def test_torn_last_line_is_skipped_and_cut_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with SessionWriter(path, header()) as w:
        w.append(SessionMessage(role="user", content="one"))
    with path.open("a") as fh:
        fh.write('{"role": "assistant", "content": "half a li')
    loaded = load_session(path)
    assert [m.content for m in loaded.messages] == ["one"]
    assert loaded.skipped_lines == 1
    with SessionWriter(path, loaded.header) as w:
        w.append(SessionMessage(role="assistant", content="two"))
    again = load_session(path)
    assert [m.content for m in again.messages] == ["one", "two"]
    assert again.skipped_lines == 0


def test_file_without_header_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text("not json\n")
    with pytest.raises(SessionError):
        load_session(path)


def test_store_lists_resolves_and_resumes(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    a, b = header("/a"), header("/b")
    b.session_id = a.session_id[:-6] + "ffffff"
    with store.create(a) as w:
        w.append(SessionMessage(role="user", content="first task"))
    store.set_title(a.session_id, "first   task\nwith newline")
    with store.create(b):
        pass
    rows = store.list_sessions()
    assert {r.session_id for r in rows} == {a.session_id, b.session_id}
    row_a = next(r for r in rows if r.session_id == a.session_id)
    assert row_a.title == "first task with newline" and row_a.working_directory == "/a"
    assert store.resolve(a.session_id) == a.session_id
    assert store.resolve(b.session_id[:-1]) == b.session_id
    with pytest.raises(SessionError, match="matches 2"):
        store.resolve(a.session_id[:8])
    with pytest.raises(SessionError, match="no session"):
        store.resolve("nope")
    with pytest.raises(SessionError):
        store.create(a)
    loaded = store.load(a.session_id)
    with store.reopen(loaded) as w:
        w.append(SessionMessage(role="assistant", content="done"))
    assert [m.content for m in store.load(a.session_id).messages] == ["first task", "done"]


def test_store_lists_files_missing_from_the_index(tmp_path: Path) -> None:
    store = SessionStore(tmp_path)
    h = header()
    with SessionWriter(store.path_for(h.session_id), h):
        pass
    assert [r.session_id for r in store.list_sessions()] == [h.session_id]
    assert store.resolve("last") == h.session_id


def test_snapshots_undo_turn_by_turn(tmp_path: Path) -> None:
    snaps = Snapshots(tmp_path / "snaps")
    f, new = tmp_path / "a.txt", tmp_path / "new.txt"
    f.write_text("v1")
    snaps.save("t1", f)
    f.write_text("v2")
    snaps.save("t2", f)
    snaps.save("t2", new)
    f.write_text("v3")
    snaps.save("t2", f)  # second write in the same turn: the turn's first state is kept
    f.write_text("v4")
    new.write_text("created")
    assert sorted(p.name for p in snaps.undo()) == ["a.txt", "new.txt"]
    assert f.read_text() == "v2" and not new.exists()
    assert snaps.undo() == [f]
    assert f.read_text() == "v1"
    assert snaps.undo() == []


def test_conversation_replay_applies_summaries_and_truncation(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    writer = SessionWriter(path, header())
    conv = Conversation(system="sys", writer=writer)
    conv.add(ChatMessage(role="user", content="u1"))
    conv.add(ChatMessage(role="assistant", content="", tool_calls=[ToolCall(id="c", name="Glob")]))
    conv.add(ChatMessage(role="tool", content="out", tool_call_id="c"), tool_name="Glob")
    conv.add(ChatMessage(role="assistant", content="a1"))
    conv.replace_prefix(3, "summary")
    conv.add(ChatMessage(role="user", content="u2"))
    conv.add(ChatMessage(role="assistant", content="a2"))
    conv.truncate(2)
    conv.add(ChatMessage(role="user", content="u2 again"))
    writer.close()
    rebuilt = replay(load_session(path).messages)
    assert [(m.role, m.content) for m in rebuilt] == [(m.role, m.content) for m in conv.messages]
    assert [m.content for m in rebuilt] == ["summary", "a1", "u2 again"]
