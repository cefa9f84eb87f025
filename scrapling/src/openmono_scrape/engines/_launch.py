"""How the browser engine starts Chromium: never as root, and with Chromium's own sandbox on.

Chromium's sandbox puts each renderer (the process that runs a page's scripts) in its own user,
PID and network namespaces under a seccomp filter. Without it (`--no-sandbox`, which Playwright
adds unless told otherwise) a renderer exploit runs with the scrape service's rights. Chromium
refuses to run as root with its sandbox on, so a service running as root (the native stack
started by root) starts Chromium as an unprivileged user instead (`browser_user`, else the
`openmono-browser` user `make setup` creates, else `nobody`): through a small wrapper that
`setpriv`s to that user, with no capabilities and no new privileges, and a profile folder of that
user's own (the service's temporary folders are root's alone). Launches by a service that is not
root start Chromium directly, as the service's user.

The namespace sandbox needs unprivileged user namespaces: there on Debian's kernels and here,
not in a default Docker container (its seccomp profile refuses them; neither the namespaces nor
the setuid helper work there), so the image turns the sandbox off (`browser_sandbox`) and runs the
whole container as a non-root user instead (scrapling/README.md, "Engines").
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shlex
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openmono_scrape.errors import EngineUnavailable
from openmono_scrape.settings import ScrapeSettings

# made by scripts/setup.sh when it runs as root; `nobody` where it does not exist
DEDICATED_USER = "openmono-browser"
FALLBACK_USER = "nobody"


def browser_account(settings: ScrapeSettings) -> pwd.struct_passwd | None:
    """The user Chromium runs as when this service runs as root; None when it does not."""
    if os.geteuid() != 0:
        return None
    names = [settings.browser_user] if settings.browser_user else [DEDICATED_USER, FALLBACK_USER]
    for name in names:
        with contextlib.suppress(KeyError):
            account = pwd.getpwnam(name)
            if account.pw_uid != 0:
                return account
    raise EngineUnavailable(
        f"the service runs as root and Chromium must not: no unprivileged user {names[0]!r} "
        "to run it as (set SCRAPE_BROWSER_USER)",
        engine="browser",
    )


@dataclass
class Launch:
    """What one browser start is given (`options`), and the folders to remove after it."""

    options: dict[str, Any]
    folders: list[Path] = field(default_factory=list)

    def cleanup(self) -> None:
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)


def _wrapper(folder: Path, browser: str, account: pwd.struct_passwd, home: Path) -> Path:
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        raise EngineUnavailable(
            "the service runs as root and `setpriv` (util-linux) is missing: Chromium cannot be "
            "started as an unprivileged user",
            engine="browser",
        )
    q = shlex.quote
    script = folder / "chromium"
    script.write_text(
        "#!/bin/sh\n"
        f"# Chromium as {account.pw_name}: the scrape service runs as root, Chromium never does\n"
        f"HOME={q(str(home))} XDG_CONFIG_HOME={q(str(home / '.config'))} "
        f"XDG_CACHE_HOME={q(str(home / '.cache'))}\n"
        "export HOME XDG_CONFIG_HOME XDG_CACHE_HOME\n"
        f"exec {q(setpriv)} --reuid={account.pw_uid} --regid={account.pw_gid} --clear-groups "
        f'--inh-caps=-all --bounding-set=-all --no-new-privs -- {q(browser)} "$@"\n'
    )
    script.chmod(0o700)
    return script


def prepare(settings: ScrapeSettings) -> Launch:
    """The Scrapling session options that start Chromium as described above."""
    sandbox: dict[str, Any] = {"chromium_sandbox": settings.browser_sandbox}
    account = browser_account(settings)
    browser = settings.browser_path or ""
    if account is None:
        return Launch({"executable_path": browser, "additional_args": sandbox})
    own = Path(tempfile.mkdtemp(prefix="openmono-chromium-launch-"))  # root's: the wrapper
    profile = Path(tempfile.mkdtemp(prefix="openmono-chromium-"))  # the browser user's
    launch = Launch({}, [own, profile])
    try:
        home = profile / "home"
        data = profile / "profile"
        for path in (home, data):
            path.mkdir(mode=0o700)
        for path in (profile, home, data):
            os.chown(path, account.pw_uid, account.pw_gid)
        launch.options = {
            "executable_path": str(_wrapper(own, browser, account, home)),
            "user_data_dir": str(data),
            "additional_args": sandbox,
        }
    except BaseException:
        launch.cleanup()
        raise
    return launch
