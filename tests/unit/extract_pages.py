"""HTML pages shared by the extraction tests: an article with site chrome around it."""

from __future__ import annotations

PAGE_URL = "https://example.com/blog/2024/post.html"

PARAGRAPHS = [
    "The harbour town woke slowly under a low grey sky, and the fishing boats that had left before "
    "dawn were already turning back towards the breakwater with their holds half full.",
    "Local historians say the market square has hosted a Saturday fair for more than four hundred "
    "years, and the stone arcade along its northern side still bears the marks of the old scales.",
    "Residents argue about the new ferry timetable with the same energy their grandparents spent "
    "on the railway, because every change to the crossing reshapes the rhythm of the whole week.",
    "By late afternoon the light changes completely, the slate roofs turn silver, and the cafés "
    "put their chairs out again as if the morning's rain had never happened at all.",
]

NAV = (
    '<nav class="site-nav"><ul><li><a href="/">Home</a></li><li><a href="/about">About us</a></li>'
    '<li><a href="/contact">Contact the newsroom</a></li></ul></nav>'
)
SIDEBAR = (
    '<aside class="sidebar"><h3>Popular elsewhere</h3><ul><li><a href="/p/1">Sidebar teaser one</a>'
    '</li><li><a href="/p/2">Sidebar teaser two</a></li></ul></aside>'
)
FOOTER = (
    '<footer class="site-footer"><p>Copyright 2024 Example Media. All rights reserved.</p></footer>'
)


def article_page(
    extra_body: str = "", *, head: str = "<title>A Day in the Harbour Town</title>"
) -> str:
    """A realistic article page; `extra_body` is inserted in the middle of the article."""
    paragraphs = "".join(f"<p>{text}</p>" for text in PARAGRAPHS[:2])
    more = "".join(f"<p>{text}</p>" for text in PARAGRAPHS[2:])
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'>{head}"
        "<style>body { color: red } .secret { display: none }</style>"
        "<script>var tracking = 'SCRIPT_PAYLOAD';</script></head><body>"
        f"<header>{NAV}</header><div class='layout'>"
        "<main><article><h1>A Day in the Harbour Town</h1>"
        f"{paragraphs}{extra_body}{more}</article></main>"
        f"{SIDEBAR}</div>{FOOTER}<script>console.log('SCRIPT_TAIL')</script></body></html>"
    )
