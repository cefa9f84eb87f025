"""Aider's RepoMap timed on one tree: run with the Python of the venv the bench made for it.

    python _aider_map.py ROOT GLOB EDIT_FILE EDIT_TEXT TOKENS

Prints one JSON line: cold (a new RepoMap, no tags cache), incremental (after appending
EDIT_TEXT to EDIT_FILE, same object, refresh="always" so it does not reuse its last map), warm (a
new RepoMap with the tags cache on disk), in ms; and the process's peak RSS (KiB). The model only
counts tokens (3.2 characters each, as ours estimates). ROOT must be a copy: Aider writes its
tags cache into it.
"""

from __future__ import annotations

import json
import resource
import sys
import time
from pathlib import Path

from aider.io import InputOutput
from aider.repomap import RepoMap


class CountingModel:
    def token_count(self, text: str) -> int:
        return int(len(text) / 3.2)


def build(
    root: Path, files: list[str], tokens: int, rm: RepoMap | None = None
) -> tuple[float, RepoMap, str]:
    if rm is None:
        rm = RepoMap(
            map_tokens=tokens,
            root=str(root),
            main_model=CountingModel(),
            io=InputOutput(pretty=False, yes=True),
            map_mul_no_files=1,
            refresh="always",
        )
    started = time.perf_counter()
    text = rm.get_repo_map([], files) or ""
    return (time.perf_counter() - started) * 1000, rm, text


def vm(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def main() -> None:
    root, glob, edit, edit_text, tokens = (
        Path(sys.argv[1]),
        sys.argv[2],
        sys.argv[3],
        sys.argv[4],
        int(sys.argv[5]),
    )
    files = sorted(str(p) for p in root.glob(glob) if p.is_file())
    before = vm("VmRSS")
    cold, rm, text = build(root, files, tokens)
    peak = vm("VmHWM")
    target = root / edit
    target.write_text(target.read_text() + edit_text)
    incremental, _rm, after = build(root, files, tokens, rm)
    warm, _rm2, _text = build(root, files, tokens)
    print(
        json.dumps(
            {
                "cold_ms": cold,
                "incremental_ms": incremental,
                "warm_ms": warm,
                "rss_before_kib": before,
                "peak_kib": peak,
                "maxrss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
                "map_chars": len(text),
                "files": len(files),
                "changed": after != text,
            }
        )
    )


if __name__ == "__main__":
    main()
