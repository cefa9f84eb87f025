"""Our repository map against Aider's `RepoMap` on the same real trees, in one run.

Aider runs from its own venv (`aider-chat==0.86.2`, made on first use under the cache dir; it
pins dependencies that would clash with ours). Each harness runs in a fresh process on a fresh
copy of the tree (Aider writes its tags cache into the root), alternating Aider / ours, `RUNS`
times per corpus; the medians and their ratios are printed. Targets (issue 39): cold build at
most 0.5x Aider's, incremental update after one edit at most 50 ms on the 2,000-file corpus.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _corpora import CORPORA, Corpus, fetch

HERE = Path(__file__).resolve().parent
AIDER = "aider-chat==0.86.2"
RUNS = 3
TOKENS = 1024
# One file per corpus that others use, and a definition appended to it (a name the map can gain).
EDITS = {
    "django": ("django/utils/text.py", "\n\ndef bench_probe():\n    return None\n"),
    "rxjs": ("internal/operators/map.ts", "\nexport function benchProbe(): number { return 0; }\n"),
    "xnet": ("html/parse.go", "\nfunc benchProbe() int { return 0 }\n"),
    "tokio": ("src/sync/mutex.rs", "\npub fn bench_probe() -> u32 { 0 }\n"),
}


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "openmono" / "bench"


def aider_python(cache: Path) -> Path:
    """The Python of the venv holding Aider (made on first use, from the registry)."""
    venv = cache / "aider-0.86.2"
    python = venv / "bin" / "python"
    if (venv / ".complete").exists():
        return python
    shutil.rmtree(venv, ignore_errors=True)
    uv = shutil.which("uv") or "uv"
    print(f"making {venv} ({AIDER}, once)", flush=True)
    subprocess.run([uv, "venv", "-q", "--python", "3.11", str(venv)], check=True, timeout=300)
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), AIDER],
        check=True,
        timeout=900,
    )
    (venv / ".complete").touch()
    return python


def _one(argv: list[str]) -> dict[str, float]:
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=900, start_new_session=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{argv[1]} failed: {done.stderr[-800:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _runs(corpus: Corpus, tree: Path, aider: Path) -> tuple[list[dict[str, float]], ...]:
    edit, text = EDITS[corpus.name]
    if not (tree / edit).is_file():
        raise SystemExit(f"{corpus.name}: {edit} is not in the tree")
    theirs, ours = [], []
    for _ in range(RUNS):
        with tempfile.TemporaryDirectory(prefix=f"bench-map-{corpus.name}-") as tmp:
            a, b = Path(tmp) / "aider", Path(tmp) / "ours"
            shutil.copytree(tree, a, symlinks=True)
            shutil.copytree(tree, b, symlinks=True)
            common = [edit, text, str(TOKENS)]
            theirs.append(
                _one([str(aider), str(HERE / "_aider_map.py"), str(a), corpus.files, *common])
            )
            data = str(Path(tmp) / "data")
            ours.append(_one([sys.executable, str(HERE / "_our_map.py"), str(b), *common, data]))
    return theirs, ours


def med(rows: list[dict[str, float]], key: str) -> float:
    return statistics.median(r[key] for r in rows)


def main() -> None:
    cache = cache_dir()
    aider = aider_python(cache)
    print(
        f"repository map vs Aider's RepoMap ({AIDER}), {TOKENS} tokens, median of {RUNS} "
        "fresh processes each",
        flush=True,
    )
    for corpus in CORPORA:
        tree = fetch(corpus, cache / "corpora")
        theirs, ours = _runs(corpus, tree, aider)
        print(
            f"{corpus.name} ({corpus.language}, {corpus.spec}, {int(med(ours, 'files'))} files "
            f"indexed by us, {int(med(theirs, 'files'))} given to Aider)",
            flush=True,
        )
        for key, label in (
            ("cold_ms", "cold build"),
            ("incremental_ms", "after one edit"),
            ("warm_ms", "new process, cache on disk"),
        ):
            o, t = med(ours, key), med(theirs, key)
            print(f"  {label:28s} ours {o:9.1f} ms  Aider {t:9.1f} ms  ratio {o / t:5.2f}x")
        o, t = med(ours, "peak_kib") / 1024, med(theirs, "peak_kib") / 1024
        label = "peak RSS after cold build"
        print(f"  {label:28s} ours {o:9.1f} MiB Aider {t:9.1f} MiB", flush=True)
    load = os.getloadavg()
    print(
        f"measured on {os.cpu_count()} cores, load average {load[0]:.1f} (shared machine)",
        flush=True,
    )


if __name__ == "__main__":
    main()
