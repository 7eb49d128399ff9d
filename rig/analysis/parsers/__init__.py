"""Console parsers: `Line` objects in, typed records (with the line index) out, one module
per source. Times are attached later from the line index (`rig.analysis.events.line_event`);
`rig.analysis.console.analyze_console` turns it all into report sections.
"""
