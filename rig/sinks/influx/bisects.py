"""A bisect's answer as an InfluxDB point (measurement `bisect`, docs/contract.md), the
annotation beside the change point it explains (`rig bisect --explain ... --mark`).
"""

from __future__ import annotations

from dataclasses import dataclass

from rig.sinks.influx.client import Client
from rig.sinks.influx.lineproto import Point, encode_all, fields

BISECT = "bisect"


@dataclass(frozen=True)
class BisectMark:
    board: str
    variant: str
    stage: str
    rig: str
    time_ns: int  # the change point's
    run_id: str  # its first boot
    status: str
    commits: tuple[tuple[str, str], ...]  # (id, subject): the first bad one, or candidates
    good: str
    bad: str
    folder: str
    difference_s: float | None = None
    ci_low_s: float | None = None
    ci_high_s: float | None = None
    note: str = ""  # why there is no answer (refused)

    @property
    def text(self) -> str:
        if self.status == "found":
            ((commit, subject),) = self.commits
            text = f"bisect: first bad {commit[:12]} {subject}"
            if self.difference_s is not None:
                text += f" ({self.stage} {self.difference_s * 1e3:+.2f} ms"
                if self.ci_low_s is not None and self.ci_high_s is not None:
                    text += f", {self.ci_low_s * 1e3:+.2f} .. {self.ci_high_s * 1e3:+.2f} ms"
                text += ")"
            return text
        if self.status == "range":
            ids = ", ".join(c[:12] for c, _ in self.commits)
            return f"bisect: not decided, the first bad commit is one of {ids}"
        return f"bisect {self.status}: {self.note}"

    def point(self) -> Point:
        tags = {"rig": self.rig, "board": self.board, "variant": self.variant, "stage": self.stage}
        values = fields(
            status=self.status,
            commit=",".join(c for c, _ in self.commits),
            subject="; ".join(s for _, s in self.commits),
            good=self.good,
            bad=self.bad,
            run_id=self.run_id,
            folder=self.folder,
            text=self.text,
            difference_s=self.difference_s,
            ci_low_s=self.ci_low_s,
            ci_high_s=self.ci_high_s,
        )
        return Point(BISECT, tags, values, self.time_ns)


def write_mark(client: Client, mark: BisectMark) -> None:
    client.write(encode_all([mark.point()]), precision="ns")
