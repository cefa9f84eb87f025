"""The engines that fetch a page, cheapest first (the service escalates between them).

- `fetcher`: Scrapling's HTTP client (curl_cffi), pinned to the address the SSRF guard checked.
- `browser`: patchright Chromium in one long-lived session, guarded on its context (`_guardroute`)
  and through a checking forward proxy (`egress`).
- `stealthy`: Camoufox, only where an operator installed it.

Each engine runs the SSRF guard through `check_url`, so a refusal names the engine that refused.
"""

from openmono_scrape.engines import fetcher
from openmono_scrape.engines._target import check_url
from openmono_scrape.engines.browser import BrowserEngine
from openmono_scrape.engines.stealthy import StealthyEngine

__all__ = ["BrowserEngine", "StealthyEngine", "check_url", "fetcher"]
