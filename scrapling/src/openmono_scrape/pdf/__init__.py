"""PDF to text: the text layer as headings, paragraphs and ruled tables, within byte, page, inflate
and time limits (`_text` drives; `_layout` turns lines into blocks; `_inflate` bounds streams)."""

from openmono_scrape.pdf._text import PDF_TYPES, PdfLimits, looks_like_pdf, pdf_to_text

__all__ = ["PDF_TYPES", "PdfLimits", "looks_like_pdf", "pdf_to_text"]
