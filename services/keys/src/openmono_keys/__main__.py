"""`python -m openmono_keys` (`openmono-keys`): the key service, or one store command.

    openmono-keys serve                         the rate-limit service (KEYS_HOST:KEYS_PORT)
                                                and the token tap (KEYS_TAP_PORT, if set)
    openmono-keys add NAME [--expires D] [--rate N/min]
    openmono-keys list | revoke NAME | rotate NAME | usage [--since S] | sync

The store commands print one JSON document (openmono_contracts.gatewaykeys) and exit 0; a
mistake prints `{"error": ..., "mistake": true}` and exits 2, any other failure exits 1. This is
what `openmono keys` runs inside the compose `keys` container, where the store's volume is.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys

from pydantic import BaseModel

from openmono_keys import admin
from openmono_keys.errors import KeysError, UsageMistake
from openmono_keys.settings import KeysSettings
from openmono_keys.store import KeyStore


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="openmono-keys", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command")
    sub.add_parser("serve")
    add = sub.add_parser("add")
    add.add_argument("name")
    add.add_argument("--expires", type=float)
    add.add_argument("--rate")
    sub.add_parser("list")
    for name in ("revoke", "rotate"):
        sub.add_parser(name).add_argument("name")
    sub.add_parser("usage").add_argument("--since")
    sub.add_parser("sync")
    return ap


def _run(args: argparse.Namespace, settings: KeysSettings) -> BaseModel | dict[str, int]:
    folder = settings.dir
    if args.command == "add":
        return admin.add(folder, args.name, args.expires, args.rate)
    if args.command == "rotate":
        return KeyStore(folder).rotate(args.name)
    if args.command == "revoke":
        return {"generation": KeyStore(folder).revoke(args.name)}
    if args.command == "list":
        return admin.listing(folder, settings.usage_dir)
    if args.command == "usage":
        return admin.report(settings.usage_dir, args.since)
    return {"generation": KeyStore(folder).sync()}


def serve(settings: KeysSettings) -> None:
    if not settings.gateway_secret.get_secret_value().strip():
        # 78 (EX_CONFIG): the native keeper gives up at once instead of starting it again
        print(
            "openmono-keys: GATEWAY_SECRET is empty: `make up` or `openmono setup` generates it "
            "into the env file (the gateway sends it on every request here)",
            file=sys.stderr,
        )
        sys.exit(78)
    # the store's snippets exist before the gateway imports them (a crash between writes, or a
    # volume from an older version)
    KeyStore(settings.dir).sync()
    asyncio.run(_serve(settings))


async def _serve(settings: KeysSettings) -> None:
    import uvicorn

    from openmono_keys.app import KeyService
    from openmono_keys.tap import TokenTap
    from openmono_keys.tapallow import Allowed
    from openmono_keys.tokens import TokenLog

    secret = settings.gateway_secret.get_secret_value()
    tap = None
    if settings.tap_port:
        # listening before /health answers: the gateway starts once this service is healthy
        tokens = TokenLog(settings.usage_dir, settings.tap_roll_bytes, settings.tap_keep)
        tap = TokenTap(Allowed(settings.tap_upstream_list()), tokens, secret)
        await tap.start(settings.host, settings.tap_port)
    config = uvicorn.Config(
        KeyService(secret, usage_dir=settings.usage_dir),
        host=settings.host,
        port=settings.port,
        access_log=False,  # the gateway keeps the access records; this never logs a request
        log_level="warning",
        lifespan="on",
    )
    try:
        await uvicorn.Server(config).serve()
    finally:
        if tap is not None:
            await tap.close()


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    settings = KeysSettings()
    if args.command in (None, "serve"):
        serve(settings)
        return
    try:
        result = _run(args, settings)
    except KeysError as exc:
        print(json.dumps({"error": str(exc), "mistake": isinstance(exc, UsageMistake)}))
        sys.exit(2 if isinstance(exc, UsageMistake) else 1)
    print(result.model_dump_json() if isinstance(result, BaseModel) else json.dumps(result))


if __name__ == "__main__":
    main()
