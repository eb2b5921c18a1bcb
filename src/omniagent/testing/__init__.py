"""Test helpers that are part of the public package: the fake LLM server and its scenarios.

Used by our own tests and by anyone testing an agent against scripted LLM answers; see docs/testing.md.
"""

from omniagent.testing.device_auth import FakeDeviceAuthServer
from omniagent.testing.scenario import (
    Drop,
    ErrorReply,
    FakeToolCall,
    FakeUsage,
    PlanQuota,
    QuotaWindow,
    RawReply,
    Reply,
    Scenario,
    Step,
)
from omniagent.testing.server import FakeLLMServer, RecordedRequest, fingerprint

__all__ = [
    "Drop",
    "ErrorReply",
    "FakeDeviceAuthServer",
    "FakeLLMServer",
    "FakeToolCall",
    "FakeUsage",
    "PlanQuota",
    "QuotaWindow",
    "RawReply",
    "RecordedRequest",
    "Reply",
    "Scenario",
    "Step",
    "fingerprint",
]
