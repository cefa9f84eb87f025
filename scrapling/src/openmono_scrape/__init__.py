"""OpenMono scrape service: FastAPI over the Scrapling library (never name a package `scrapling`)."""
