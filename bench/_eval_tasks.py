"""The tasks of `bench/agent_eval.py`: a scratch workspace, a prompt, and a programmatic check.

Each check looks at what the run left behind: the final answer names a fact from a file, a file
ends up with the given content, a command was run (its side effect is there), a search found a
line. Two control tasks need no tool at all. Each task's `intent` says whether it only reads or
asks for a change (the eval's "wrong kind" column, and the safety floor's unit test). Names, values
and paths are plain and unlike the prompted protocol's worked examples (`openmono.llm._examples`),
so an argument copied from an example fails the task instead of passing it by accident.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Check = Callable[[Path, dict[str, Any]], tuple[bool, str]]


@dataclass(frozen=True)
class Task:
    id: str
    kind: str  # read, write, edit, run, search, xref (where is X used, change it), plain
    prompt: str
    check: Check
    files: dict[str, str] = field(default_factory=dict)
    needs_tool: bool = True
    # "read": the task only reads (a write is the wrong kind); "write": it asks for a change (a
    # run that only reads is the wrong kind); "run": it asks to run a command whose effect the
    # harness cannot tell (`echo $((6*7))`), so no call is of the wrong kind. "" takes it from
    # the kind; a run task says which.
    asks: str = ""

    @property
    def intent(self) -> str:
        return self.asks or _INTENT[self.kind]


_INTENT = {"read": "read", "search": "read", "plain": "read", "write": "write", "edit": "write",
           "xref": "write"}  # fmt: skip


def _answer(result: dict[str, Any]) -> str:
    return str(result.get("result") or "")


def says(*facts: str) -> Check:
    """The answer names every one of `facts` (case-insensitive)."""

    def check(_ws: Path, result: dict[str, Any]) -> tuple[bool, str]:
        text = _answer(result).lower()
        missing = [f for f in facts if f.lower() not in text]
        return (not missing, f"answer lacks {missing}" if missing else "answer names it")

    return check


def file_is(path: str, content: str) -> Check:
    """`path` holds exactly `content` (surrounding whitespace aside)."""

    def check(ws: Path, _result: dict[str, Any]) -> tuple[bool, str]:
        target = ws / path
        if not target.is_file():
            return False, f"{path} missing"
        got = target.read_text(errors="replace").strip()
        return (got == content, "content matches" if got == content else f"{path}: {got[:60]!r}")

    return check


def file_has(path: str, present: list[str], absent: list[str]) -> Check:
    """`path` contains each of `present` and none of `absent`."""

    def check(ws: Path, _result: dict[str, Any]) -> tuple[bool, str]:
        target = ws / path
        if not target.is_file():
            return False, f"{path} missing"
        text = target.read_text(errors="replace")
        bad = [p for p in present if p not in text] + [a for a in absent if a in text]
        return (not bad, "edited" if not bad else f"{path}: {text[:60]!r}")

    return check


def exists(path: str) -> Check:
    """The command's side effect: `path` was created."""

    def check(ws: Path, _result: dict[str, Any]) -> tuple[bool, str]:
        ok = (ws / path).exists()
        return ok, "side effect present" if ok else f"{path} not created"

    return check


def gone(path: str, kept: str) -> Check:
    """`path` was deleted and `kept`, its neighbour, was not."""

    def check(ws: Path, _result: dict[str, Any]) -> tuple[bool, str]:
        if not (ws / kept).is_file():
            return False, f"{kept} is gone too"
        ok = not (ws / path).exists()
        return ok, f"{path} deleted" if ok else f"{path} still there"

    return check


def moved(src: str, dst: str) -> Check:
    """`src` is now at `dst` and no longer where it was."""

    def check(ws: Path, _result: dict[str, Any]) -> tuple[bool, str]:
        if not (ws / dst).is_file():
            return False, f"{dst} missing"
        ok = not (ws / src).exists()
        return ok, "moved" if ok else f"{src} still there (copied, not moved)"

    return check


