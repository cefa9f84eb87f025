"""Tool facts live on the tools: what each declares, and that the agent reads them, not names."""

from __future__ import annotations

from pathlib import Path

from openmono.loop import ToolCatalog
from openmono.permissions import PermissionEngine, mode_denial, offered_in
from openmono.subagents import AgentTool
from openmono_contracts.toolfacts import ToolFacts
from openmono_worker.tools import get_tool

from tests.support.builtin_tools import builtin_catalog


def _having(catalog: ToolCatalog, **wanted: object) -> set[str]:
    return {
        name
        for name, facts in catalog.facts.items()
        if all(getattr(facts, key) == value for key, value in wanted.items())
    }


def test_the_builtin_tools_declare_their_facts() -> None:
    catalog = builtin_catalog()
    assert _having(catalog, writes=True) == {"FileWrite", "FileEdit", "ApplyPatch"}
    assert _having(catalog, core=True) == {
        "FileRead", "FileWrite", "FileEdit", "Bash", "Grep", "Glob", "ListDirectory"
    }  # fmt: skip
    assert _having(catalog, conversation=True) == {
        "TodoWrite", "AskUser", "EnterPlanMode", "ExitPlanMode"
    }  # fmt: skip
    assert _having(catalog, permission="allow") == {"MemorySave"}
    assert _having(catalog, permission="ask") == {"WebFetch"}
    assert _having(catalog, subagents=False) == {"EnterPlanMode", "ExitPlanMode"}
    assert catalog.facts_of("ApplyPatch").diff_params == ("patch",)
    assert catalog.facts_of("Grep").path_params == ("path",)
    assert catalog.facts_of("Bash").shell_param == "command"
    assert _having(catalog, web=True) == {"WebSearch", "WebFetch"}
    assert _having(catalog, code=True) == {"Lsp", "CodeIntel"}
    kinds = {name: facts.kind for name, facts in catalog.facts.items()}
    assert kinds["FileRead"] == "read" and kinds["FileEdit"] == "edit"
    assert kinds["Bash"] == "execute" and kinds["WebFetch"] == "fetch"
    assert kinds["ExitPlanMode"] == "switch_mode" and kinds["AskUser"] == "other"
    assert AgentTool.facts() == ToolFacts(read_only=True, kind="think", subagents=False)
    assert catalog.facts_of("NoSuchTool") == ToolFacts()
    # the repository map is a worker tool only the agent calls: never in the model's catalog
    assert "RepoMap" not in catalog.facts
    repo_map = get_tool("RepoMap")
    assert repo_map is not None and repo_map.facts().internal


def test_plan_switches_are_offered_where_they_switch_something() -> None:
    enter = ToolFacts(conversation=True, plan_switch="enter")
    leave = ToolFacts(conversation=True, plan_switch="exit")
    assert offered_in("agent", enter) and not offered_in("plan", enter)
    assert offered_in("plan", leave) and not offered_in("agent", leave)
    assert not offered_in("ask", leave)


def test_a_new_tool_needs_no_list_only_facts(tmp_path: Path) -> None:
    # An agent-side tool nobody ever named: its declarations alone decide.
    shell = ToolFacts(shell_param="cmd")
    engine = PermissionEngine(tmp_path)
    assert engine.decide("Remote", {"cmd": "git status"}, shell).action == "allow"
    assert engine.decide("Remote", {"cmd": "make"}, shell).action == "ask"
    assert engine.decide("Remote", {"cmd": "sudo true"}, shell).action == "deny"
    assert mode_denial("plan", "Remote", {"cmd": "git diff"}, shell) is None
    writer = ToolFacts(path_params=("target",), writes=True)
    denied = engine.decide("Remote", {"target": "/etc/passwd"}, writer)
    assert denied.action == "deny" and denied.source == "builtin"
    asks = ToolFacts(read_only=True, permission="ask")
    assert engine.decide("Remote", {}, asks).action == "ask"
    assert engine.decide("Remote", {}, ToolFacts(conversation=True)).action == "allow"
