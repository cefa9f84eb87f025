"""The key store: `keys.json` (hashes only) and the gateway snippets made from it, in one folder.

Every change runs under an exclusive lock on `<folder>/.lock`, reads the file, changes it,
writes it atomically (mode 0600, the folder 0700) and then the snippets (caddy.py). The key of
`add` and `rotate` is returned once and never written anywhere. The folder is the stack's
(`<data dir>/stack/keys`) natively and a volume only the `keys` and `caddy` containers mount in
compose: never one the tool worker can read.
"""

from __future__ import annotations

import contextlib
import fcntl
import math
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

from openmono_contracts.atomicfile import atomic_write
from openmono_contracts.gatewaykeys import (
    KEY_NAME,
    OPERATOR,
    IssuedKey,
    KeyFile,
    KeyInfo,
    KeyRecord,
)
from openmono_contracts.privatefs import open_private
from pydantic import ValidationError

from openmono_keys import caddy, keyformat
from openmono_keys.errors import (
    NameInvalid,
    NameTaken,
    NameUnknown,
    StoreUnreadable,
    ValueInvalid,
)

STORE_FILE = "keys.json"
_RATE = re.compile(r"^\s*(\d{1,7})\s*(?:/\s*min)?\s*$")


def check_name(name: str) -> str:
    if not KEY_NAME.fullmatch(name):
        raise NameInvalid(f"key name {name!r}: use 1-40 characters of a-z, 0-9 and -")
    if name == OPERATOR:
        raise NameInvalid(f"key name {OPERATOR!r} is taken by LLAMA_API_KEY, the operator's key")
    return name


def parse_rate(text: str) -> int:
    """`N/min` (or a bare `N`) -> N requests per minute, N >= 1."""
    found = _RATE.match(text)
    if not found or int(found.group(1)) < 1:
        raise ValueInvalid(f"--rate {text!r}: give requests per minute as N/min, e.g. 60/min")
    return int(found.group(1))


def expiry(days: float, now: datetime) -> datetime:
    if not math.isfinite(days) or days <= 0 or days > 36500:
        raise ValueInvalid(f"--expires {days:g}: give a number of days above 0")
    return now + timedelta(days=days)


class KeyStore:
    """The store in `folder`; every method that changes it takes the lock."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def path(self) -> Path:
        return self.folder / STORE_FILE

    def read(self) -> KeyFile:
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return KeyFile()
        except OSError as exc:
            raise StoreUnreadable(f"{self.path}: {exc.strerror}") from None
        try:
            return KeyFile.model_validate_json(text)
        except ValidationError:
            raise StoreUnreadable(
                f"{self.path} is not a key file (left as it is: move it away to start over)"
            ) from None

    def infos(self, now: datetime | None = None) -> list[KeyInfo]:
        now = now or datetime.now(UTC)
        return [
            KeyInfo(
                name=k.name,
                created_at=k.created_at,
                expires_at=k.expires_at,
                rate_per_min=k.rate_per_min,
                expired=k.expires_at is not None and k.expires_at <= now,
            )
            for k in self.read().keys
        ]

    def add(
        self,
        name: str,
        *,
        expires_at: datetime | None = None,
        rate_per_min: int | None = None,
        now: datetime | None = None,
    ) -> IssuedKey:
        check_name(name)
        with self._locked() as store:
            if any(k.name == name for k in store.keys):
                raise NameTaken(f"a key named {name!r} exists: `keys rotate {name}` replaces it")
            secret = keyformat.new_secret()
            record = KeyRecord(
                name=name,
                id=keyformat.new_id({k.id for k in store.keys}),
                hash=keyformat.hash_secret(secret),
                created_at=now or datetime.now(UTC),
                expires_at=expires_at,
                rate_per_min=rate_per_min,
            )
            store.keys.append(record)
            self._save(store)
            return self._issued(record, secret, store.generation)

    def rotate(self, name: str) -> IssuedKey:
        """A new key for `name` (same expiry and rate); the old one stops working."""
        check_name(name)
        with self._locked() as store:
            index = self._index(store, name)
            secret = keyformat.new_secret()
            old = store.keys[index]
            taken = {k.id for k in store.keys}
            record = old.model_copy(
                update={"id": keyformat.new_id(taken), "hash": keyformat.hash_secret(secret)}
            )
            store.keys[index] = record
            self._save(store)
            return self._issued(record, secret, store.generation)

    def revoke(self, name: str) -> int:
        """Remove `name`'s key; returns the new generation."""
        check_name(name)
        with self._locked() as store:
            del store.keys[self._index(store, name)]
            self._save(store)
            return store.generation

    def sync(self) -> int:
        """Write the snippets from keys.json as it is (a start after a crash between the two
        writes); returns the generation."""
        with self._locked() as store:
            self._write_snippets(store)
            return store.generation

    # -- private --------------------------------------------------------------------------------

    @staticmethod
    def _index(store: KeyFile, name: str) -> int:
        for i, key in enumerate(store.keys):
            if key.name == name:
                return i
        raise NameUnknown(f"no key named {name!r} (`openmono keys list` shows them)")

    @staticmethod
    def _issued(record: KeyRecord, secret: str, generation: int) -> IssuedKey:
        return IssuedKey(
            name=record.name,
            key=keyformat.compose(record.id, secret),
            expires_at=record.expires_at,
            rate_per_min=record.rate_per_min,
            generation=generation,
        )

    @contextlib.contextmanager
    def _locked(self) -> Iterator[KeyFile]:
        with open_private(self.folder / ".lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield self.read()
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _save(self, store: KeyFile) -> None:
        store.generation += 1
        atomic_write(self.path, store.model_dump_json(indent=2) + "\n", mode=0o600)
        self._write_snippets(store)

    def _write_snippets(self, store: KeyFile) -> None:
        for name, text in caddy.render(store).items():
            atomic_write(self.folder / name, text, mode=0o600)
