"""Plain data passed between the layers (instruments -> artifacts -> analysis -> sinks):
a capture's markers and the console's chunks (`capture`), a run (`run`, run.json) and a
report (`report`, report.json), and the codec that maps the last two onto JSON."""

from rig.model.capture import Chunk, MarkerScan
from rig.model.report import Report
from rig.model.run import Run

__all__ = ["Chunk", "MarkerScan", "Report", "Run"]
