"""The root of every error omniagent raises on purpose.

    OmniagentError
    ├── runtime.errors.AgentError          a runtime call failed; `kind` is the sidecar's ErrorBody kind
    │   ├── NotInstalled, SpawnFailed, AuthRequired, HandshakeTimeout, UnsupportedFeature,
    │   ├── InvalidConfiguration, InvalidRequest, ResumeFailed, SessionBusy, ProtocolFailed,
    │   └── ProcessExited, SessionClosed, UnknownSession
    └── wire.errors.WireError              framing and transport (FrameTooLarge, PeerClosed)

Each wire turns these into its own error shape in exactly one place (`runtime.sidecar` for the anyagent wire).
Messages are fixed sentences with the variant's fields; they never carry a secret or a traceback.
"""


class OmniagentError(Exception):
    """Base class for errors omniagent raises on purpose."""