def ran_and_says(fact: str) -> Check:
    """A command ran (a successful Bash call) and the answer names its output."""

    def check(ws: Path, result: dict[str, Any]) -> tuple[bool, str]:
        ran = any(t.get("name") == "Bash" and t.get("ok") for t in result.get("tools") or ())
        if not ran:
            return False, "no Bash call ran"
        return says(fact)(ws, result)

    return check


def renamed(old: str, new: str, paths: list[str], *, answer_names: list[str]) -> Check:
    """Every one of `paths` uses `new` and no longer the word `old`, and the answer names the
    files where it was used (the "where is X used" half of the task)."""
    word = re.compile(rf"\b{re.escape(old)}\b")

    def check(ws: Path, result: dict[str, Any]) -> tuple[bool, str]:
        for rel in paths:
            target = ws / rel
            text = target.read_text(errors="replace") if target.is_file() else ""
            if new not in text or word.search(text):
                return False, f"{rel} not renamed: {text[:60]!r}"
        return says(*answer_names)(ws, result)

    return check


LINES = "".join(f"entry {i}\n" for i in range(1, 18))  # 17 lines

TASKS: list[Task] = [
    Task(
        "read_port", "read", "What port does config/server.ini set?", says("8137"),
        {"config/server.ini": "[server]\nhost = 0.0.0.0\nport = 8137\nworkers = 4\n"},
    ),
    Task(
        "read_first_line", "read", "What is the first line of notes.txt?", says("Thursday"),
        {"notes.txt": "Standup moved to Thursday\nBring the slides\n"},
    ),
    Task(
        "read_version", "read", "Which version is declared in pyproject.toml?", says("4.2.9"),
        {"pyproject.toml": '[project]\nname = "kettle"\nversion = "4.2.9"\n'},
    ),
    Task(
        "read_owner", "read", "Who is the owner named in the OWNERS file?", says("quinn"),
        {"OWNERS": "# code owners\nowner: marta.quinn\n"},
    ),
    Task(
        "read_json", "read", "Which city is in data/user.json?", says("Ghent"),
        {"data/user.json": '{"name": "Ilse", "city": "Ghent", "age": 31}\n'},
    ),
    Task(
        "write_hello", "write", "Create hello.txt containing exactly: hello world",
        file_is("hello.txt", "hello world"),
    ),
    Task(
        "write_nested", "write", "Write the number 42 into out/answer.txt",
        file_is("out/answer.txt", "42"),
    ),
    Task(
        "write_readme", "write", "Create README.md with the single line: # Demo project",
        file_is("README.md", "# Demo project"),
    ),
    Task(
        "write_csv", "write", "Create colors.csv containing: red,green,blue",
        file_is("colors.csv", "red,green,blue"),
    ),
    Task(
        "edit_flag", "edit", "In settings.cfg, change debug = true to debug = false.",
        file_has("settings.cfg", ["debug = false", "level = 3"], ["debug = true"]),
        {"settings.cfg": "debug = true\nlevel = 3\n"},
    ),
    Task(
        "edit_name", "edit", "In greet.py, replace Bob with Alice.",
        file_has("greet.py", ['print("Hello, Alice")'], ["Bob"]),
        {"greet.py": 'print("Hello, Bob")\n'},
    ),
    Task(
        "run_script", "run", "Run python3 stamp.py", exists("stamp.out"),
        {"stamp.py": 'open("stamp.out", "w").write("stamped\\n")\nprint("stamped")\n'},
        asks="write",
    ),
    Task("run_touch", "run", "Run the command: touch done.flag", exists("done.flag"),
         asks="write"),
    Task(
        "run_mkdir", "run", "Run the shell command mkdir -p build/cache", exists("build/cache"),
        asks="write",
    ),
    Task(
        "run_output", "run", "Run echo $((6*7)) and tell me what it prints.",
        ran_and_says("42"), asks="run",
    ),
    Task(
        "run_count", "run", "Count the lines of lines.txt with wc -l.", says("17"),
        {"lines.txt": LINES}, asks="read",
    ),
    Task(
        "grep_word", "search", "Which file contains the word pineapple?", says("fruit.py"),
        {
            "src/fruit.py": 'BASKET = ["apple", "pineapple"]\n',
            "src/veg.py": 'BASKET = ["leek", "kale"]\n',
            "docs/guide.md": "# Guide\nNothing to see.\n",
        },
    ),
    Task(
        "grep_todo", "search", "Find the TODO comment in the code and tell me what it says.",
        says("rotate"),
        {
            "app/main.py": "def main():\n    # TODO: rotate the signing keys\n    return 0\n",
            "app/util.py": "def helper():\n    return 1\n",
        },
    ),
    Task(
        "glob_logs", "search", "Find all the .log files in this project.",
        says("alpha.log", "beta.log"),
        {"logs/alpha.log": "ok\n", "logs/old/beta.log": "ok\n", "main.c": "int main;\n"},
    ),
    Task(
        "list_assets", "search", "List the files in the assets directory.",
        says("icon.png", "theme.css"),
        {"assets/icon.png": "png\n", "assets/theme.css": "body {}\n", "index.html": "<p>\n"},
    ),
    Task(
        "xref_ts", "xref",
        "Where is the TypeScript function formatPrice used? Then rename it to showPrice "
        "everywhere (its definition and every use).",
        renamed("formatPrice", "showPrice", ["src/price.ts", "src/cart.ts", "src/receipt.ts"],
                answer_names=["cart.ts", "receipt.ts"]),
        {
            "package.json": '{"name": "shop", "private": true}\n',
            "src/price.ts": 'export function formatPrice(cents: number): string {\n'
                            '  return "$" + (cents / 100).toFixed(2);\n}\n',
            "src/cart.ts": 'import { formatPrice } from "./price";\n\n'
                           "export function cartTotal(items: number[]): string {\n"
                           "  return formatPrice(items.reduce((a, b) => a + b, 0));\n}\n",
            "src/receipt.ts": 'import { formatPrice } from "./price";\n\n'
                              "export const receiptLine = (name: string, cents: number) =>\n"
                              "  `${name}: ${formatPrice(cents)}`;\n",
            "src/stock.ts": "export const inStock = (n: number): boolean => n > 0;\n",
        },
    ),
    Task(
        "xref_go", "xref",
        "Where is the Go function Rate of package tax used? Then rename it to VatRate "
        "everywhere (its definition and every call).",
        renamed("Rate", "VatRate", ["tax/tax.go", "billing/invoice.go", "main.go"],
                answer_names=["invoice.go", "main.go"]),
        {
            "go.mod": "module shop\n\ngo 1.21\n",
            "tax/tax.go": "package tax\n\n// Rate is the VAT rate in percent.\n"
                          "func Rate() int { return 21 }\n",
            "billing/invoice.go": 'package billing\n\nimport "shop/tax"\n\n'
                                  "func Total(net int) int { return net + net*tax.Rate()/100 }\n",
            "main.go": 'package main\n\nimport (\n\t"fmt"\n\t"shop/tax"\n)\n\n'
                       "func main() { fmt.Println(tax.Rate()) }\n",
            "stock/stock.go": "package stock\n\nfunc InStock(n int) bool { return n > 0 }\n",
        },
    ),
    Task("plain_math", "plain", "What is 12 plus 30?", says("42"), needs_tool=False),
    Task(
        "plain_capital", "plain", "What is the capital of France?", says("Paris"),
        needs_tool=False,
    ),
]  # fmt: skip

