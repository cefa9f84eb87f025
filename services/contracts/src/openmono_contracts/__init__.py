"""Wire contracts of OpenMono: every pydantic model that crosses a process boundary.

The agent core, the tool worker, the scrape service and the tests import these models from here and
nowhere else, so a contract changes in exactly one place (see docs/architecture.md).

Modules:
    services  -- the gateway's `/services` capability document
    tools     -- `ToolRequest` / `ToolResult` exchanged between the agent and the tool worker
    scrape    -- the scrape service's request, response and error bodies
"""

from openmono_contracts.errors import ContractError
from openmono_contracts.scrape import (
    ScrapeErrorBody,
    ScrapeErrorCode,
    ScrapeFormat,
    ScrapeRequest,
    ScrapeResponse,
    ScrapeEngine,
)
from openmono_contracts.services import ServicesInfo
from openmono_contracts.tools import ToolRequest, ToolResult, WebAccess

__all__ = [
    "ContractError",
    "ScrapeEngine",
    "ScrapeErrorBody",
    "ScrapeErrorCode",
    "ScrapeFormat",
    "ScrapeRequest",
    "ScrapeResponse",
    "ServicesInfo",
    "ToolRequest",
    "ToolResult",
    "WebAccess",
]
