"""`rig soak --resume REF` without `--config`: find the soak (a folder, its journal, or
an id under a config's results_dir), and the config it ran with, refused when it is gone
or has changed (docs/soak.md, "Which soak, which config")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rig.artifacts.rundir import read_run
from rig.config.influx import load_influx_config
from rig.config.load import RigConfig
from rig.config.target import place_override
from rig.errors import ArtifactError, InputError
from rig.instruments.drivers import load_config
from rig.model.soak import CycleRecord, HeaderRecord
from rig.names import DEFAULT_CONFIG, JOURNAL
from rig.soak.journal import read_records
from rig.soak.start import find_folder, fingerprints


def locate(ref: str, config_path: Path | None) -> Path:
    """The soak folder of REF: a path to it (or its journal), else an id under the
    results_dir of `config_path` or of the default config."""
    p = Path(ref)
    if (p / JOURNAL).is_file() or (p.name == JOURNAL and p.is_file()):
        return find_folder(Path(), ref)
    if config_path is None and not DEFAULT_CONFIG.is_file():
        raise ArtifactError(
            f"no soak {ref!r}: no {JOURNAL} in {p}, and {DEFAULT_CONFIG} (the default "
            f"config, whose results_dir holds soak ids) does not exist here; {_HINT}"
        )
    config = config_path or DEFAULT_CONFIG
    results_dir = load_influx_config(config).results_dir  # only [rig].results_dir
    try:
        return find_folder(results_dir, ref)
    except ArtifactError as e:
        raise ArtifactError(f"{e} (the results_dir of {config}); {_HINT}") from None


_HINT = "for a soak kept elsewhere give its folder (--resume PATH) or the --config it ran with"


def original_config(
    folder: Path,
    head: HeaderRecord,
    config_path: Path | None,
    board: Path | None,
    place: str | None = None,
) -> RigConfig:
    """The config the resumed soak runs with (see the module doc), on the labgrid place
    it began on: another place is another board, not the same soak."""
    soak = head.soak_id or folder.name
    if place is not None and head.place is not None and place != head.place:
        raise InputError(
            f"soak {soak} ran on labgrid place {head.place!r}, not {place!r}: resume it "
            f"with --place {head.place} (or without --place), or start a new soak"
        )
    place = place or head.place
    sets = place_override(place or None)
    profile = board or (Path(head.board_profile) if head.board_profile else None)
    if profile is not None and not profile.is_file():
        raise InputError(
            f"soak {soak}: its board profile {profile} no longer exists; "
            "resume it with --board PROFILE"
        )
    if config_path is not None:
        return load_config(config_path, board=profile, overrides=sets)
    if head.config is None:
        raise InputError(
            f"soak {soak}: its journal names no config; resume it with --config FILE "
            "(the settings it ran with are in each cycle's run.json)"
        )
    path = Path(head.config)
    if not path.is_file():
        raise InputError(
            f"soak {soak}: its config {path} no longer exists; resume it with "
            "--config FILE (the settings it ran with are in each cycle's run.json)"
        )
    cfg = load_config(path, board=profile, overrides=sets)
    now = fingerprints(cfg)
    if head.config_sha256:
        if now["config_sha256"] != head.config_sha256:
            raise InputError(_changed(soak, path))
        was = head.board_profile_sha256
        if board is None and was and now["board_profile_sha256"] != was:
            assert cfg.sim is not None
            raise InputError(
                f"soak {soak}: its board profile {cfg.sim.profile} has changed since the "
                f"soak started; restore it, or resume with --board {cfg.sim.profile} to "
                "continue with it as it is now"
            )
    elif _snapshot_differs(folder, cfg, ignore_profile=profile is not None):
        raise InputError(_changed(soak, path))
    return cfg


def _changed(soak: str, path: Path) -> str:
    return (
        f"soak {soak}: its config {path} has changed since the soak started; restore it, "
        f"or resume with --config {path} to continue with it as it is now"
    )


def _snapshot_differs(folder: Path, cfg: RigConfig, ignore_profile: bool) -> bool:
    """An old journal (no hashes): the newest cycle's run.json config snapshot against
    the config as it loads now; no cycle with a run.json: nothing to compare."""
    records, _ = read_records(folder / JOURNAL)
    for rec in reversed(records):
        if not isinstance(rec, CycleRecord):
            continue
        try:
            snap = read_run(folder / rec.run_id).config
        except (OSError, ValueError):  # ArtifactError is a ValueError
            continue
        if snap is not None:
            return _normal(snap, ignore_profile) != _normal(cfg.snapshot(), ignore_profile)
    return False


def _normal(snapshot: Any, ignore_profile: bool) -> Any:
    snap = json.loads(json.dumps(snapshot, default=str))
    if ignore_profile and isinstance(snap, dict) and isinstance(snap.get("sim"), dict):
        snap["sim"].pop("profile", None)  # --board: the path as typed, then resolved
    return snap