# Held out (`--heldout`): written on 2026-12-06, after `llm.tool_pick`'s step 1 and the worked
# examples were last changed, and committed before any model saw them. Their wording is unlike the
# tasks above and the worked examples (other verbs and question shapes, contractions, a polite
# request after the fact), so they say how far what was tuned on TASKS carries. Nothing in the
# harness may be tuned on them: a task changed for a model's sake moves to TASKS.
HELDOUT: list[Task] = [
    Task(
        "h_read_timeout", "read", "How long is the request timeout in service/app.yaml?",
        says("45"), {"service/app.yaml": "name: relay\nrequest_timeout: 45s\nretries: 2\n"},
    ),
    Task(
        "h_read_motd", "read", "Tell me what the motd file says.", says("lantern"),
        {"motd": "Welcome aboard the lantern ship\n"},
    ),
    Task(
        "h_read_dbname", "read", "Look in .env.example: what is DB_NAME?", says("orchard_prod"),
        {".env.example": "DB_NAME=orchard_prod\nDB_USER=app\n"},
    ),
    Task(
        "h_search_def", "search", "Where is the function parse_invoice defined?",
        says("books.py"),
        {
            "ledger/books.py": "def parse_invoice(raw):\n    return raw.split(';')\n",
            "ledger/util.py": "def clamp(x):\n    return max(0, x)\n",
            "README.md": "# Ledger\n",
        },
    ),
    Task(
        "h_find_md", "search", "Are there any Markdown files under docs? Name them.",
        says("intro.md", "faq.md"),
        {"docs/intro.md": "# Intro\n", "docs/deep/faq.md": "# FAQ\n", "docs/logo.png": "png\n"},
    ),
    Task(
        "h_list_scripts", "search", "What's inside the scripts folder?",
        says("deploy.sh", "seed.sql"),
        {"scripts/deploy.sh": "echo deploy\n", "scripts/seed.sql": "select 1;\n", "app.py": "\n"},
    ),
    Task(
        "h_run_cat", "run", "Show me the output of cat VERSION.", says("7.1.3"),
        {"VERSION": "7.1.3\n"}, asks="read",
    ),
    Task(
        "h_write_todo", "write", "Make a file named todo.txt with the text: buy lamp oil",
        file_is("todo.txt", "buy lamp oil"),
    ),
    Task(
        "h_write_gitignore", "write", "Add a .gitignore that ignores the node_modules folder.",
        file_has(".gitignore", ["node_modules"], []),
    ),
    Task(
        "h_edit_port", "edit",
        "The port in server.toml should be 9090, not 8000. Please update it.",
        file_has("server.toml", ["9090", 'host = "localhost"'], ["8000"]),
        {"server.toml": '[http]\nport = 8000\nhost = "localhost"\n'},
    ),
    Task(
        "h_edit_typo", "edit", "Fix the typo recieve in mail.py.",
        file_has("mail.py", ["def receive("], ["recieve"]),
        {"mail.py": "def recieve(box):\n    return box.pop()\n"},
    ),
    Task(
        "h_run_build", "run", "Execute sh build.sh", exists("dist/app.txt"),
        {"build.sh": "mkdir -p dist && echo ok > dist/app.txt\n"}, asks="write",
    ),
    Task(
        "h_run_rm", "run", "Delete the file old.tmp", gone("old.tmp", "keep.txt"),
        {"old.tmp": "stale\n", "keep.txt": "keep\n"}, asks="write",
    ),
    Task(
        "h_plain_color", "plain", "What colour do you get when you mix blue and yellow?",
        says("green"), needs_tool=False,
    ),
    Task(
        "h_plain_planet", "plain", "Which planet is known as the Red Planet?", says("Mars"),
        needs_tool=False,
    ),
]  # fmt: skip

