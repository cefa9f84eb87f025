"""The cost of a repository's instructions: loading them, the skills index, rules that do not apply.

    uv run python bench/instructions.py [--runs 21] [--no-tokenizer]

Builds a workspace in a temporary folder: 200 rule files in `.cursor/rules` (100 Cursor glob
rules, 30 requested by description, 20 manual, 20 always-apply, and 30 Claude Code rules with
`paths`, in `.cursor/rules` too; globs of every form, half of them unquoted as Cursor writes
them) and 50 skills in `.agents/skills` (a SKILL.md with a 150-260 character description and a
~2 KB body, a script and a reference beside it). Then, medians of `--runs`:

1. `Instructions.load` (rules, skills, agents, commands) against a baseline measured in the
   same run: reading the bytes of the same files and nothing else. Goal: at most 50 ms.
2. The skills index the prompt gets for those 50 skills (`skill_index`, the default budget),
   counted with the real tokenizer of the bundled model (SmolLM2-135M, llama-server's
   `/tokenize`, started here on a free port) and with our estimate. Goal: at most 1,500 tokens.
3. Rules that do not apply cost nothing: the system prompt of a workspace holding 150 rule files
   that apply to no file yet (glob rules, manual rules) against the same workspace without them,
   in real tokens. Goal: 0.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # reuse the test support's llama-server (free port, process group)

from openmono.agent import build_system_prompt  # noqa: E402
from openmono.instructions import (  # noqa: E402
    Instructions,
    estimate_tokens,
    prompt_blocks,
    skill_index,
    skills_budget,
)

from tests.support.llama import llama_server  # noqa: E402

API_KEY = "bench-instructions-key"
WORDS = [
    "parse",
    "validate",
    "render",
    "migrate",
    "deploy",
    "review",
    "format",
    "index",
    "search",
    "cache",
    "build",
    "test",
    "lint",
    "profile",
    "trace",
    "bundle",
    "publish",
    "release",
    "document",
    "translate",
    "schedule",
]
GLOBS = ("**/*.{ext}", "src/**/*.{ext}", "*.{ext}, *.{ext}x", "lib/{name}/**", "**/{name}_*.{ext}")


def _sentence(i: int, n: int) -> str:
    return " ".join(WORDS[(i * 7 + j) % len(WORDS)] for j in range(n))


def _applies_now(i: int) -> bool:
    """Rules 100-129 are requested (listed), 150-169 always apply; the rest wait for a file
    (glob rules: the workspace has no source files) or an `@name` (manual rules)."""
    return 100 <= i < 130 or 150 <= i < 170


def build(root: Path, *, waiting: bool = True) -> None:
    """The workspace (see the module docstring); without the rules that wait if not `waiting`."""
    rules = root / ".cursor" / "rules"
    rules.mkdir(parents=True)
    body = "\n".join(f"- {_sentence(i, 12)}." for i in range(8))
    for i in range(200):
        if not waiting and not _applies_now(i):
            continue
        ext = ("go", "rs", "ts", "py", "java")[i % 5]
        glob = GLOBS[i % len(GLOBS)].format(ext=ext, name=f"m{i}")
        quoted = f'"{glob}"' if i % 2 else glob
        if i < 100:
            head = f"description: rule {i}\nglobs: {quoted}\nalwaysApply: false"
        elif i < 130:
            head = f"description: {_sentence(i, 9)}\nglobs:\nalwaysApply: false"
        elif i < 150:
            head = "alwaysApply: false"
        elif i < 170:
            head = "alwaysApply: true"
        else:
            (rules / f"claude-{i:03d}.md").write_text(f"---\npaths: {quoted}\n---\n{body}\n")
            continue
        (rules / f"rule-{i:03d}.mdc").write_text(f"---\n{head}\n---\n{body}\n")
    for i in range(50):
        folder = root / ".agents" / "skills" / f"skill-{i:02d}-{WORDS[i % len(WORDS)]}"
        (folder / "scripts").mkdir(parents=True)
        description = (
            f"{_sentence(i, 8).capitalize()} for the {WORDS[(i + 3) % len(WORDS)]} service. "
            f"Use when the user asks to {_sentence(i + 1, 6 + i % 10)}."
        )
        text = "\n".join(f"{n}. {_sentence(i + n, 14)}." for n in range(20))
        (folder / "SKILL.md").write_text(
            f"---\nname: {folder.name}\ndescription: {description}\n---\n# Skill {i}\n{text}\n"
        )
        (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho run\n")
        (folder / "REFERENCE.md").write_text(text)


def _median_ms(work: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall and CPU (this process) milliseconds of `work()`: on a shared, loaded machine
    the wall time also counts the waits for a core, the CPU time does not."""
    wall, cpu = [], []
    for _ in range(runs):
        started, used = time.perf_counter(), time.process_time()
        work()
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - used) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def _read_only(root: Path) -> None:
    for path in sorted(root.rglob("*")):
        if path.suffix in (".md", ".mdc") and path.is_file():
            path.read_bytes()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=21)
    parser.add_argument("--no-tokenizer", action="store_true", help="count with the estimate only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        ws, data, home = base / "ws", base / "data", base / "home"
        ws.mkdir()
        build(ws)

        def load() -> Instructions:
            return Instructions.load(ws, data, home, trusted=True)

        ins = load()
        assert len(ins.rules) == 200 and len(ins.skills.skills) == 50, "the workspace is off"
        baseline, baseline_cpu = _median_ms(lambda: _read_only(ws), args.runs)
        loading, loading_cpu = _median_ms(load, args.runs)
        files = sum(1 for p in ws.rglob("*") if p.is_file())
        print(f"workspace: 200 rule files, 50 skills ({files} files); medians of {args.runs} runs")
        print(
            f"baseline, read the files' bytes only: {baseline:.1f} ms (CPU {baseline_cpu:.1f} ms)"
        )
        print(
            f"Instructions.load: {loading:.1f} ms (CPU {loading_cpu:.1f} ms), "
            f"{loading / baseline:.1f}x the baseline  goal <= 50 ms: "
            f"{'met' if loading <= 50 else 'NOT met'}"
        )

        index = skill_index(list(ins.skills.skills.values()), skills_budget(32768)) or ""
        whole = skill_index(list(ins.skills.skills.values()), 10**6) or ""
        # the same workspace without the rules that do not apply yet
        quiet = base / "quiet"
        quiet.mkdir()
        build(quiet, waiting=False)
        calm = Instructions.load(quiet, data, home, trusted=True)
        prompt_with = build_system_prompt(ws, "agent", [], blocks=prompt_blocks(ins, 32768))
        prompt_without = build_system_prompt(ws, "agent", [], blocks=prompt_blocks(calm, 32768))
        print(f"rules that apply to no file yet (glob and manual): {200 - len(calm.rules)}")
        if args.no_tokenizer:
            count = estimate_tokens
            how = "our estimate (characters / 3.2)"
        else:
            server = llama_server(base / "llama", api_key=API_KEY, ctx=4096, parallel=1)
            running = server.__enter__()
            client = httpx.Client(
                base_url=running.url, headers={"Authorization": f"Bearer {API_KEY}"}, timeout=30
            )

            def count(text: str) -> int:
                reply = client.post("/tokenize", json={"content": text})
                reply.raise_for_status()
                return len(reply.json()["tokens"])

            how = "SmolLM2-135M's tokenizer (llama-server /tokenize)"
        try:
            real, estimated = count(index), estimate_tokens(index)
            print(
                f"skills index, 50 skills, budget {skills_budget(32768)} (estimate): {real} tokens"
                f" by {how}; estimate {estimated}; the whole descriptions would be "
                f"{count(whole)}  goal <= 1500: {'met' if real <= 1500 else 'NOT met'}"
            )
            extra = count(prompt_with) - count(prompt_without)
            print(
                f"system prompt with those rules vs without: {extra:+d} tokens ({how})"
                f"  goal 0: {'met' if extra == 0 else 'NOT met'}"
            )
        finally:
            if not args.no_tokenizer:
                client.close()
                server.__exit__(None, None, None)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
