"""OpenMono agent core: the agentic loop, its CLI, and the native stack launcher."""

from importlib.metadata import PackageNotFoundError, version

try:
    # the one version: agent/pyproject.toml, as the installed package's metadata carries it
    __version__ = version("openmono")
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