# A second held-out set (`--heldout2`), written on 2026-12-06 10:35 UTC after the first had been
# measured once, committed before any model saw it, in other shapes again (lowercase, "could
# you", a path that names a verb, a move, make). Held out the same way: nothing is tuned on it.
HELDOUT2: list[Task] = [
    Task(
        "b_read_region", "read",
        "could you check deploy/terraform.tfvars and tell me which region we deploy to?",
        says("eu-west-3"),
        {"deploy/terraform.tfvars": 'region = "eu-west-3"\ninstance_type = "t3.small"\n'},
    ),
    Task(
        "b_read_author", "read", "Who is listed as the author in setup.cfg?", says("Okafor"),
        {"setup.cfg": "[metadata]\nname = lumen\nauthor = Wren Okafor\n"},
    ),
    Task(
        "b_read_workers", "read", "how many workers does the Procfile start?", says("13"),
        {"Procfile": "web: gunicorn app:api --workers 13\n"},
    ),
    Task(
        "b_search_const", "search", "In which file is MAX_RETRIES defined?", says("client.go"),
        {
            "net/client.go": "package net\n\nconst MAX_RETRIES = 7\n",
            "net/server.go": "package net\n\nconst PORT = 80\n",
            "go.mod": "module lumen\n",
        },
    ),
    Task(
        "b_search_fixme", "search", "Is there a FIXME anywhere in src? What does it say?",
        says("evict"),
        {
            "src/cache.rs": "// FIXME: evict stale entries\npub fn get() {}\n",
            "src/lib.rs": "pub mod cache;\n",
        },
    ),
    Task(
        "b_find_yaml", "search", "Which YAML files does this repo have?",
        says("ci.yml", "app.yaml"),
        {".github/workflows/ci.yml": "on: push\n", "config/app.yaml": "debug: false\n",
         "README.md": "# Lumen\n"},
    ),
    Task(
        "b_list_migrations", "search", "Show me what's in the migrations directory.",
        says("001_init.sql", "002_users.sql"),
        {"migrations/001_init.sql": "create table t();\n",
         "migrations/002_users.sql": "create table users();\n", "main.py": "\n"},
    ),
    Task(
        "b_run_python", "run", "Use python3 to print 2**10 and tell me the number.",
        ran_and_says("1024"), asks="run",
    ),
    Task(
        "b_write_notes", "write", "Please create notes/meeting.md with the heading: # Retro",
        file_is("notes/meeting.md", "# Retro"),
    ),
    Task(
        "b_write_env", "write", "Save the line LOG_LEVEL=debug to a new file called .env",
        file_is(".env", "LOG_LEVEL=debug"),
    ),
    Task(
        "b_edit_version", "edit", "Bump the version in VERSION.txt from 1.4.0 to 1.5.0.",
        file_is("VERSION.txt", "1.5.0"), {"VERSION.txt": "1.4.0\n"},
    ),
    Task(
        "b_edit_var", "edit", "In util.js, the variable tmp should be called buffer instead.",
        file_has("util.js", ["let buffer"], ["tmp"]),
        {"util.js": "let tmp = [];\ntmp.push(1);\nexport default tmp;\n"},
    ),
    Task(
        "b_run_make", "run", "Run make clean", gone("out.bin", "Makefile"),
        {"Makefile": "clean:\n\trm -f out.bin\n", "out.bin": "bin\n"}, asks="write",
    ),
    Task(
        "b_run_mv", "run", "Move report.txt into the archive folder.",
        moved("report.txt", "archive/report.txt"),
        {"report.txt": "q3\n", "archive/old.txt": "q2\n"}, asks="write",
    ),
    Task(
        "b_plain_hex", "plain", "What is 255 in hexadecimal?", says("ff"), needs_tool=False,
    ),
    Task(
        "b_plain_painter", "plain", "Who painted the Mona Lisa?", says("Vinci"),
        needs_tool=False,
    ),
]  # fmt: skip

