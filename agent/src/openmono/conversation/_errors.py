"""The one exception base of `openmono.conversation`."""

from openmono.errors import OpenMonoError


class ConversationError(OpenMonoError):
    """A conversation tool could not do what was asked (a memory that cannot be written); the
    message is written for the model."""
