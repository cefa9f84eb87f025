"""The box's own model behind Firecrawl's `json` and `summary` formats.

Modules: `_client` (the gateway's LLM route: `/services`, `/props`, chat completions, each with a
timeout), `_schema` (the request's JSON Schema checked, answers validated), `_chunks` (a page cut
to the model's context; the answers' merge rule), `_extract` (the formats themselves).
"""

from openmono_scrape.model._chunks import merge, merge_all, split
from openmono_scrape.model._client import Answer, ContextOverflow, ModelClient
from openmono_scrape.model._extract import JsonAsk, Made, PageModel
from openmono_scrape.model._schema import checked, problems

__all__ = [
    "Answer",
    "ContextOverflow",
    "JsonAsk",
    "Made",
    "ModelClient",
    "PageModel",
    "checked",
    "merge",
    "merge_all",
    "problems",
    "split",
]
