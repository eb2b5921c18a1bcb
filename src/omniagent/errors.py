"""The root of every error omniagent raises on purpose.

Catch `OmniagentError` to catch them all. The tree (module, then the classes it defines, children indented):

    OmniagentError
    ├── wire.errors.WireError                       framing and transport
    │   ├── wire.errors.LineTooLarge               a line over the reader's cap (skipped, the reader goes on)
    │   ├── wire.errors.PeerClosed                  the other side closed its end
    │   ├── wire.decode.BadJson                     a line that is not a JSON value this side accepts
    │   │   └── wire.decode.NumberOutOfRange        JSON, but a number out of range (answered with the line's id)
    │   ├── wire.process.SpawnError                 a child process could not be started
    │   ├── wire.messages.RpcError                  a JSON-RPC error answer (sent or received)
    │   ├── runtime.adapters.pi.rpc.PiError         pi answered a command with an error
    │   ├── runtime.adapters.pi.rpc.PiExited        pi's process ended under a command
    │   ├── runtime.adapters.claude.control.ControlFailed  Claude Code refused a control request, or went away
    │   ├── runtime.adapters.opencode.server.ServerError   an HTTP call to opencode's server failed
    │   └── runtime.adapters.opencode.server.ServerExited  opencode's server process ended
    ├── runtime.errors.AgentError                   a runtime call failed; `kind` is the sidecar's ErrorBody kind
    │   ├── NotInstalled, SpawnFailed, AuthRequired, HandshakeTimeout, UnsupportedFeature,
    │   ├── InvalidConfiguration, InvalidRequest, ResumeFailed, SessionBusy, ProtocolFailed,
    │   └── ProcessExited, SessionClosed, UnknownSession
    ├── runtime.adapters.mock.MockScriptError       a mock script file is unreadable or malformed (also a ValueError)
    ├── runtime.adapters.opencode.server.ConfigProblem  OPENCODE_CONFIG_CONTENT is not a JSON object (also a ValueError)
    ├── runtime.adapters.acp.client.AcpError        an ACP agent process misbehaved
    │   ├── AgentUnsupported, AgentExited
    │   └── AgentProtocolError
    ├── engine.errors.EngineError                   a request the engine refuses, with its yuke error code
    │   └── engine.run.orphans.RunOwnedElsewhere    another live process owns the session's run
    ├── engine.run.executor.Interrupted             a run was asked to stop (never leaves the run)
    ├── engine.run.orphans.RunLost                  another process ended this run meanwhile (never leaves the engine)
    ├── engine.run.executor.RoundFailed             a model call failed for good (never leaves the run)
    ├── engine.store.connection.StoreError          a shared (PostgreSQL) store failed; SQLite raises sqlite3.Error
    │   └── engine.store.connection.StoreConflict   a write broke a uniqueness rule of a shared store
    ├── engine.providers.neutral.ProviderError      a model call failed; `code` is the run's RunErrorCode
    ├── engine.providers.failures.StreamErrorReported  an error inside a 200 stream, as read (never leaves the client)
    ├── engine.providers.resolve.ResolveError       no provider can be built for a model selector
    ├── engine.providers.catalog.file.CatalogError  providers.json is unreadable or invalid
    ├── engine.providers.auth.credentials.CredentialError  the key or grant file cannot be read or written
    ├── engine.providers.auth.oauth.OAuthError      a device-login step failed (refused, unreachable, not understood)
    ├── engine.skills.files.SkillFormatError        a SKILL.md the engine cannot read (that skill is skipped)
    ├── engine.tools.context.ToolError              a tool call cannot proceed (becomes an error result)
    ├── sandbox.errors.SandboxUnavailable           the sandbox cannot start here
    ├── engine.sandbox_file.SandboxFileError      sandbox.json is unreadable or invalid
    ├── testing.prompt_cache.CacheRefusal           the fake LLM refuses a request as the real API would (a 400)
    ├── batch.tasks.TaskFileError                   a batch task file is unreadable or invalid
    ├── batch.results.ResultsFileError              a batch's results.jsonl holds a line that is not a result
    ├── batch.workspace.WorkspaceError              a batch task's workspace cannot be prepared or diffed
    ├── batch.scheduler.BatchError                  a batch cannot start (a task without an agent, a bad option)
    ├── batch.ray_backend.RayUnavailable            Ray is not installed, or its cluster cannot be started or joined
    ├── faces.cli.run.NoAgent                       `omniagent run` has no agent to run the prompt with
    ├── hub.state.SessionHeld                       another process runs the hub session (its lock is taken)
    ├── serving.acp.follow.SessionEnded             a hub session ended before the turn a prompt waits for did
    └── faces.hub.registry.TooManyClients           the hub has as many connections as it takes (answered 503)

Each wire turns these into its own error shape in exactly one place: `serving.sidecar.commands` for the anyagent
wire, `Engine.handle` (with `faces.rpc.connection`) for yuke, `serving.acp.connection` for ACP. Messages are fixed
sentences with the variant's fields; they never carry a secret or a traceback. `tests/test_errors.py` checks this
drawing against the code: every exception class omniagent defines is under the root and named here.
"""


class OmniagentError(Exception):
    """Base class for errors omniagent raises on purpose."""
