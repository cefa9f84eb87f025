"""OpenMono's hands: the tool implementations and the Celery app that runs them against a workspace."""
