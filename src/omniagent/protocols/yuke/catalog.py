"""The model catalog: providers, models and prices."""

from __future__ import annotations

from typing import ClassVar, Literal

from omniagent.protocols.yuke.base import YukeModel
from omniagent.protocols.yuke.ids import F64, U64, Bool, CatalogRev, ModelId, Str

ProviderState = Literal["ready", "needs_credential", "needs_route", "expired"]


class ProviderInfo(YukeModel):
    id: Str
    name: Str
    state: ProviderState


class ModelCost(YukeModel):
    """USD per million tokens; an absent price is unknown, not zero."""

    input: F64 | None = None
    output: F64 | None = None
    cache_read: F64 | None = None
    cache_write: F64 | None = None


class ModelInfo(YukeModel):
    id: ModelId
    provider: Str
    selector: Str
    name: Str
    context_window: U64 | None = None
    max_output_tokens: U64 | None = None
    reasoning_levels: list[Str]
    default_reasoning: Str
    supports_vision: Bool | None = None
    supports_tools: Bool | None = None
    cost: ModelCost


class CatalogListParams(YukeModel):
    since_rev: CatalogRev | None = None


class CatalogListResultUnchanged(YukeModel, tag="unchanged"):
    type: ClassVar[Literal["unchanged"]] = "unchanged"
    catalog_rev: CatalogRev


class CatalogListResultFull(YukeModel, tag="full"):
    type: ClassVar[Literal["full"]] = "full"
    catalog_rev: CatalogRev
    providers: list[ProviderInfo]
    models: list[ModelInfo]


CatalogListResult = CatalogListResultUnchanged | CatalogListResultFull


class CatalogReloadResult(YukeModel):
    catalog_rev: CatalogRev
    changed: Bool


class CatalogChangedData(YukeModel):
    catalog_rev: CatalogRev
