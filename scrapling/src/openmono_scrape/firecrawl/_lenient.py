"""Firecrawl's v1 names on v2, and v2's on v1: read for what they mean, and said so.

Clients mix the versions (Dify's plugin sends `maxDepth`, `ignoreSitemap` and
`allowBackwardLinks` to v2; older SDKs send v2's `sitemap` to v1). Firecrawl itself refuses such a
body ("Unrecognized key"); this server applies each option as the version that has it defines it
and names it in the answer's `warning`, so nothing a client asked for is dropped without a word.
When both spellings are given, the request's own version's name wins and the other one is named
as not applied. The table of names is `MAPPINGS` (docs: scrapling/README.md, "v1 and v2 names").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from openmono_contracts.firecrawl import FirecrawlScrapeOptions
from openmono_contracts.firecrawl_jobs import FirecrawlCrawlRequest, FirecrawlMapRequest

Version = Literal["v1", "v2"]


@dataclass(frozen=True)
class Crossed:
    """One option of the other version: its wire name, the version that has it, how it is read
    here, and the name this version uses instead (when it has one) that wins over it."""

    field: str
    wire: str
    owner: Version
    meaning: str
    rival: str | None = None
    rival_wire: str | None = None


MAPPINGS: dict[str, tuple[Crossed, ...]] = {
    "crawl": (
        Crossed(
            "max_depth",
            "maxDepth",
            "v1",
            "applied as v1 defines it: at most that many path segments below the start URL's "
            "(v2's maxDiscoveryDepth counts link hops instead)",
        ),
        Crossed(
            "ignore_sitemap",
            "ignoreSitemap",
            "v1",
            "read as v2's sitemap: 'skip' when true, 'include' when false",
            "sitemap",
            "sitemap",
        ),
        Crossed(
            "allow_backward_links",
            "allowBackwardLinks",
            "v1",
            "read as crawlEntireDomain, its v2 name",
            "crawl_entire_domain",
            "crawlEntireDomain",
        ),
        Crossed(
            "sitemap",
            "sitemap",
            "v2",
            "read as v1's ignoreSitemap ('skip': true; 'include': false; 'only' crawls the "
            "sitemap's pages and those they link to)",
            "ignore_sitemap",
            "ignoreSitemap",
        ),
    ),
    "map": (
        Crossed(
            "ignore_sitemap",
            "ignoreSitemap",
            "v1",
            "read as v2's sitemap: 'skip' when true",
            "sitemap",
            "sitemap",
        ),
        Crossed(
            "sitemap_only",
            "sitemapOnly",
            "v1",
            "read as v2's sitemap: 'only' when true",
            "sitemap",
            "sitemap",
        ),
        Crossed(
            "sitemap",
            "sitemap",
            "v2",
            "read as v1's ignoreSitemap/sitemapOnly ('skip', 'only')",
        ),
    ),
}

_SCRAPE_OPTIONS = (
    Crossed(
        "json_options",
        "jsonOptions",
        "v1",
        "read as v2's {type: 'json', schema, prompt} format",
    ),
    Crossed(
        "extract",
        "extract",
        "v1",
        "read as the legacy extract format's options (v2: {type: 'json', schema, prompt})",
    ),
)


def _note(c: Crossed, version: Version, given: set[str]) -> str:
    if c.rival is not None and c.rival in given:
        return (
            f"{c.wire} is Firecrawl {c.owner}'s name and was not applied: {c.rival_wire} "
            f"(this {version} request's own) was given too and is used"
        )
    return f"{c.wire} is Firecrawl {c.owner}'s name, not {version}'s: {c.meaning}"


def _table(rows: tuple[Crossed, ...], given: set[str], version: Version, at: str) -> list[str]:
    out: list[str] = []
    for c in rows:
        if c.owner != version and c.field in given:
            out.append(at + _note(c, version, given))
    return out


def _format_notes(raw: list[str | dict[str, Any]], version: Version, at: str) -> list[str]:
    out: list[str] = []
    for i, item in enumerate(raw):
        name = item.get("type") if isinstance(item, dict) else item
        if version == "v1" and isinstance(item, dict):
            out.append(
                f"{at}formats.{i}: a format object is Firecrawl v2's form, not v1's: "
                f"read as the {name!r} format with its options"
            )
        elif version == "v2" and name == "extract":
            out.append(
                f"{at}formats.{i}: 'extract' is Firecrawl v1's legacy name of the json "
                "format: answered in the document's 'extract', as v1 does"
            )
    return out


def scrape_warnings(opts: FirecrawlScrapeOptions, version: Version, at: str = "") -> list[str]:
    """The other version's names in scrape options (`at` prefixes where they sit)."""
    return _format_notes(opts.formats, version, at) + _table(
        _SCRAPE_OPTIONS, opts.model_fields_set, version, at
    )


def crawl_warnings(req: FirecrawlCrawlRequest, version: Version) -> list[str]:
    return _table(MAPPINGS["crawl"], req.model_fields_set, version, "") + scrape_warnings(
        req.scrape_options, version, "scrapeOptions."
    )


def map_warnings(req: FirecrawlMapRequest, version: Version) -> list[str]:
    return _table(MAPPINGS["map"], req.model_fields_set, version, "")


def joined(warnings: list[str]) -> str | None:
    return "; ".join(warnings) or None
