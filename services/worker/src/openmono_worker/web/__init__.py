"""Web access of the tools: capability resolution, the gateway paths and their fallbacks.

docs/architecture.md §6. WebSearch and WebFetch (in `openmono_worker.tools`) call `web_search` /
`web_fetch` here; each answer says which path answered (`gateway` or `fallback`) and why. The
agent builds `ToolRequest.web` with `resolve_web_access` (gateway = `web.gateway`, else
`llm.endpoint`).

Modules: `_capability` (route per call) over `_probe` (cached `/services`), `_searxng` and
`_scrape` (gateway paths), `_ddg` and `_direct` (fallbacks; `_direct` uses the shared
`openmono_contracts.netguard`), `_convert` (HTML to markdown), `_http` (cancellable runs),
`_untrusted` (page text marked as data for the model).
"""

from openmono_contracts.searxng import SearchHit, SearchPage

from openmono_worker.web._access import gateway_base, resolve_web_access
from openmono_worker.web._ddg import decode_link
from openmono_worker.web._ddg import parse as parse_duckduckgo
from openmono_worker.web._errors import (
    FallbackError,
    FallbackOff,
    GatewayError,
    SearchDegraded,
    WebPathError,
)
from openmono_worker.web._fetch import FetchedPage, web_fetch
from openmono_worker.web._http import run_cancellable
from openmono_worker.web._probe import clear as clear_probe_cache
from openmono_worker.web._search import PageRead, SearchAnswer, search_and_read, web_search
from openmono_worker.web._searxng import normalise as normalise_searxng
from openmono_worker.web._untrusted import wrap_page, wrap_untrusted

__all__ = [
    "FallbackError",
    "FallbackOff",
    "FetchedPage",
    "GatewayError",
    "PageRead",
    "SearchAnswer",
    "SearchDegraded",
    "SearchHit",
    "SearchPage",
    "WebPathError",
    "clear_probe_cache",
    "decode_link",
    "gateway_base",
    "normalise_searxng",
    "parse_duckduckgo",
    "resolve_web_access",
    "run_cancellable",
    "search_and_read",
    "web_fetch",
    "web_search",
    "wrap_page",
    "wrap_untrusted",
]
