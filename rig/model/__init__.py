"""Plain data passed between the layers (instruments -> artifacts -> analysis -> sinks):
what the instruments recorded (`capture`), a run (`run`, run.json), a report (`report`,
report.json, with its console `sections` and `clocks`), a soak's journal and summary, and
the codec that maps them onto JSON."""

from rig.model.capture import Chunk, MarkerScan
from rig.model.report import Report
from rig.model.run import Run

__all__ = ["Chunk", "MarkerScan", "Report", "Run"]
