"""`llm.tool_pick=two_step`: a turn's first request is asked which action it needs (a verb, under
a grammar of those verbs alone), then only calls to that tool are allowed; `answer`, a failed
pick, a request after a tool result and the setting `off` go as before; with `tool_repick=
after_read`, a change request that has only read is asked again among the tools that change
something (`asks_change` decides what a change request is). The inner model is
scripted in-process, so what each request carried is exact; the grammars are checked with the
GBNF recogniser of tests/support.
"""

from __future__ import annotations

import sys
from contextlib import aclosing
from pathlib import Path

import pytest
from openmono.executor import LocalExecutor
from openmono.llm import (
    ChatMessage,
    HTTPStatusError,
    LLMSettings,
    ModelInfo,
    PromptedTools,
    StreamEvent,
    ToolCall,
    ToolCallComplete,
    ToolSpec,
    Usage,
)
from openmono.llm._pick import MADE_WITH, after_read, pick_messages, verbs
from openmono.loop import ToolCatalog, WorkerTools
from openmono.permissions import CHANGE_VERBS, asks_change, change_verbs, read_only_task
from openmono_worker import WorkerSettings

from tests.support.gbnf import Grammar
from tests.support.scripted_model import ScriptedModel, reply

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from _eval_tasks import SETS


def _tool(name: str, writes: bool, key: str, shell: bool = False) -> ToolSpec:
    schema = {"type": "object", "properties": {key: {"type": "string"}}, "required": [key]}
    return ToolSpec(
        name=name, description=f"{name}.", parameters=schema, writes=writes, shell=shell
    )


READ = _tool("FileRead", False, "file_path")
GREP = _tool("Grep", False, "pattern")
WRITE = _tool("FileWrite", True, "file_path")
BASH = _tool("Bash", False, "command", shell=True)
TOOLS = [READ, GREP, WRITE, BASH]
ASK = "Which file contains the word pineapple?"
CALL = '<tool_call>\n{"name": "Grep", "arguments": {"pattern": "pineapple"}}\n</tool_call>'


class Llama(ScriptedModel):
    async def probe(self) -> ModelInfo:
        return ModelInfo(model="llama", n_ctx=4096, supports_tools=False,
                         tools_known_from="props", takes_grammar=True)  # fmt: skip


async def _run(
    pick: str,
    script: list[list[StreamEvent] | Exception],
    messages: list[ChatMessage],
    repick: str = "off",
    tools: list[ToolSpec] = TOOLS,
) -> tuple[Llama, list[StreamEvent]]:
    inner = Llama(script)
    settings = LLMSettings(
        tool_protocol="prompted",
        tool_pick=pick,
        tool_repick=repick,
    )
    model = PromptedTools(inner, settings)
    await model.probe()
    async with aclosing(model.stream(messages, tools)) as events:
        got = [e async for e in events]
    return inner, got


def _asked(request: str = ASK) -> list[ChatMessage]:
    return [ChatMessage(role="system", content="BASE"), ChatMessage(role="user", content=request)]


async def test_the_verb_comes_first_then_only_that_tools_calls() -> None:
    first = reply("search", prompt_tokens=300)
    inner, got = await _run("two_step", [first, reply(CALL, prompt_tokens=2000)], _asked())
    assert len(inner.requests) == 2
    pick_sent, grammar = inner.requests[0][0], Grammar(inner.grammars[0] or "")
    assert pick_sent[-1].content == ASK and "- search: " in (pick_sent[0].content or "")
    assert grammar.accepts("search") and grammar.accepts("answer")
    assert not grammar.accepts("Grep") and not grammar.accepts("search the files")
    call_only = Grammar(inner.grammars[1] or "")
    assert call_only.accepts(CALL)
    assert not call_only.accepts("pineapple is in fruit.py")  # no prose once a tool is picked
    assert not call_only.accepts(CALL.replace('"Grep", "arguments": {"pattern"', '"FileRead", '
                                              '"arguments": {"file_path"'))  # fmt: skip
    examples = [m.content or "" for m in inner.requests[1][0][1:-1]]
    assert '"name": "Grep"' in examples[-3]  # the picked tool's worked example is the nearest
    calls = [e for e in got if isinstance(e, ToolCallComplete)]
    assert [c.name for c in calls] == ["Grep"]
    usage = [e for e in got if isinstance(e, Usage)]
    assert usage[-1].prompt_tokens == 2300  # both steps counted


async def test_answer_leaves_prose_and_every_tool() -> None:
    inner, _ = await _run("two_step", [reply("answer"), reply("12 plus 30 is 42.")],
                          _asked("What is 12 plus 30?"))  # fmt: skip
    grammar = Grammar(inner.grammars[1] or "")
    assert grammar.accepts("12 plus 30 is 42.") and grammar.accepts(CALL)


