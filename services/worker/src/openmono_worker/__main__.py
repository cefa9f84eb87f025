"""`python -m openmono_worker [celery worker options]`: start the tool worker.

Same as `celery -A openmono_worker.celery_app worker ...`; the default node name is
`openmono@<hostname>`, which the health check pings:
`celery -A openmono_worker.celery_app inspect ping -d openmono@$(hostname) --timeout 5`.
"""

from __future__ import annotations

import sys

from openmono_worker.celery_app import app


def main(argv: list[str] | None = None) -> None:
    args = list(sys.argv[1:] if argv is None else argv)
    if not any(a in ("-n", "--hostname") or a.startswith("--hostname=") for a in args):
        args = ["--hostname", "openmono@%h", *args]
    if not any(a == "-l" or a.startswith("--loglevel") for a in args):
        args = ["--loglevel", "INFO", *args]
    app.worker_main(["worker", *args])


if __name__ == "__main__":
    main()
