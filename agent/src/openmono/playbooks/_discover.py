"""Where playbooks come from, and which one wins a name clash.

Sources, highest priority first:
    project   <workspace>/.openmono/playbooks/<folder>/PLAYBOOK.md
    user      <data dir>/playbooks/<folder>/PLAYBOOK.md
    builtin   the ones shipped in this package (`openmono/playbooks/builtin/`)
A playbook is known by its front-matter `name` (or, where the file is too broken to say, by its
folder). A malformed playbook never hides a good one of the same name from a lower source; it is
reported (`Catalog.errors`) and `find` raises its error only when nothing valid has that name.

Project playbooks came with the repository and run scripts, so they are loaded only from a
workspace the user trusted (`openmono.config.workspace_trusted`); until then they are listed in
`Catalog.untrusted` and never shadow a user or shipped playbook. A trusted project's playbook does
win its name, never silently: it records what it shadows (`Playbook.shadows`), `playbook list`
shows the hidden one and every run starts with a warning that names both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from openmono_contracts.facts import PROJECT_DIR

from openmono.config import workspace_trusted
from openmono.playbooks._errors import PlaybookInvalid, PlaybookNotFound
from openmono.playbooks._load import FILE_NAME, Playbook, Source, load_playbook

BUILTIN_DIR = Path(__file__).parent / "builtin"


def source_dirs(workspace: Path, data_dir: Path) -> list[tuple[Source, Path]]:
    return [
        ("project", workspace / PROJECT_DIR / "playbooks"),
        ("user", data_dir.expanduser() / "playbooks"),
        ("builtin", BUILTIN_DIR),
    ]


@dataclass
class Catalog:
    """Every playbook found: the winners by name, the broken ones, the shadowed ones."""

    playbooks: dict[str, Playbook] = field(default_factory=dict)
    errors: dict[str, PlaybookInvalid] = field(default_factory=dict)
    shadowed: list[Playbook] = field(default_factory=list)
    # project playbook folders not loaded: the workspace is not trusted
    untrusted: list[Path] = field(default_factory=list)

    def get(self, name: str) -> Playbook:
        found = self.playbooks.get(name)
        if found is None:
            found = next((p for p in self.playbooks.values() if p.folder.name == name), None)
        if found is not None:
            return found
        if name in self.errors:
            raise self.errors[name]
        known = ", ".join(sorted(self.playbooks)) or "none"
        waiting = f" {UNTRUSTED}" if any(f.name == name for f in self.untrusted) else ""
        raise PlaybookNotFound(f"no playbook named {name!r} (known: {known}){waiting}")

    def invocable(self) -> list[Playbook]:
        return [p for p in self.playbooks.values() if p.front.user_invocable]


UNTRUSTED = (
    "The project's own playbooks are not loaded: the workspace is not trusted "
    "(`openmono config trust` trusts it)."
)


def project_playbooks(workspace: Path) -> list[Path]:
    """The playbook folders the workspace itself brings (`.openmono/playbooks/*`)."""
    root = workspace / PROJECT_DIR / "playbooks"
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if (p / FILE_NAME).is_file())


def discover(workspace: Path, data_dir: Path, *, trusted: bool | None = None) -> Catalog:
    """Load every playbook of every source (see the module docstring); `trusted` (default: ask
    `workspace_trusted`) says whether the project's own are loaded."""
    catalog = Catalog()
    if trusted is None:
        trusted = workspace_trusted(workspace)
    for source, root in source_dirs(workspace, data_dir):
        if source == "project":
            if not trusted:
                catalog.untrusted = project_playbooks(workspace)
                continue
            folders = project_playbooks(workspace)
        elif root.is_dir():
            folders = sorted(p for p in root.iterdir() if (p / FILE_NAME).is_file())
        else:
            continue
        for folder in folders:
            try:
                playbook = load_playbook(folder, source)
            except PlaybookInvalid as exc:
                catalog.errors.setdefault(folder.name, exc)
                continue
            winner = catalog.playbooks.get(playbook.name)
            if winner is not None:
                catalog.shadowed.append(playbook)
                winner.shadows.append(playbook)
            else:
                catalog.playbooks[playbook.name] = playbook
    return catalog


def find_playbook(workspace: Path, data_dir: Path, name: str) -> Playbook:
    """The playbook called `name`, or a path to a playbook folder (or its PLAYBOOK.md)."""
    path = Path(name).expanduser()
    if ("/" in name or name.startswith(".")) and path.exists():
        folder = path.parent if path.is_file() else path
        return load_playbook(folder, "project")
    return discover(workspace, data_dir).get(name)