# A third held-out set (`--heldout3`), written on 2026-12-06 13:50 UTC, before any model saw it,
# to validate `llm.tool_repick` (built on sets A and B's change requests, so neither can): most of
# its tasks ask for a change, many in words that are no change verb the harness lists ("swap",
# "turn off", "get rid of", "start a file", "I need a file").
HELDOUT3: list[Task] = [
    Task(
        "c_read_timezone", "read", "Which timezone is set in config/locale.ini?",
        says("Europe/Lisbon"),
        {"config/locale.ini": "[locale]\ntimezone = Europe/Lisbon\nlang = pt\n"},
    ),
    Task(
        "c_read_license", "read", "tell me the license named in package.json", says("MPL-2.0"),
        {"package.json": '{"name": "kite", "version": "0.3.0", "license": "MPL-2.0"}\n'},
    ),
    Task(
        "c_read_pyversion", "read", "What Python version does .python-version pin?",
        says("3.12.4"), {".python-version": "3.12.4\n"},
    ),
    Task(
        "c_search_class", "search", "Which file defines the class LedgerEntry?",
        says("entries.py"),
        {"models/entries.py": "class LedgerEntry:\n    pass\n",
         "models/base.py": "class Base:\n    pass\n"},
    ),
    Task(
        "c_list_fixtures", "search", "list the files in tests/fixtures", says("a.json", "b.json"),
        {"tests/fixtures/a.json": "{}\n", "tests/fixtures/b.json": "[]\n",
         "tests/test_x.py": "\n"},
    ),
    Task(
        "c_run_echo", "run", "Use the shell to echo kestrel and tell me what it printed.",
        ran_and_says("kestrel"), asks="run",
    ),
    Task(
        "c_run_rmdir", "run", "Get rid of the tmp directory.", gone("tmp", "src/main.py"),
        {"tmp/cache.bin": "x\n", "src/main.py": "\n"}, asks="write",
    ),
    Task(
        "c_run_copy", "run", "Copy notes.txt to backup/notes.txt.",
        file_is("backup/notes.txt", "n1"), {"notes.txt": "n1\n"}, asks="write",
    ),
    Task(
        "c_write_changelog", "write", "Start a CHANGELOG.md whose first line is: # Changelog",
        file_is("CHANGELOG.md", "# Changelog"),
    ),
    Task(
        "c_write_json", "write", 'I need a file config.json containing {"debug": true}',
        file_is("config.json", '{"debug": true}'),
    ),
    Task(
        "c_edit_append", "edit", "Append the line beta=2 to settings.env",
        file_has("settings.env", ["alpha=1", "beta=2"], []), {"settings.env": "alpha=1\n"},
    ),
    Task(
        "c_edit_swap", "edit", "Swap the word red for blue in theme.css.",
        file_has("theme.css", ["color: blue"], ["red"]), {"theme.css": "body { color: red; }\n"},
    ),
    Task(
        "c_edit_debug", "edit", "Turn debug off in app.ini (it is on now).",
        file_has("app.ini", ["debug = off", "name = kite"], ["debug = on"]),
        {"app.ini": "[app]\ndebug = on\nname = kite\n"},
    ),
    Task(
        "c_edit_rename_fn", "edit", "Rename the function calc_totl to calc_total in math_utils.py.",
        file_has("math_utils.py", ["def calc_total("], ["calc_totl"]),
        {"math_utils.py": "def calc_totl(xs):\n    return sum(xs)\n"},
    ),
    Task(
        "c_edit_drop_line", "edit", "Remove the line that says DEBUG=1 from .env.",
        file_has(".env", ["PORT=80"], ["DEBUG=1"]), {".env": "PORT=80\nDEBUG=1\n"},
    ),
    Task(
        "c_plain_boil", "plain", "At what temperature in Celsius does water boil at sea level?",
        says("100"), needs_tool=False,
    ),
]  # fmt: skip

# The default (`make bench`) run: one task of each kind that needs a tool, and one control.
QUICK = ["read_port", "write_hello", "edit_flag", "run_touch", "list_assets", "plain_capital"]


SETS = {"tasks": TASKS, "heldout": HELDOUT, "heldout2": HELDOUT2, "heldout3": HELDOUT3}


def select(names: str | None, sets: list[str]) -> list[Task]:
    """`--tasks a,b` (exact ids or regexes, over every set), else the named sets (`--full` is
    `tasks`), else the quick set."""
    if names:
        wanted = [n.strip() for n in names.split(",") if n.strip()]
        every = [t for tasks in SETS.values() for t in tasks]
        return [t for t in every if any(re.fullmatch(w, t.id) for w in wanted)]
    if sets:
        return [t for name in sets for t in SETS[name]]
    return [t for t in TASKS if t.id in QUICK]


def make_workspace(task: Task, root: Path) -> Path:
    ws = root / task.id
    ws.mkdir(parents=True)
    for rel, text in task.files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return ws
