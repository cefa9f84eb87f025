"""The gateway's `/services` document and its contract declare the same keys: the Caddyfile's
template writes each key once, `ServicesInfo` declares each (issue 37: it returned `crawl_durable`,
which the contract did not declare)."""

from __future__ import annotations

import re
from pathlib import Path

from openmono_contracts import ServicesInfo

CADDYFILE = Path(__file__).resolve().parents[2] / "caddy" / "Caddyfile"


def _template_keys() -> list[str]:
    text = CADDYFILE.read_text()
    block = text[text.index("handle /services {") :]
    template = re.search(r"respond `(\{.*?\})` 200", block)
    assert template is not None, "no /services template in the Caddyfile"
    # top-level keys: a quoted name right after `{` or `,` and before `:`
    return re.findall(r'(?:^\{|,)"([a-z_]+)":', template.group(1))


def test_the_template_and_the_contract_name_the_same_keys() -> None:
    keys = _template_keys()
    assert len(keys) == len(set(keys))
    assert keys == list(ServicesInfo.model_fields)


def test_an_older_gateway_without_crawl_durable_still_parses() -> None:
    info = ServicesInfo.model_validate({"llm": True, "search": False, "scrape": True})
    assert info.crawl_durable is False
