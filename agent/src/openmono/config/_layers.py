"""Settings sources below the environment: `LLAMA_API_KEY` and the merged settings files.

The file paths depend on the working directory and `--config`, so `load_settings` puts the merged
files in a context variable for the duration of one `Settings(...)` construction.
"""

from __future__ import annotations

import os
from contextvars import ContextVar
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_settings import PydanticBaseSettingsSource

FILE_LAYERS: ContextVar[dict[str, Any] | None] = ContextVar("openmono_file_layers", default=None)


class FileLayersSource(PydanticBaseSettingsSource):
    """The user, project and `--config` files, already deep-merged by `load_settings`."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        data = FILE_LAYERS.get() or {}
        return data.get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(FILE_LAYERS.get() or {})


class LlamaKeySource(PydanticBaseSettingsSource):
    """`LLAMA_API_KEY` (the stack's own name for the key) fills `llm.api_key` below `OPENMONO_*`."""

    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        key = os.environ.get("LLAMA_API_KEY", "")
        return {"llm": {"api_key": key}} if key else {}
