"""Credentials as public state: the wire never carries a key back."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

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
    # The key is write-only: never logged, never echoed (repr hides it).
    api_key: Str = Field(repr=False)


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


class LoginSucceeded(YukeModel):
    type: Literal["succeeded"] = "succeeded"


class LoginCanceled(YukeModel):
    type: Literal["canceled"] = "canceled"


class LoginFailed(YukeModel):
    type: Literal["failed"] = "failed"
    message: Str


AuthLoginOutcome = Annotated[LoginSucceeded | LoginCanceled | LoginFailed, Field(discriminator="type")]


class AuthLoginFinishedData(YukeModel):
    login_id: LoginId
    provider_id: ProviderId
    outcome: AuthLoginOutcome
