"""What analysis takes from a run's config snapshot (run.json `config`), read with the
config's own rules and defaults, so `rig analyze` next year gives today's report."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rig.config.analyzer import DEFAULT_DEBOUNCE_US
from rig.config.stages import parse_stages
from rig.config.tomlcheck import Table
from rig.errors import ArtifactError, ConfigError, InputError
from rig.model.options import AnalysisOptions
from rig.model.stagespec import StageSpec

#: The console rate when a config names none (rig.config.load uses it too).
DEFAULT_BAUD = 115200


@dataclass(frozen=True)
class AnalysisInputs:
    """Plain values for the analysis: it imports nothing from the config."""

    #: The console's rate, None when the snapshot names none (a bare capture): the
    #: tapped UART's rate is then detected, and the console is read at DEFAULT_BAUD.
    baud: int | None
    debounce_us: float
    stages: tuple[StageSpec, ...]
    options: AnalysisOptions

    @property
    def console_baud(self) -> int:
        return self.baud or DEFAULT_BAUD


def analysis_inputs(snapshot: dict[str, Any] | None, where: Path) -> AnalysisInputs:
    """`where`: run.json, named by every error."""
    snap = snapshot or {}
    root = Table(where, snap, "config")
    try:
        baud = root.table("console").int("baud", None, min=1, max=100_000_000)
        debounce = root.table("analyzer").float("debounce_us", None, min=0.0, max=1e6)
        stages = parse_stages(Table(where, {"stages": snap.get("stages", [])}))
        options = AnalysisOptions.from_mapping(snap.get("analysis"), "config.analysis")
    except ConfigError as e:  # a config error, but found in an artifact
        raise ArtifactError(str(e)) from None
    except InputError as e:
        raise ArtifactError(f"{where}: {e}") from None
    return AnalysisInputs(
        baud=baud,
        debounce_us=DEFAULT_DEBOUNCE_US if debounce is None else debounce,
        stages=stages,
        options=options,
    )
