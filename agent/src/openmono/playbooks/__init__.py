"""Playbooks: repeatable multi-step workflows with gates, in the .NET OpenMono's PLAYBOOK.md format.

    from openmono.playbooks import Host, PlaybookRunner, approve_all, find_playbook

    playbook = find_playbook(workspace, data_dir, "commit")       # loaded and validated whole
    result = await PlaybookRunner(playbook, host, approve_all).run({"scope": "api"})

Loading (`_load`, `_model`, `_params`, `_template`) validates everything before anything runs;
`_discover` knows the three sources; `_run` is the executor (dependency order, gates,
output-schema with one grammar-constrained correction, atomic checkpoints, resume);
`_host` is what a run borrows from its session (tools narrowed to `allowed-tools`, shell through
the executor, gates); `_tool` is the `Playbook` tool; `_trigger` the auto-trigger. See
docs/playbooks.md for the format.
"""

from openmono.playbooks._checkpoint import RunState, RunStatus, checkpoint_path
from openmono.playbooks._discover import (
    BUILTIN_DIR,
    UNTRUSTED,
    Catalog,
    discover,
    find_playbook,
    project_playbooks,
    source_dirs,
)
from openmono.playbooks._errors import (
    GateUnavailable,
    ParameterError,
    PlaybookError,
    PlaybookInvalid,
    PlaybookNotFound,
    ResumeError,
    TemplateError,
    ValueInvalid,
)
from openmono.playbooks._host import (
    Gate,
    GateRequest,
    Host,
    approve_all,
    gate_from_approver,
    no_gate,
)
from openmono.playbooks._load import FILE_NAME, Playbook, load_playbook
from openmono.playbooks._model import FrontMatter, Parameter, Step
from openmono.playbooks._params import parse_assignments, resolve_parameters
from openmono.playbooks._run import PlaybookRunner, RunResult
from openmono.playbooks._tool import NAME, PlaybookTool
from openmono.playbooks._trigger import TriggerMatch, match_trigger

__all__ = [
    "BUILTIN_DIR",
    "FILE_NAME",
    "NAME",
    "UNTRUSTED",
    "Catalog",
    "FrontMatter",
    "Gate",
    "GateRequest",
    "GateUnavailable",
    "Host",
    "Parameter",
    "ParameterError",
    "Playbook",
    "PlaybookError",
    "PlaybookInvalid",
    "PlaybookNotFound",
    "PlaybookRunner",
    "PlaybookTool",
    "ResumeError",
    "RunResult",
    "RunState",
    "RunStatus",
    "Step",
    "TemplateError",
    "TriggerMatch",
    "ValueInvalid",
    "approve_all",
    "checkpoint_path",
    "discover",
    "find_playbook",
    "gate_from_approver",
    "load_playbook",
    "match_trigger",
    "no_gate",
    "parse_assignments",
    "project_playbooks",
    "resolve_parameters",
    "source_dirs",
]
