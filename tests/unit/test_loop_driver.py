"""The loop driven by an in-process scripted Model: modes, guards, errors, context, todos."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from openmono.llm import ChatMessage, StreamError, TextDelta
from openmono.loop import LoopEvent, Notice, ToolFinished, TurnDone
from openmono.sessions import load_session

from tests.support.agents import MakeAgent
from tests.support.scripted_model import ScriptedModel, cut_off, overflow, reply


def collect() -> tuple[list[LoopEvent], Callable[[LoopEvent], None]]:
    events: list[LoopEvent] = []
    return events, events.append


async def test_plan_mode_is_enforced_when_the_call_executes(make_agent: MakeAgent) -> None:
    agent, model = await make_agent(
        [reply(calls=[("FileWrite", {"file_path": "b.txt", "content": "x"})]), reply("ok")],
        mode="plan",
        yolo=True,
    )
    events, sink = collect()
    done = await agent.run_turn("write b", sink)
    assert done.reason == "stop"
    assert not (agent.workspace / "b.txt").exists()
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished[0].denied and "plan mode" in (finished[0].error or "")
    offered = {t.name for t in model.requests[0][1]}
    assert "FileWrite" not in offered and "FileRead" in offered
    assert "plan mode" in (model.requests[1][0][-1].content or "")


async def test_enter_plan_mode_switches_the_mode_for_later_calls(make_agent: MakeAgent) -> None:
    agent, model = await make_agent(
        [
            reply(calls=[("EnterPlanMode", {"reason": "big change"})]),
            reply(calls=[("FileWrite", {"file_path": "c.txt", "content": "x"})]),
            reply("here is the plan"),
        ],
        yolo=True,
    )
    done = await agent.run_turn("refactor")
    assert done.reason == "stop" and agent.loop.mode == "plan"
    assert not (agent.workspace / "c.txt").exists()
    assert "Current mode: plan" in (model.requests[1][0][0].content or "")


async def test_doom_loop_is_warned_then_blocked_then_stopped(make_agent: MakeAgent) -> None:
    same = ("FileRead", {"file_path": "a.txt"})
    agent, model = await make_agent([reply(calls=[same]) for _ in range(6)])
    events, sink = collect()
    done = await agent.run_turn("read a", sink)
    assert done.reason == "doom_loop"
    assert len(model.requests) == 5
    # tier 1: the third call still runs, and its result carries the warning
    ran = [e for e in events if isinstance(e, ToolFinished) and e.ok]
    assert len(ran) == 3
    warned = model.requests[3][0][-1]
    assert warned.role == "tool" and "[loop guard] Warning" in (warned.content or "")
    assert "same call 3 times" in (warned.content or "")
    # tier 2: the fourth is not run; tier 3: the fifth ends the turn
    blocked = model.requests[4][0][-1]
    assert blocked.role == "tool" and (blocked.content or "").startswith("Error: Not run")
    notices = [e.message for e in events if isinstance(e, Notice) and e.level == "warning"]
    assert sum("same call 3 times" in n for n in notices) == 3


async def test_degenerate_text_stops_the_stream(make_agent: MakeAgent) -> None:
    agent, model = await make_agent([reply("Let me think. " + "again " * 400, chunk=5)])
    events, sink = collect()
    done = await agent.run_turn("go", sink)
    assert done.reason == "repetition"
    assert model.closed_early == 1
    streamed = "".join(e.text for e in events if e.kind == "text")  # type: ignore[union-attr]
    assert len(streamed) < 1200


async def test_iteration_cap(make_agent: MakeAgent) -> None:
    script = [reply(calls=[("FileRead", {"file_path": f"f{i}.txt"})]) for i in range(3)]
    agent, _ = await make_agent(script, overrides={"max_iterations": 3})
    done = await agent.run_turn("go")
    assert done.reason == "max_iterations" and done.iterations == 3


async def test_bad_calls_become_error_results(make_agent: MakeAgent, tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    agent, model = await make_agent(
        [
            reply(
                calls=[
                    ("NoSuchTool", {}),
                    ("FileRead", "{not json"),
                    ("FileRead", {"limit": 3}),
                    ("FileRead", {"file_path": "../outside.txt"}),
                    ("FileRead", {"file_path": str(outside)}),
                ]
            ),
            reply("done"),
        ]
    )
    done = await agent.run_turn("go")
    assert done.reason == "stop"
    results = [m for m in model.requests[1][0] if m.role == "tool"]
    assert len(results) == 5
    texts = [m.content or "" for m in results]
    assert "unknown tool 'NoSuchTool'" in texts[0]
    assert "not valid JSON" in texts[1]
    assert "file_path" in texts[2] and "invalid parameters" in texts[2]
    assert all(t.startswith("Error:") for t in texts)
    assert all("secret" not in t for t in texts)


async def test_llm_error_ends_the_turn_with_reason_error(make_agent: MakeAgent) -> None:
    agent, _ = await make_agent([StreamError("boom", code=500)])
    done = await agent.run_turn("go")
    assert done.reason == "error" and "boom" in (done.error or "")


async def test_overflow_compacts_and_retries_once(make_agent: MakeAgent) -> None:
    big = "".join(f"line {i} " + "z" * 70 + "\n" for i in range(70))
    (Path(os.environ["OPENMONO_DATA_DIR"]).parent / "ws" / "big.txt").write_text(big)
    # n_ctx well above what the turn takes, so only the server's overflow answer compacts (at
    # 8192 the turn sat just under the 80 % mark, and any longer system prompt crossed it first)
    agent, model = await make_agent(
        [reply(calls=[("FileRead", {"file_path": "big.txt"})]), overflow(), reply("fits now")],
        n_ctx=16384,
    )
    events, sink = collect()
    done = await agent.run_turn("read big", sink)
    assert done.reason == "stop" and done.text == "fits now"
    assert any(isinstance(e, Notice) and "did not fit" in e.message for e in events)
    before = sum(len(m.content or "") for m in model.requests[1][0])
    after = sum(len(m.content or "") for m in model.requests[2][0])
    assert after < before - 3000
    evicted = [m for m in model.requests[2][0] if m.role == "tool"]
    assert evicted and "evicted" in (evicted[0].content or "")


async def test_second_overflow_gives_up(make_agent: MakeAgent) -> None:
    agent, _ = await make_agent([overflow(), overflow()])
    done = await agent.run_turn("go")
    assert done.reason == "context"


async def test_checkpoint_summarises_with_the_model_above_65_percent(make_agent: MakeAgent) -> None:
    summary_requests: list[list[ChatMessage]] = []

    def summarise(messages: list[ChatMessage]) -> list[Any]:
        summary_requests.append(list(messages))
        return [TextDelta(text="SUMMARY: user asked about alpha files.")]

    agent, model = await make_agent([])
    for i in range(6):
        agent.loop.conv.add(ChatMessage(role="user", content=f"question {i} " + "w " * 150))
        agent.loop.conv.add(ChatMessage(role="assistant", content=f"answer {i} " + "v " * 150))
    # a context in which the conversation sits between the checkpoint and compaction marks; the
    # tools offered depend on the context size (a small one gets only the core set), so settle it
    for _ in range(5):
        agent.loop.options.n_ctx = int(agent.loop.context_tokens() / 0.72)
    assert 0.70 < agent.loop.context_tokens() / agent.loop.options.n_ctx < 0.74
    model.add(summarise, reply("final"))
    events, sink = collect()
    done = await agent.run_turn("last question", sink)
    assert done.reason == "stop"
    assert any(isinstance(e, Notice) and e.message.startswith("Checkpoint") for e in events), [
        e for e in events if isinstance(e, Notice)
    ]
    sent = model.requests[1][0]
    assert "SUMMARY: user asked about alpha files." in (sent[1].content or "")
    assert sent[-1].content == "last question"
    assert "question 0" in (summary_requests[0][1].content or "")
    records = load_session(agent.writer.path).messages
    assert any(r.summary for r in records)


async def test_todos_and_ask_user_without_a_user(make_agent: MakeAgent) -> None:
    todos = [{"content": "Write tests", "status": "in_progress", "active_form": "Writing tests"}]
    agent, model = await make_agent(
        [
            reply(calls=[("TodoWrite", {"todos": todos}), ("AskUser", {"question": "Which db?"})]),
            reply("ok"),
        ]
    )
    await agent.run_turn("go")
    assert [t.content for t in agent.todos] == ["Write tests"]
    answer = model.requests[1][0][-1].content or ""
    assert "non-interactive" in answer


async def test_retry_takes_back_the_last_turn(make_agent: MakeAgent) -> None:
    agent, model = await make_agent([reply("first"), reply("second")])
    await agent.run_turn("hello")
    prompt = agent.loop.take_back_last_turn()
    assert prompt == "hello" and agent.loop.conv.messages == []
    done = await agent.loop.run_turn(prompt)
    assert done.text == "second"
    assert [m.content for m in model.requests[1][0][1:]] == ["hello"]


@pytest.mark.parametrize(
    "n_ctx,offered",
    [
        (1024, set()),
        (4096, {"FileRead", "FileWrite", "FileEdit", "Bash", "Grep", "Glob", "ListDirectory"}),
    ],
)
async def test_a_small_context_gets_fewer_tool_definitions(
    make_agent: MakeAgent, n_ctx: int, offered: set[str]
) -> None:
    agent, model = await make_agent([reply("hi")], n_ctx=n_ctx)
    events, sink = collect()
    done = await agent.run_turn("say hi", sink)
    assert done.reason == "stop"
    assert {t.name for t in model.requests[0][1]} == offered
    assert any(isinstance(e, Notice) and "too small" in e.message for e in events)


async def test_a_large_context_gets_every_tool(make_agent: MakeAgent) -> None:
    agent, model = await make_agent([reply("hi")], n_ctx=32768)
    await agent.run_turn("say hi")
    assert len(model.requests[0][1]) == len(agent.loop.catalog.for_mode("agent")) > 10


async def test_every_turn_ends_with_exactly_one_done_event(make_agent: MakeAgent) -> None:
    agent, _ = await make_agent([reply(calls=[("Glob", {"pattern": "*.txt"})]), reply("fin")])
    events, sink = collect()
    await agent.run_turn("go", sink)
    dones = [e for e in events if isinstance(e, TurnDone)]
    assert len(dones) == 1 and events[-1] is dones[0]


# -- keeping small models on track (issue 12 B) -------------------------------------------------
def _last_user(model: ScriptedModel, request: int) -> str:
    return next(m.content or "" for m in reversed(model.requests[request][0]) if m.role == "user")


async def test_a_cut_off_answer_is_continued_and_joined(make_agent: MakeAgent) -> None:
    agent, model = await make_agent([cut_off("The answer is forty"), reply("-two, of course.")])
    events, sink = collect()
    done = await agent.run_turn("what is it?", sink)
    assert done.reason == "stop" and done.text == "The answer is forty-two, of course."
    # the rest was asked for with the partial reply in place, and nothing of that is recorded
    partial = model.requests[1][0][-2]
    assert partial.role == "assistant" and partial.content == "The answer is forty"
    assert "cut off by the output limit" in _last_user(model, 1)
    saved = [m for m in load_session(agent.writer.path).messages if m.role == "assistant"]
    assert [m.content for m in saved] == ["The answer is forty-two, of course."]
    assert any(isinstance(e, Notice) and "output limit" in e.message for e in events)


async def test_a_cut_off_tool_call_is_asked_again_not_dropped(make_agent: MakeAgent) -> None:
    write = ("FileWrite", {"file_path": "b.txt", "content": "bravo\n"})
    agent, model = await make_agent(
        [
            cut_off("Writing it.", call=("FileWrite", '{"file_path": "b.txt", "content": "bra')),
            reply(calls=[write]),
            reply("done"),
        ],
        yolo=True,
    )
    done = await agent.run_turn("write b", collect()[1])
    assert done.reason == "stop" and done.text == "done"
    assert (agent.workspace / "b.txt").read_text() == "bravo\n"
    assert "FileWrite call was cut off" in _last_user(model, 1)
    # one assistant message holds the text and the whole call; no error result for the cut one
    saved = load_session(agent.writer.path).messages
    first = next(m for m in saved if m.role == "assistant")
    assert first.content == "Writing it." and [c.name for c in first.tool_calls] == ["FileWrite"]
    results = [m for m in saved if m.role == "tool"]
    assert len(results) == 1 and not results[0].is_error


async def test_a_call_still_cut_after_the_retries_gets_its_error(make_agent: MakeAgent) -> None:
    cut = cut_off(call=("FileWrite", '{"file_path": "b.txt", "content": "x'))
    agent, _ = await make_agent([cut, cut, cut, reply("gave up")], yolo=True)
    done = await agent.run_turn("write b")
    assert done.text == "gave up" and not (agent.workspace / "b.txt").exists()
    results = [m for m in load_session(agent.writer.path).messages if m.role == "tool"]
    assert len(results) == 1 and results[0].is_error and "cut off" in (results[0].content or "")


async def test_an_empty_reply_gets_one_nudge(make_agent: MakeAgent) -> None:
    agent, model = await make_agent([reply(""), reply("Here you go.")])
    done = await agent.run_turn("hello")
    assert done.reason == "stop" and done.text == "Here you go."
    assert "reply was empty" in _last_user(model, 1)
    users = [m for m in load_session(agent.writer.path).messages if m.role == "user"]
    assert [m.content for m in users] == ["hello"]  # the nudge is not recorded


async def test_two_empty_replies_stop_clearly(make_agent: MakeAgent) -> None:
    agent, model = await make_agent([reply(""), reply("   ")])
    done = await agent.run_turn("hello")
    assert done.reason == "empty" and "empty reply twice" in (done.error or "")
    assert len(model.requests) == 2


async def test_repetition_in_the_thinking_stops_the_stream(make_agent: MakeAgent) -> None:
    from openmono.llm import ReasoningDelta

    loop = [ReasoningDelta(text="hmm, let me check again. ") for _ in range(60)]
    agent, model = await make_agent([[*loop, *reply("never")]])
    events, sink = collect()
    done = await agent.run_turn("go", sink)
    assert done.reason == "repetition" and model.closed_early == 1
    assert any(isinstance(e, Notice) and "thinking degenerated" in e.message for e in events)


async def test_a_repeated_paragraph_is_repetition(make_agent: MakeAgent) -> None:
    paragraph = (
        "I will now read the configuration file to find where the port is set, then change "
        "it and run the tests again to confirm.\n\n"
    )
    agent, model = await make_agent([reply("Plan:\n\n" + paragraph * 5, chunk=20)])
    done = await agent.run_turn("go")
    assert done.reason == "repetition" and model.closed_early == 1


async def test_a_broken_session_is_repaired_on_resume_and_says_so(
    make_agent: MakeAgent, tmp_path: Path
) -> None:
    from openmono.sessions import RecordedCall, SessionHeader, SessionMessage, SessionStore

    store = SessionStore(tmp_path / "data")
    header = SessionHeader(working_directory=str(tmp_path / "ws"), model="scripted")
    writer = store.create(header)
    for record in (
        SessionMessage(role="user", content="read a"),
        SessionMessage(role="user", content="and then b"),  # two users in a row
        SessionMessage(
            role="assistant",
            content="Reading.",
            tool_calls=[
                RecordedCall(id="r1", name="FileRead", arguments='{"file_path": "a.txt"}'),
                RecordedCall(id="r2", name="FileRead", arguments='{"file_path": "b.txt"}'),
            ],
        ),
        SessionMessage(role="tool", content="1\talpha", tool_call_id="r1", tool_name="FileRead"),
        # r2 never answered (the process died); a stray result and an empty message follow
        SessionMessage(role="tool", content="stray", tool_call_id="zz", tool_name="FileRead"),
        SessionMessage(role="assistant", content=""),
        SessionMessage(role="assistant", content="Half an answer"),
    ):
        writer.append(record)
    writer.close()
    agent, model = await make_agent([reply("fine now")], resume=header.session_id)
    events, sink = collect()
    done = await agent.run_turn("go on", sink)
    assert done.reason == "stop"
    sent = model.requests[0][0][1:]  # after the system prompt
    assert [m.role for m in sent] == ["user", "assistant", "tool", "tool", "assistant", "user"]
    assert sent[0].content == "read a\n\nand then b"
    assert [m.tool_call_id for m in sent[2:4]] == ["r1", "r2"]
    assert "no result was recorded" in (sent[3].content or "")
    notes = [e.message for e in events if isinstance(e, Notice)]
    repaired = next(n for n in notes if n.startswith("Repaired the resumed session"))
    assert "1 call without a result" in repaired and "1 result without its call" in repaired
    assert "1 empty message" in repaired and "1 message merged" in repaired


async def test_a_sound_session_resumes_without_repairs(make_agent: MakeAgent) -> None:
    agent, _ = await make_agent([reply(calls=[("FileRead", {"file_path": "a.txt"})]), reply("a")])
    await agent.run_turn("read a")
    again, _ = await make_agent([reply("still a")], resume=agent.session_id)
    events, sink = collect()
    await again.run_turn("and now?", sink)
    assert not any(isinstance(e, Notice) and "Repaired" in e.message for e in events)


async def test_the_prompted_tool_block_counts_in_the_context_estimate(
    make_agent: MakeAgent,
) -> None:
    """Under `prompted` the tools cost their block and examples in the system prompt, not the
    JSON schemas `native` sends: the estimate is the model's (`Model.tool_tokens`), so it follows
    the protocol in use without the loop knowing which it is."""
    from openmono.llm import LLMSettings, PromptedTools, estimate_tokens
    from openmono.llm._prompted import prompted_overhead

    agent, inner = await make_agent([reply("hi")])
    loop = agent.loop
    tools = loop.offered_tools()
    await agent.switch_model(PromptedTools(inner, LLMSettings(tool_protocol="prompted")))
    prompted = loop.context_tokens()
    block = estimate_tokens(prompted_overhead(tools))
    assert block > 500
    await agent.switch_model(PromptedTools(inner, LLMSettings(tool_protocol="native")))
    native = loop.context_tokens()
    schemas = sum(len(t.model_dump_json()) for t in tools) // 4
    assert prompted - native == block - schemas
