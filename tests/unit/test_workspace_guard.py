"""The workspace guard: paths inside resolve; every kind of escape is refused with a reason."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from openmono_worker import PathRefused
from openmono_worker.workspace import display_path, resolve_path, resolve_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    return resolve_workspace(root)


def refused(ws: Path, path: str, reason: str) -> None:
    with pytest.raises(PathRefused) as info:
        resolve_path(ws, path)
    assert reason in str(info.value), str(info.value)


# --- accepted -----------------------------------------------------------------------------------


def test_relative_path_resolves_inside(ws: Path) -> None:
    assert resolve_path(ws, "src/a.py") == ws / "src" / "a.py"


def test_absolute_path_inside_is_accepted(ws: Path) -> None:
    assert resolve_path(ws, str(ws / "src" / "a.py")) == ws / "src" / "a.py"


def test_dot_and_workspace_root(ws: Path) -> None:
    assert resolve_path(ws, ".") == ws
    assert resolve_path(ws, "./src/../src/./a.py") == ws / "src" / "a.py"


def test_dotdot_that_stays_inside(ws: Path) -> None:
    assert resolve_path(ws, "src/pkg/../a.py") == ws / "src" / "a.py"


def test_not_yet_existing_path_inside(ws: Path) -> None:
    assert resolve_path(ws, "new/dir/file.txt") == ws / "new" / "dir" / "file.txt"


def test_symlink_inside_to_inside_resolves_to_target(ws: Path) -> None:
    (ws / "link.py").symlink_to("src/a.py")
    assert resolve_path(ws, "link.py") == ws / "src" / "a.py"


def test_directory_symlink_inside(ws: Path) -> None:
    (ws / "lib").symlink_to(ws / "src", target_is_directory=True)
    assert resolve_path(ws, "lib/pkg/new.py") == ws / "src" / "pkg" / "new.py"


def test_workspace_itself_behind_a_symlink(tmp_path: Path, ws: Path) -> None:
    alias = tmp_path / "alias"
    alias.symlink_to(ws, target_is_directory=True)
    root = resolve_workspace(alias)
    assert root == ws
    assert resolve_path(root, str(alias / "src" / "a.py")) == ws / "src" / "a.py"


def test_display_path_is_relative(ws: Path) -> None:
    assert display_path(ws / "src" / "a.py", ws) == "src/a.py"
    assert display_path(ws, ws) == "."


# --- refused ------------------------------------------------------------------------------------


def test_dotdot_escape(ws: Path) -> None:
    refused(ws, "../outside/secret.txt", "outside the workspace")


def test_deep_dotdot_escape(ws: Path) -> None:
    refused(ws, "src/pkg/../../../outside/secret.txt", "outside the workspace")


def test_absolute_path_outside(ws: Path) -> None:
    refused(ws, "/etc/passwd", "outside the workspace")


def test_sibling_with_common_prefix(tmp_path: Path, ws: Path) -> None:
    (tmp_path / "ws-evil").mkdir()
    refused(ws, str(tmp_path / "ws-evil" / "x"), "outside the workspace")


def test_file_symlink_escape(ws: Path, tmp_path: Path) -> None:
    (ws / "innocent.txt").symlink_to(tmp_path / "outside" / "secret.txt")
    refused(ws, "innocent.txt", "outside the workspace")


def test_directory_symlink_escape(ws: Path, tmp_path: Path) -> None:
    (ws / "src" / "data").symlink_to(tmp_path / "outside", target_is_directory=True)
    refused(ws, "src/data/secret.txt", "outside the workspace")


def test_directory_symlink_escape_for_new_file(ws: Path, tmp_path: Path) -> None:
    (ws / "out").symlink_to(tmp_path / "outside", target_is_directory=True)
    refused(ws, "out/new/file.txt", "outside the workspace")


def test_dangling_symlink_pointing_outside(ws: Path, tmp_path: Path) -> None:
    (ws / "later.txt").symlink_to(tmp_path / "outside" / "not-yet.txt")
    refused(ws, "later.txt", "outside the workspace")


def test_relative_symlink_climbing_out(ws: Path) -> None:
    (ws / "src" / "up").symlink_to("../../outside")
    refused(ws, "src/up/secret.txt", "outside the workspace")


def test_symlink_chain_ending_outside(ws: Path, tmp_path: Path) -> None:
    (ws / "one").symlink_to("two")
    (ws / "two").symlink_to(tmp_path / "outside" / "secret.txt")
    refused(ws, "one", "outside the workspace")


def test_symlink_loop(ws: Path) -> None:
    (ws / "loop_a").symlink_to("loop_b")
    (ws / "loop_b").symlink_to("loop_a")
    refused(ws, "loop_a/x", "symlink loop")


def test_self_loop(ws: Path) -> None:
    (ws / "self").symlink_to("self")
    refused(ws, "self", "symlink loop")


def test_nul_byte(ws: Path) -> None:
    refused(ws, "src/a.py\x00.txt", "NUL")


def test_tilde(ws: Path) -> None:
    refused(ws, "~/.ssh/id_rsa", "'~' is not expanded")
    refused(ws, "~root/x", "'~' is not expanded")


def test_empty_path(ws: Path) -> None:
    refused(ws, "   ", "empty path")


def test_file_used_as_directory(ws: Path) -> None:
    refused(ws, "src/a.py/x", "is not a directory")


def test_extra_root_allows_reads_there_only(ws: Path, tmp_path: Path) -> None:
    extra = (tmp_path / "outside").resolve()
    assert resolve_path(ws, str(extra / "secret.txt"), extra_roots=[extra]) == extra / "secret.txt"
    refused(ws, str(extra / "secret.txt"), "outside the workspace")


def test_workspace_must_exist_and_be_absolute(tmp_path: Path) -> None:
    with pytest.raises(PathRefused, match="absolute"):
        resolve_workspace("relative/ws")
    with pytest.raises(PathRefused, match="not an existing directory"):
        resolve_workspace(str(tmp_path / "missing"))


def test_refusal_message_names_the_path(ws: Path) -> None:
    with pytest.raises(PathRefused) as info:
        resolve_path(ws, "../outside/secret.txt")
    assert info.value.path == "../outside/secret.txt"
    assert os.fspath(ws) in str(info.value)
