"""Console parsers: `Line` objects in, typed records (with the line index) out.

One module per source (U-Boot, BOOTSTAGE table, kernel printk, initcall_debug, systemd,
user patterns). Parsers only read text; times are attached later from the line index
through `rig.analysis.events.line_event` (see `rig.analysis.timing`). The entry point that
turns all of it into report sections is `rig.analysis.console.analyze_console`.

`options` reads the `[analysis]` knobs, the `app` parser's patterns among them.
"""
