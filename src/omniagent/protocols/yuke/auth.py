"""Credentials as public state: the wire never carries a key back."""

from __future__ import annotations

from typing import ClassVar, Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import Bool, LoginId, ProviderId, Str


class AuthProvider(YukeModel):
    provider_id: ProviderId
    credential_kind: Literal["api_key", "oauth"] | None = None
    can_login: Bool


class AuthListResult(YukeModel):
    providers: list[AuthProvider]


class AuthChangedData(YukeModel):
    provider: AuthProvider


class AuthSetApiKeyParams(YukeModel):
    provider_id: ProviderId
    # The key is write-only: never logged, never echoed.
    api_key: Str

    def __repr__(self) -> str:
        return f"AuthSetApiKeyParams(provider_id={self.provider_id!r}, api_key=<hidden>)"


class AuthRemoveParams(YukeModel):
    provider_id: ProviderId


class AuthLoginParams(YukeModel):
    provider_id: ProviderId


class AuthLoginResult(YukeModel):
    login_id: LoginId
    verification_url: Str
    user_code: Str


class AuthCancelLoginParams(YukeModel):
    login_id: LoginId


class LoginSucceeded(YukeModel, tag="succeeded"):
    type: ClassVar[Literal["succeeded"]] = "succeeded"


class LoginCanceled(YukeModel, tag="canceled"):
    type: ClassVar[Literal["canceled"]] = "canceled"


class LoginFailed(YukeModel, tag="failed"):
    type: ClassVar[Literal["failed"]] = "failed"
    message: Str


AuthLoginOutcome = LoginSucceeded | LoginCanceled | LoginFailed


class AuthLoginFinishedData(YukeModel):
    login_id: LoginId
    provider_id: ProviderId
    outcome: AuthLoginOutcome
