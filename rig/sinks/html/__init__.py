"""report.html (one boot's timeline on the reference clock), the comparison page of
several boots, and the soak's and `rig compare`'s pages (docs/report-html.md)."""
