"""Wire contracts of OpenMono: every pydantic model that crosses a process boundary.

The agent core, the tool worker, the scrape service and the tests import these models from here and
nowhere else, so a contract changes in exactly one place (see docs/architecture.md).

Modules:
    services  -- the gateway's `/services` capability document
    tools     -- `ToolRequest` / `ToolResult` exchanged between the agent and the tool worker
    scrape    -- the scrape service's request, response and error bodies
    firecrawl -- the Firecrawl-compatible API's wire shapes (an external contract, camelCase)
    searxng   -- SearXNG's JSON search answer and the one normaliser both search callers use
    netguard  -- the SSRF guard shared by the scrape service and the agent's WebFetch
    routing   -- which tool worker may run a call (workspace id, box id, queue names)
    repomap   -- the repository map the agent asks the worker for (a tool the model never sees)
    trust     -- how a client trusts the gateway across a relay (trust anchor, http refusal)

Shared helpers both sides must do the same way (imported from their modules, which pull in httpx):
    gateway     -- the bearer header, the gateway HTTP client (its TLS trust), reading `/services`
    atomicfile  -- replace a file atomically (temp file, fsync, rename)
    privatefs   -- the data dir is its owner's alone: 0700 folders, 0600 files, tightening
    logurl      -- URLs in log lines without query, fragment or userinfo
    texthygiene -- strip zero-width, bidi and other hidden characters from page text
"""

from openmono_contracts.errors import ContractError
from openmono_contracts.netguard import (
    BlockedTargetError,
    CheckedTarget,
    NetGuard,
    NetGuardError,
    UnresolvableHostError,
)
from openmono_contracts.routing import Route
from openmono_contracts.scrape import (
    CacheState,
    ScrapeEngine,
    ScrapeErrorBody,
    ScrapeErrorCode,
    ScrapeFormat,
    ScrapeRequest,
    ScrapeResponse,
)
from openmono_contracts.services import ServicesInfo
from openmono_contracts.tools import ToolErrorKind, ToolRequest, ToolResult, WebAccess
from openmono_contracts.trust import TrustError

__all__ = [
    "BlockedTargetError",
    "CacheState",
    "CheckedTarget",
    "ContractError",
    "NetGuard",
    "NetGuardError",
    "Route",
    "ScrapeEngine",
    "ScrapeErrorBody",
    "ScrapeErrorCode",
    "ScrapeFormat",
    "ScrapeRequest",
    "ScrapeResponse",
    "ServicesInfo",
    "ToolErrorKind",
    "ToolRequest",
    "ToolResult",
    "TrustError",
    "UnresolvableHostError",
    "WebAccess",
]