async def test_a_failed_pick_and_off_go_as_before() -> None:
    refused = HTTPStatusError("grammar refused", 400, "no grammar")
    inner, _ = await _run("two_step", [refused, reply("fruit.py")], _asked())
    assert len(inner.requests) == 2 and Grammar(inner.grammars[1] or "").accepts("fruit.py")
    inner, _ = await _run("off", [reply("fruit.py")], _asked())
    assert len(inner.requests) == 1 and Grammar(inner.grammars[0] or "").accepts("fruit.py")


async def test_after_a_tool_result_the_model_goes_on_unpicked() -> None:
    call = ToolCall(id="c1", name="Grep", arguments='{"pattern": "pineapple"}')
    history = [
        *_asked(),
        ChatMessage(role="assistant", content="", tool_calls=[call]),
        ChatMessage(role="tool", tool_call_id="c1", content="src/fruit.py:1: pineapple"),
    ]
    inner, _ = await _run("two_step", [reply("src/fruit.py")], history)
    assert len(inner.requests) == 1 and Grammar(inner.grammars[0] or "").accepts("src/fruit.py")
    instruction = ChatMessage(role="user", content="Send that call again.", from_loop=True)
    inner, _ = await _run("two_step", [reply("ok")], [*_asked(), instruction])
    assert len(inner.requests) == 1


FIX = "Fix the typo recieve in mail.py."
WITH_EDIT = [*TOOLS, _tool("FileEdit", True, "file_path")]
EDIT = '<tool_call>\n{"name": "FileWrite", "arguments": {"file_path": "mail.py"}}\n</tool_call>'


def _after(request: str, *calls: tuple[str, str]) -> list[ChatMessage]:
    """`request`, then each (tool, result) of the turn so far."""
    out = _asked(request)
    for i, (name, result) in enumerate(calls):
        call = ToolCall(id=f"c{i}", name=name, arguments="{}")
        out += [
            ChatMessage(role="assistant", content="", tool_calls=[call]),
            ChatMessage(role="tool", tool_call_id=f"c{i}", content=result),
        ]
    return out


async def test_a_change_request_that_only_read_is_asked_again_among_the_changers() -> None:
    # the 135M model picked `read` for "Fix the typo recieve in mail.py", read the file, then
    # described the fix in prose (held-out task h_edit_typo)
    history = _after(FIX, ("FileRead", "def recieve(box):"))
    script = [reply("write"), reply(EDIT)]
    inner, got = await _run("two_step", script, history, "after_read", WITH_EDIT)
    assert len(inner.requests) == 2
    asked = Grammar(inner.grammars[0] or "")
    assert asked.accepts("write") and asked.accepts("edit") and asked.accepts("answer")
    assert not asked.accepts("read") and not asked.accepts("search")
    assert not asked.accepts("run")  # a file's change: the tools that write files
    assert inner.requests[0][0][-1].content == FIX  # asked about the request, not the result
    call_only = Grammar(inner.grammars[1] or "")
    assert call_only.accepts(EDIT) and not call_only.accepts("I fixed it.")
    assert [e.name for e in got if isinstance(e, ToolCallComplete)] == ["FileWrite"]
    # `answer` leaves the reply free: prose, or any call
    script = [reply("answer"), reply("Done.")]
    inner, _ = await _run("two_step", script, history, "after_read", WITH_EDIT)
    free = Grammar(inner.grammars[1] or "")
    assert free.accepts("Done.") and free.accepts(CALL)


@pytest.mark.parametrize(
    ("history", "repick", "tools"),
    [
        (_after(FIX, ("FileRead", "def recieve(box):")), "off", WITH_EDIT),  # the setting
        (_after(ASK, ("Grep", "fruit.py:1: pineapple")), "after_read", WITH_EDIT),  # only reads
        (_after("How do I fix the typo?", ("FileRead", "x")), "after_read", WITH_EDIT),  # asks
        # a change was made in the turn (a failed one too): the model goes on, asked nothing
        (_after(FIX, ("FileRead", "x"), ("FileWrite", "Error: ...")), "after_read", WITH_EDIT),
        (_after(FIX, ("Bash", "ok")), "after_read", WITH_EDIT),
        (_after(FIX, ("FileRead", "x"))[:-1], "after_read", WITH_EDIT),  # no result yet
        # "fix" is made with FileEdit; a mode that does not offer it is asked nothing
        (_after(FIX, ("FileRead", "x")), "after_read", TOOLS),
    ],
)
async def test_nothing_is_asked_again_otherwise(
    history: list[ChatMessage], repick: str, tools: list[ToolSpec]
) -> None:
    inner, _ = await _run("two_step", [reply("ok")], history, repick, tools)
    assert len(inner.requests) == 1 and Grammar(inner.grammars[0] or "").accepts("ok")


_ASKS = [
    ("Fix the typo recieve in mail.py.", True),
    ("The port in server.toml should be 9090, not 8000. Please update it.", True),
    ("could you add a .gitignore?", True),
    ("Where is formatPrice used? Then rename it to showPrice.", True),
    ("Please make it faster", True),
    ("How do I rename it?", False),  # a question about a change
    ("In which file should I rename it?", False),
    ("could you check deploy/terraform.tfvars and tell me the region?", False),  # a path
    ("Which region do we deploy to?", False),
    ("What does the script it runs print?", False),  # a description
    ("The variable tmp should be called buffer.", False),  # no change word: missed
    ("yes, go ahead", False),
    ("/commit", False),
    ("", False),
]


