"""The conversation tools: AskUser, TodoWrite, EnterPlanMode, ExitPlanMode, MemorySave.

They change the conversation rather than the workspace (a question to the user, the loop's todo
list and mode, the memory in its system prompt), so they run in the agent, as one loop `Toolset`
(`ConversationTools`) beside `Agent` and `Playbook`, on the loop that calls them. Memory files
(`Memory`, `read_memory_dir`, `forget`) are what MemorySave writes and `/memory` lists.
"""

from openmono.conversation._errors import ConversationError
from openmono.conversation._memory import Memory, forget, read_memories, read_memory_dir
from openmono.conversation._todo_write import TodoItem
from openmono.conversation._toolset import ConversationTools

__all__ = [
    "ConversationError",
    "ConversationTools",
    "Memory",
    "TodoItem",
    "forget",
    "read_memories",
    "read_memory_dir",
]
