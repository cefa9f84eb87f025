"""privatefs (0700/0600 in the data dir) and logurl (URLs logged without query), real files."""

from __future__ import annotations

import stat
from pathlib import Path

from openmono_contracts.logurl import for_log, redact_urls
from openmono_contracts.privatefs import (
    ensure_private_root,
    exposed,
    open_private,
    private_dir,
    tighten,
)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def test_private_dir_makes_every_missing_level_0700_and_tightens_an_existing_one(
    tmp_path: Path,
) -> None:
    deep = private_dir(tmp_path / "a" / "b" / "c")
    assert [mode(p) for p in (tmp_path / "a", tmp_path / "a" / "b", deep)] == [0o700] * 3
    old = tmp_path / "old"
    old.mkdir(mode=0o755)
    old.chmod(0o755)
    assert mode(private_dir(old)) == 0o700


def test_open_private_creates_0600_and_tightens_a_file_left_0644(tmp_path: Path) -> None:
    with open_private(tmp_path / "logs" / "new.log", "ab") as fh:
        fh.write(b"x")
    assert mode(tmp_path / "logs" / "new.log") == 0o600
    old = tmp_path / "logs" / "old.log"
    old.write_text("kept\n")
    old.chmod(0o644)
    with open_private(old, "a", encoding="utf-8") as fh:
        fh.write("more\n")
    assert mode(old) == 0o600 and old.read_text() == "kept\nmore\n"


def test_tighten_keeps_the_owners_bits_and_never_follows_a_symlink(tmp_path: Path) -> None:
    data, outside = tmp_path / "data", tmp_path / "outside.txt"
    (data / "lsp" / "bin").mkdir(parents=True)
    tool = data / "lsp" / "bin" / "server"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    outside.write_text("not ours to change")
    outside.chmod(0o644)
    (data / "link").symlink_to(outside)
    data.chmod(0o755)
    assert exposed(data)[1] == 4  # data, lsp, bin, server (the link does not count)
    assert ensure_private_root(data) == 4
    assert mode(tool) == 0o700 and mode(data / "lsp") == 0o700 and mode(data) == 0o700
    assert mode(outside) == 0o644  # the link's target is elsewhere: left alone
    assert exposed(data) == ([], 0)
    assert tighten(data) == 0
    assert ensure_private_root(data) == 0  # a closed data dir is not walked again


def test_for_log_keeps_scheme_host_port_and_path_only() -> None:
    assert (
        for_log("https://u:p@Example.test:8443/a/b;x?token=t#f")
        == "https://example.test:8443/a/b;x"
    )
    assert for_log("http://[::1]:8080/p?q=1") == "http://[::1]:8080/p"
    assert for_log("http://h:notaport/p?token=t") == "http://h:notaport/p"
    line = 'GET http://h/p?token=t "HTTP/1.1 200", see (https://h2/x?sig=s).'
    assert redact_urls(line) == 'GET http://h/p "HTTP/1.1 200", see (https://h2/x).'
    assert redact_urls("no url here ?token=t") == "no url here ?token=t"
