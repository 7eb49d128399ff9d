"""report.html: one boot's timeline (stages as a Gantt chart, initcalls as a flame chart
in time order, console lines, all on the reference clock), and a comparison page for
several boots. Figures are plotly's; the page opens offline (plotly.js is embedded).

Every function reads the typed model (`rig.model.Report`, docs/model.md), never report
dicts; the parsers' detail sections it shows (the clock fits) are the JSON they wrote.

console (console lines on the reference clock), flame (the initcall flame chart), timeline
and compare (Report -> plotly figures, pure), style, tables (HTML tables), plotlyjs (the
embedded library), page (the document), write (report.html in a run folder, `rig report`).
"""
