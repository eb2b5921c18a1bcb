"""The yuke envelope ("JSON-RPC lite": string ids, no `jsonrpc` member) and the error codes by name."""

from __future__ import annotations

from enum import IntEnum
from typing import Any

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import Str

# The protocol version `initialize` reports.
PROTOCOL_VERSION = 1


class ErrorCode(IntEnum):
    """Numeric error codes; names follow yuke's `lib/proto/enums.zig`."""

    BAD_REQUEST = -32602  # invalid line, request or params; limits exceeded (also parse errors)
    BAD_PROTOCOL = -32600  # framing or version violation
    UNKNOWN_METHOD = -32601
    UNKNOWN_SESSION = -31000
    STALE_CURSOR = -31002  # cursor of another result generation, or not a cursor at all
    UNKNOWN_MESSAGE = -31003
    UNKNOWN_PART = -31004
    UNKNOWN_INPUT = -31005  # absent or already consumed
    UNKNOWN_CONFIG_REV = -31006
    UNKNOWN_SKILL = -31009  # also "skills are not supported"
    INPUT_ALREADY_STARTED = -31010
    QUEUE_FULL = -31011
    RUN_MISMATCH = -31012
    SESSION_BUSY = -31015
    SESSION_HAS_CHILDREN = -31016
    RUNTIME_FAILED = -31017
    INVALID_PATCH = -31018
    UNSUPPORTED_MODEL = -31019
    UNSUPPORTED_REASONING = -31020
    OVERLOADED = -31021
    NOT_IMPLEMENTED = -31022
    UNKNOWN_PROVIDER = -31023
    UNKNOWN_INTERACTION = -31024
    SETUP_REQUIRED = -31025  # name used in this era; number guessed (docs/engine.md, open point #1)
    CONFIG_CONFLICT = -31026  # same
    AUTH_REQUIRED = -31028
    INTERNAL = -32603


class ErrorObject(YukeModel):
    code: ErrorCode
    message: Str


class Request(YukeModel, omit_defaults=False):
    id: Str
    method: Str
    params: dict[str, Any] = {}


class ResponseOk(YukeModel):
    id: Str
    result: dict[str, Any]


class ResponseError(YukeModel):
    id: Str
    error: ErrorObject


class Notification(YukeModel):
    method: Str
    params: dict[str, Any]