@pytest.mark.parametrize(("message", "asks"), _ASKS)
def test_what_asks_for_a_change(message: str, asks: bool) -> None:
    assert asks_change(message) is asks


def test_the_eval_sets_change_requests_and_reads() -> None:
    # no read task of any set asks for a change (after a read it would be offered the writers);
    # the change tasks that do not are listed, so a rule change that loses one shows
    tasks = [t for tasks in SETS.values() for t in tasks]
    assert [t.id for t in tasks if t.intent == "read" and asks_change(t.prompt)] == []
    missed = [t.id for t in tasks if t.intent != "read" and not asks_change(t.prompt)]
    assert missed == [
        "b_run_python", "b_edit_var", "c_run_echo", "c_run_rmdir", "c_write_json", "c_edit_swap",
        "c_edit_debug",
    ]  # fmt: skip


def test_no_request_the_floor_reads_as_read_only_asks_for_a_change() -> None:
    # so the re-pick never offers the writers in a turn the safety floor guards
    messages = [t.prompt for tasks in SETS.values() for t in tasks]
    messages += [m for m, _ in _ASKS] + ["What's the port? We set it in app.py", "Show make.log"]
    assert [m for m in messages if asks_change(m) and read_only_task(m)] == []


def test_the_catalog_marks_the_shell_and_the_writers(tmp_path: Path) -> None:
    catalog = ToolCatalog([WorkerTools(LocalExecutor(WorkerSettings(data_dir=tmp_path)))])
    marked = {spec.name: spec for spec in catalog.for_mode("agent")}
    assert marked["Bash"].shell and not marked["Bash"].writes
    assert marked["FileWrite"].writes and not marked["FileWrite"].shell
    assert not (marked["FileRead"].writes or marked["FileRead"].shell)


def test_every_change_verb_is_made_with_one_tool() -> None:
    made = [verb for verbs in MADE_WITH.values() for verb in verbs]
    assert sorted(made) == sorted(CHANGE_VERBS) and len(set(made)) == len(made)
    assert change_verbs("Please delete old.tmp, then run the tests") == ["delete", "run", "test"]
    assert change_verbs("Where is f used? Then rename it, and make it faster.") == [
        "rename", "make"
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("request_", "offered", "nearest"),
    [
        ("Delete the file old.tmp", ["Bash"], "run"),
        ("Add a .gitignore", ["FileWrite", "FileEdit"], "write"),
        ("Bump it", ["FileWrite", "FileEdit"], "edit"),
    ],
)
def test_the_re_pick_offers_the_tools_of_the_requests_verb(
    request_: str, offered: list[str], nearest: str
) -> None:
    # offered every changer, the 135M model picked `run` for most edit requests of the held-out
    # sets A and B (the shell's example came last); offered the writers with the examples of
    # questions that need no tool, `answer`
    edit = _tool("FileEdit", True, "file_path")
    ask = after_read(_after(request_, ("FileRead", "x")), [READ, WRITE, edit, BASH])
    assert ask is not None and [t.name for t in ask.tools] == offered
    sent = pick_messages(ask.tools, ask.request, ask.last, ask.plain)
    assert sent[-2].content == nearest
    assert "answer" not in [m.content for m in sent if m.role == "assistant"]
    assert "- answer: " in (sent[0].content or "")  # still allowed


def test_verbs_for_core_tools_names_for_the_rest() -> None:
    other = _tool("WebFetch", False, "url")
    words = verbs([READ, BASH, other])
    assert words == {"read": READ, "run": BASH, "WebFetch": other}
    sent = pick_messages([READ, BASH], "Run ls")
    assert [m.content for m in sent if m.role == "assistant"] == ["read", "answer", "run"]
    # two plain questions once there are enough tools: with one, the 135M model never said answer
    said = [m.content for m in pick_messages(TOOLS, ASK) if m.role == "assistant"]
    assert said.count("answer") == 2 and said[-1] == "search"


def test_doctor_says_when_the_action_is_picked_first() -> None:
    from openmono.cli.commands.doctor import _family_check

    info = ModelInfo(model="SmolLM2", tool_protocol="prompted", family="SmolLM", template="ours")
    both = _family_check(info, LLMSettings()).detail
    assert "tool_pick" in both and "tool_ground" in both
    assert "tool_ground" not in _family_check(info, LLMSettings(tool_ground="off")).detail
    again = _family_check(info, LLMSettings(tool_repick="after_read")).detail
    assert "tool_repick" in again
    assert "tool_repick" not in _family_check(info, LLMSettings(tool_repick="off")).detail
    assert "tool_pick" not in _family_check(info, LLMSettings(tool_pick="off")).detail
    native = ModelInfo(model="Qwen3", tool_protocol="native")
    assert "tool_pick" not in _family_check(native, LLMSettings()).detail
