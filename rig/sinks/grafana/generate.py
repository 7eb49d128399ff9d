"""Dashboards -> JSON files (config/grafana/dashboards/<uid>.json), or a check that the
committed files are what the code generates. The dashboards are the Grafana Foundation
SDK's models, encoded by its own encoder."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from grafana_foundation_sdk.cog.encoder import JSONEncoder

from rig.config.budgets import DEFAULT_PATH, read_budgets, read_budgets_if_any
from rig.errors import InputError
from rig.sinks.grafana.dashboards import all_dashboards
from rig.untrusted import read_json_file

DASHBOARDS_DIR = Path("config/grafana/dashboards")


def render(budgets_path: Path | None) -> dict[str, str]:
    """File name -> JSON text of every dashboard; deterministic (sorted keys). The budgets
    of `--budgets` (which must exist), else of config/budgets.toml if there is one: without
    it the dashboards draw no budget lines."""
    budgets = read_budgets(budgets_path) if budgets_path else read_budgets_if_any(DEFAULT_PATH)
    out: dict[str, str] = {}
    for dash in all_dashboards(budgets):
        name = f"{dash.uid}.json"
        out[name] = json.dumps(dash, cls=JSONEncoder, sort_keys=True, indent=2) + "\n"
    return out


@dataclass
class BuildResult:
    out_dir: str
    written: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # differ from, or missing on disk
    extra: list[str] = field(default_factory=list)  # on disk, no longer generated

    @property
    def current(self) -> bool:
        return not self.stale and not self.extra

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "current": self.current}


def build(out_dir: Path, budgets_path: Path | None, check: bool = False) -> BuildResult:
    """Write the dashboards (or only compare them, with `check`)."""
    files = render(budgets_path)
    res = BuildResult(str(out_dir))
    on_disk = {p.name for p in out_dir.glob("*.json")} if out_dir.is_dir() else set()
    res.extra = sorted(on_disk - set(files))
    for name, text in files.items():
        path = out_dir / name
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        res.stale.append(name)
        if not check:
            out_dir.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            res.written.append(name)
    if not check:
        for name in res.extra:  # a dashboard removed from the code leaves Grafana too
            (out_dir / name).unlink()
        res.stale, res.extra = [], []
    return res


#: A generated dashboard is ~100 kB; the folder may hold anyone's files.
MAX_DASHBOARD_BYTES = 32 << 20


def load_dashboards(out_dir: Path) -> list[dict[str, Any]]:
    """The dashboards in `out_dir`, read as untrusted JSON (rig.untrusted): an error names
    the file (exit 2)."""
    out = []
    for p in sorted(out_dir.glob("*.json")):
        dash = read_json_file(p, MAX_DASHBOARD_BYTES, InputError)
        if not isinstance(dash, dict):
            raise InputError(f"{p}: expected a dashboard (a JSON object)")
        out.append(dash)
    return out
