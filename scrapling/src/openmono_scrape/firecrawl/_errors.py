"""A Firecrawl request body that does not validate, as Firecrawl answers it: 400 with the fields.

Every other error goes through the service's one table (`openmono_scrape.statuses`), which gives
the Firecrawl API its own statuses (408 for a timeout, 500 for a bug) and its
`{"success": false, "error": "..."}` shape.
"""

from __future__ import annotations

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from openmono_scrape import statuses
from openmono_scrape.errors import BadRequest


def invalid_body(exc: RequestValidationError) -> JSONResponse:
    """400: which fields are wrong and why, never the input echoed back."""
    details = [
        {
            "path": [str(p) for p in err.get("loc", ()) if p != "body"],
            "message": str(err.get("msg", "")),
        }
        for err in exc.errors()
    ]
    first = details[0] if details else {"path": [], "message": "invalid"}
    where = ".".join(first["path"]) or "body"
    return statuses.answer(
        BadRequest(f"Bad Request: {where}: {first['message']}", details), "firecrawl"
    )
