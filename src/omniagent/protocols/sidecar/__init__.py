"""The anyagent sidecar wire, protocol 1 (`schema/anyagent-wire.schema.json`), as typed models.

Encodings follow serde exactly: externally tagged enums (unit variants as bare strings, data variants as
single-key objects), `null` for absent optionals (except `AgentInstallation.upgrade` and `acp_args`, omitted),
`SystemTime` objects, and `features` as an ordered set.
"""

PROTOCOL_VERSION = 1
