"""The board a Robot suite measures: its rig config (with the labgrid place, when one is
named) and the instruments, held per suite so that nobody takes the board between its
boots (docs/robot.md). The suite also claims the place on this host while it runs
(rig/instruments/target_claim.py): labgrid cannot tell two processes of one user apart.
"""

from __future__ import annotations

from pathlib import Path

from rig.config.load import RigConfig
from rig.config.target import place_override
from rig.instruments.drivers import load_config
from rig.instruments.target_claim import PlaceClaim
from rig.measure.session import Session


class Target:
    def __init__(self, config: Path, board: Path | None = None, place: str | None = None) -> None:
        self.board = board
        self.cfg: RigConfig = load_config(config, board=board, overrides=place_override(place))
        self._session: Session | None = None
        t = self.cfg.target
        self._claim = PlaceClaim(t.place, t.coordinator) if t is not None else None

    def metadata(self) -> dict[str, str]:
        """What the suite measures, for the suite's metadata in output.xml and log.html:
        which board (and so which budgets), which config and which place."""
        out = {"Board": self.cfg.board, "Variant": self.cfg.variant, "Config": str(self.cfg.path)}
        if self.cfg.target is not None:
            out["Place"] = self.cfg.target.place
        return out

    def session(self) -> Session:
        """The suite's instruments; opened (the place acquired) on first use."""
        if self._session is None:
            self.claim()
            reopen = self.cfg.soak.console_reopen_s if self.cfg.soak else 5.0
            self._session = Session(self.cfg, reopen)
        return self._session

    def claim(self) -> None:
        """Claim the place on this host (no place: nothing), before anything acquires it
        through labgrid, which would let a second suite of this user in."""
        if self._claim is not None:
            self._claim.claim()

    def close(self) -> None:
        """The suite's end: release the instruments, then the claim on the place."""
        try:
            self.release()
        finally:
            if self._claim is not None:
                self._claim.release()

    def release(self) -> None:
        """Power the board off and close the instruments: a place is released here. The
        claim on it stays (`Run Soak` hands the place to its own instruments)."""
        session, self._session = self._session, None
        if session is not None:
            try:
                session.power_off()
            finally:
                session.close()
