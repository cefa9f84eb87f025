"""`python -m openmono_scrape --host 127.0.0.1 --port 5000`: run the service under uvicorn."""

from __future__ import annotations

import argparse
import logging

import uvicorn
from openmono_contracts.logurl import redact_handlers

from openmono_scrape.app import create_app
from openmono_scrape.settings import ScrapeSettings


def main(argv: list[str] | None = None) -> None:
    settings = ScrapeSettings()
    parser = argparse.ArgumentParser(prog="python -m openmono_scrape", description=__doc__)
    parser.add_argument("--host", default=settings.host, help="bind address (SCRAPE_HOST)")
    parser.add_argument("--port", type=int, default=settings.port, help="port (SCRAPE_PORT)")
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s %(message)s")
    # every line (ours, uvicorn's, a library's, a traceback) names URLs without their query,
    # fragment or userinfo: a page's token or signed URL never lands in the log (logurl.py)
    redact_handlers()
    uvicorn.run(
        create_app(settings),
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        log_config=None,  # uvicorn's loggers go to the root handler above, not its own
        access_log=False,
        timeout_graceful_shutdown=10,
    )


if __name__ == "__main__":
    main()
