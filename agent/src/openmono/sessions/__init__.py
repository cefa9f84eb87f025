"""Sessions: JSONL files (a header line, then one message per line), an index, and /undo snapshots.

Each message is appended, flushed and fsynced before the loop goes on, so a killed process loses at
most the line it was writing; loading skips such a torn line.
"""

from openmono.sessions._errors import SessionError
from openmono.sessions._file import LoadedSession, SessionWriter, load_session
from openmono.sessions._records import (
    RecordedCall,
    SessionHeader,
    SessionMessage,
    new_session_id,
    now_iso,
)
from openmono.sessions._snapshots import Snapshots
from openmono.sessions._store import SessionStore, SessionSummary, first_user_text

__all__ = [
    "LoadedSession",
    "RecordedCall",
    "SessionError",
    "SessionHeader",
    "SessionMessage",
    "SessionStore",
    "SessionSummary",
    "SessionWriter",
    "Snapshots",
    "first_user_text",
    "load_session",
    "new_session_id",
    "now_iso",
]
