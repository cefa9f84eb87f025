"""The Caddy snippets made from the key store: what the gateway imports (caddy/Caddyfile, "keys").

Three files in the store's folder, each imported inside one block of the Caddyfile by a glob (no
file, no keys: a gateway without a store starts as before):

- `keys-map.caddy`: entries of the `map` from a key's lookup prefix (keyformat) to its name, its
  expiry (unix seconds, or empty) and its rate limit per minute (or empty);
- `keys-accounts.caddy`: `basic_auth` accounts, `<id> <bcrypt hash>`;
- `keys-generation.caddy`: the answer of `GET /_openmono/keys`, so a writer can tell when the
  gateway runs the new table.

Every value is checked by the contracts' patterns before it gets here, and none can hold a blank,
a quote, a brace or a `#`, so no value can add tokens or placeholders to the config.
"""

from __future__ import annotations

from openmono_contracts.gatewaykeys import KeyFile

from openmono_keys.keyformat import lookup_prefix

MAP_FILE = "keys-map.caddy"
ACCOUNTS_FILE = "keys-accounts.caddy"
GENERATION_FILE = "keys-generation.caddy"
SNIPPET_FILES = (MAP_FILE, ACCOUNTS_FILE, GENERATION_FILE)

_HEADER = "# Written by `openmono keys` from keys.json: edits here are lost at the next change.\n"


def render(store: KeyFile) -> dict[str, str]:
    """File name -> content for the three snippets."""
    map_lines = []
    account_lines = []
    for key in store.keys:
        expires = str(int(key.expires_at.timestamp())) if key.expires_at else '""'
        rate = str(key.rate_per_min) if key.rate_per_min else '""'
        map_lines.append(f"{lookup_prefix(key.id)} {key.name} {expires} {rate}\n")
        account_lines.append(f"{key.id} {key.hash}\n")
    generation = f'respond `{{"generation":{store.generation}}}` 200\n'
    return {
        MAP_FILE: _HEADER + "".join(map_lines),
        ACCOUNTS_FILE: _HEADER + "".join(account_lines),
        GENERATION_FILE: _HEADER + generation,
    }
