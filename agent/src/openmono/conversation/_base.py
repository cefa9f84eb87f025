"""What a conversation tool is: a pydantic `Params` model, its facts, and `run(params, turn)`.

Like a worker tool (`openmono_worker.tools`) it declares its name, description, parameters and
facts on the class, so the schema the model sees is derived from `Params` alone; unlike one it
runs in the agent, on the conversation of the loop that called it (`Turn.loop`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from openmono_contracts import ToolRequest
from openmono_contracts.toolfacts import DeclaresFacts, params_schema
from pydantic import BaseModel

from openmono.llm import ToolSpec
from openmono.loop import AgentLoop, EventSink, OfferedTool

P = TypeVar("P", bound=BaseModel)


@dataclass(frozen=True)
class Turn:
    """Where a call runs: the request, the calling loop's event sink, and that loop (None when a
    dispatcher runs the call outside any loop's turn)."""

    request: ToolRequest
    emit: EventSink
    loop: AgentLoop | None


class ConversationTool(DeclaresFacts, ABC, Generic[P]):
    """Base of the conversation tools; they change nothing outside the conversation unless they
    say otherwise (MemorySave writes memory files)."""

    name: ClassVar[str]
    description: ClassVar[str]
    params_model: type[P]
    conversation = True

    @abstractmethod
    async def run(self, params: P, turn: Turn) -> str:
        """Do it; the text is the model's result. Raise `ConversationError` for a failure."""

    def offered(self) -> OfferedTool:
        spec = ToolSpec(
            name=self.name,
            description=self.description,
            parameters=params_schema(self.params_model),
        )
        return OfferedTool(spec, self.facts())
