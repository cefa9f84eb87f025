"""A Firecrawl request body that does not validate, or cannot even be read as JSON (bytes that are
not UTF-8, nesting deeper than the parser goes, a number too long to read), as Firecrawl answers
it: 400 `{"success": false, "error", "details"}` naming the field or saying why the body was
unreadable, never FastAPI's `{"detail": ...}`.

Every other error goes through the service's one table (`openmono_scrape.statuses`), which gives
the Firecrawl API its own statuses (408 for a timeout, 500 for a bug) and its
`{"success": false, "error": "..."}` shape.
"""

from __future__ import annotations

from typing import Any

from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse

from openmono_scrape import statuses
from openmono_scrape.errors import BadRequest


def _detail(err: Any) -> dict[str, str | list[str]]:
    if err.get("type") == "json_invalid":  # its loc is a character offset, not a field
        at = [p for p in err.get("loc", ()) if p != "body"]
        where = f" at character {at[0]}" if at else ""
        why = (err.get("ctx") or {}).get("error") or err.get("msg", "")
        return {"path": [], "message": f"the body is not valid JSON{where}: {why}"}
    return {
        "path": [str(p) for p in err.get("loc", ()) if p != "body"],
        "message": str(err.get("msg", "")),
    }


def invalid_body(exc: RequestValidationError) -> JSONResponse:
    """400: which fields are wrong and why, never the input echoed back."""
    details = [_detail(err) for err in exc.errors()]
    first = details[0] if details else {"path": [], "message": "invalid"}
    where, message = ".".join(first["path"]), str(first["message"])
    if where or not message.startswith("the body"):
        message = f"{where or 'body'}: {message}"
    return statuses.answer(BadRequest(f"Bad Request: {message}", details), "firecrawl")


def unreadable_reason(exc: BaseException) -> str:
    """Why FastAPI could not read a body (it raises a bare 400 `HTTPException` from the cause)."""
    cause = exc.__cause__
    if isinstance(cause, UnicodeDecodeError):
        return "the body is not valid UTF-8"
    if isinstance(cause, RecursionError):
        return "the body's JSON is nested too deeply"
    if isinstance(cause, ValueError) and "integer string conversion" in str(cause):
        return "a number in the body has too many digits"
    if isinstance(cause, ValueError):
        return f"the body is not valid JSON: {cause}"
    return "the body could not be read as JSON"


def unreadable_body(exc: BaseException) -> JSONResponse:
    """400 in Firecrawl's shape for a body that is not JSON at all."""
    why = unreadable_reason(exc)
    return statuses.answer(
        BadRequest(f"Bad Request: {why}", [{"path": [], "message": why}]), "firecrawl"
    )
