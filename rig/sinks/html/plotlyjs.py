"""plotly.js inside the page, so it opens offline.

plotly.js is 4.8 MB; a page per boot (hundreds per soak) makes that count. By default it
is embedded gzip-compressed and base64-encoded (about 2 MB) and unpacked by the browser's
DecompressionStream (Chromium 80+, Firefox 113+, Safari 16.4+); `inline` embeds it as
is, for older browsers.
"""

from __future__ import annotations

import base64
import gzip
from functools import cache

from plotly.offline import get_plotlyjs, get_plotlyjs_version

MODES = ("gzip", "inline")

# Both loaders define bootrigPlotly(): a promise that resolves once window.Plotly exists.
_GZIP_LOADER = """
function bootrigPlotly() {
  if (window.Plotly) return Promise.resolve();
  if (typeof DecompressionStream === "undefined")
    return Promise.reject(new Error("this browser cannot unpack the embedded plotly.js "
      + "(no DecompressionStream); rebuild the page with `rig report --js inline`"));
  const b64 = document.getElementById("plotly-js-gz").textContent.trim();
  const bin = atob(b64);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text().then((code) => {
    const s = document.createElement("script");
    s.textContent = code;
    document.head.appendChild(s);
  });
}
"""

_INLINE_LOADER = """
function bootrigPlotly() { return Promise.resolve(); }
"""


@cache
def _gzip_b64() -> str:
    # mtime=0: the same report gives the same page, byte for byte.
    return base64.b64encode(gzip.compress(get_plotlyjs().encode(), 9, mtime=0)).decode()


def version() -> str:
    return str(get_plotlyjs_version())


def scripts(mode: str) -> str:
    """The <script> elements that provide bootrigPlotly()."""
    if mode == "gzip":
        return (
            f'<script id="plotly-js-gz" type="application/octet-stream">{_gzip_b64()}</script>\n'
            f"<script>{_GZIP_LOADER}</script>"
        )
    if mode == "inline":
        js = get_plotlyjs().replace("</script", "<\\/script")
        return f"<script>{js}</script>\n<script>{_INLINE_LOADER}</script>"
    raise ValueError(f"plotly.js mode {mode!r}: expected one of {', '.join(MODES)}")
