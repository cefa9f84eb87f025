"""The full-screen interactive session (Textual): the app, its transcript and its widgets."""

from openmono.cli.tui._app import OpenMonoApp, run_tui
from openmono.cli.tui._widgets import PermissionPrompt, ToolPanel

__all__ = ["OpenMonoApp", "PermissionPrompt", "ToolPanel", "run_tui"]
