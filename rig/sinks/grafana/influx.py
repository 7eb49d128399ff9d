"""The InfluxDB (InfluxQL) panel target and annotation the Grafana Foundation SDK lacks,
as its own datasources add theirs (docs/dashboards.md, "Built with Grafana's Foundation SDK").
"""

from __future__ import annotations

import typing
from dataclasses import dataclass

from grafana_foundation_sdk.cog import builder as cogbuilder
from grafana_foundation_sdk.cog import variants as cogvariants
from grafana_foundation_sdk.models import dashboard as sdk

PLUGIN_ID = "influxdb"

ResultFormat = typing.Literal["time_series", "table", "logs"]


@dataclass
class InfluxQuery(cogvariants.Dataquery):
    """A raw InfluxQL panel target (the query editor's "raw query" mode)."""

    ref_id: str = ""
    query: str = ""
    raw_query: bool = True
    result_format: ResultFormat = "time_series"
    # The legend pattern, e.g. "$tag_board"; unset: Grafana names the series itself.
    alias: str | None = None
    datasource: sdk.DataSourceRef | None = None
    hide: bool | None = None

    def to_json(self) -> dict[str, object]:
        payload: dict[str, object] = {
            "refId": self.ref_id,
            "query": self.query,
            "rawQuery": self.raw_query,
            "resultFormat": self.result_format,
        }
        for key, value in (
            ("alias", self.alias),
            ("datasource", self.datasource),
            ("hide", self.hide),
        ):
            if value is not None:
                payload[key] = value
        return payload


class InfluxAnnotation(sdk.AnnotationQuery):
    """An InfluxQL annotation: the SDK's AnnotationQuery plus the fields Grafana's InfluxDB
    datasource reads (the query, and which columns hold the event's text and tags)."""

    query: str
    text_column: str | None
    tags_column: str | None

    def __init__(
        self,
        query: str = "",
        text_column: str | None = None,
        tags_column: str | None = None,
        **common: typing.Any,
    ) -> None:
        super().__init__(**common)
        self.query = query
        self.text_column = text_column
        self.tags_column = tags_column

    def to_json(self) -> dict[str, object]:
        payload = super().to_json()
        payload["query"] = self.query
        if self.text_column is not None:
            payload["textColumn"] = self.text_column
        if self.tags_column is not None:
            payload["tagsColumn"] = self.tags_column
        payload["target"] = self.migrated_target()
        return payload

    def migrated_target(self) -> dict[str, object]:
        """The fields above as Grafana's `migrateLegacyAnnotation` makes its `target`
        (why both: docs/dashboards.md)."""
        return {
            "refId": "",
            "query": self.query,
            "queryType": "tags",
            "fromAnnotations": True,
            "tagsColumn": self.tags_column or "",
            "textColumn": self.text_column or "",
            "timeEndColumn": "",
            "titleColumn": "",
            "name": self.name,
        }


M = typing.TypeVar("M", InfluxQuery, sdk.AnnotationQuery)


class Built(cogbuilder.Builder[M]):
    """A model made whole, for the SDK's builders, which take builders."""

    def __init__(self, model: M) -> None:
        self._internal = model

    def build(self) -> M:
        return self._internal
