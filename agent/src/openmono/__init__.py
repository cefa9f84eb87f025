"""OpenMono agent core: the agentic loop, its CLI, and the native stack launcher."""

__version__ = "0.1.0"
