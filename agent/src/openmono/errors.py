"""The agent's one exception root: every error `openmono` raises is an `OpenMonoError`.

Each subpackage has its own base under it, with typed subclasses where a caller acts on the kind:

OpenMonoError
 ├── ConfigError        config       a settings file or value that cannot be read or used
 ├── LLMError           llm          the model server failed (AuthError, ContextOverflowError, ...)
 ├── ExecutorError      executor     an executor cannot be made or used (ExecutorUnavailable), or
 │                                   a workspace cannot be routed to a worker (RouteError)
 ├── PermissionsError   permissions  a permission rule or `--allow` spec that cannot be understood
 ├── SessionError       sessions     a session cannot be found, created or read
 ├── HookError          hooks        a hook definition that cannot be used
 ├── McpClientError     mcp          an MCP server that cannot be used as configured, or a call
 ├── SubagentError      subagents    a sub-agent that cannot be started
 ├── ConversationError  conversation a conversation tool that cannot do what was asked
 ├── PlaybookError      playbooks    a playbook that cannot load or run (PlaybookInvalid, ...)
 ├── InstructionsError  instructions a rule, skill, agent or command file that cannot be used
 ├── AcpError           acp          a request an ACP surface cannot serve
 ├── StackError         stack        the native stack cannot run (ModelNotFoundError, ...)
 ├── SetupError         setup        `openmono setup` / `tunnel` cannot do what was asked
 └── KeysCommandError   keys         `openmono keys` cannot do what was asked (`mistake`: exit 2)

A surface catches `OpenMonoError` alone and shows its message, which says what to fix, without a
traceback; anything else is a bug. The rule is held by `tests/unit/test_error_root.py`.
"""


class OpenMonoError(Exception):
    """Base of every error the agent raises; the message is for the person at the keyboard."""
