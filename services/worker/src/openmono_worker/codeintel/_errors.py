"""Errors of the code-intelligence package, all `ToolError`s so a tool can let them through.

ToolError (openmono_worker.errors)
 └── CodeIntelError       anything the code tools cannot do; the message is for the model
      ├── NoServer        no language server for this file's language (none known, or not on PATH)
      │    └── NeedsTrust its server would run the workspace's code, which is not trusted
      ├── ServerFailed    the server would not start, died, or answered with an error
      └── RequestTimedOut the server did not answer within the bounded wait
"""

from __future__ import annotations

from openmono_worker.errors import ToolError


class CodeIntelError(ToolError):
    """Base of every error raised by `openmono_worker.codeintel`."""


class NoServer(CodeIntelError):
    """No language server can serve this file (unknown language, or its binary is missing)."""


class ServerFailed(CodeIntelError):
    """The language server did not start, exited, or answered a request with an error."""


class RequestTimedOut(CodeIntelError):
    """A request got no answer within its time budget (the server stays up for the next one)."""


class NeedsTrust(NoServer):
    """The file's server would run code the workspace brings, and the user has not trusted it."""
