"""plotly.js for the pages, so they open offline: `shared`, one copy beside the run
folders, or `gzip`, embedded (docs/report-html.md, "Size and browsers").
"""

from __future__ import annotations

import base64
import gzip
import os
from functools import cache
from html import escape
from pathlib import Path

from rig.artifacts import atomic

SHARED, GZIP = "shared", "gzip"
MODES = (SHARED, GZIP)

#: The folder beside the run folders that holds the shared plotly.js.
ASSETS = ".bootrig-assets"

# Every loader defines bootrigPlotly(): a promise that resolves once window.Plotly exists.
_GZIP_LOADER = """
function bootrigPlotly() {
  if (window.Plotly) return Promise.resolve();
  if (typeof DecompressionStream === "undefined")
    return Promise.reject(new Error("this browser cannot unpack the embedded plotly.js "
      + "(no DecompressionStream: Chromium 80+, Firefox 113+ and Safari 16.4+ have it)"));
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

# Decided at the window's load event, when the <script src> has run or failed: the page
# says what it saw and never guesses why.
_SHARED_LOADER = """
function bootrigPlotly() {
  if (window.Plotly) return Promise.resolve();
  const loaded = new Promise((resolve) => {
    if (document.readyState === "complete") resolve();
    else window.addEventListener("load", resolve, {once: true});
  });
  return loaded.then(() => {
    if (window.Plotly) return;
    const el = document.getElementById("plotly-js");
    const seen = el.dataset.failed
      ? "plotly.js did not load from " + el.src + " (the browser could not load that file)"
      : "plotly.js loaded from " + el.src + " but did not define Plotly";
    throw new Error(seen + "; this page uses the one shared copy beside the run folders. "
      + "The tables below are complete. To draw the figures without it, make a page that "
      + "embeds plotly.js: rig report <this run folder> --js gzip");
  });
}
"""


def gzip_b64(data: bytes) -> str:
    """gzip (mtime=0: the same report gives the same page, byte for byte), then base64."""
    return base64.b64encode(gzip.compress(data, 9, mtime=0)).decode()


def get_plotlyjs() -> str:
    """plotly's plotly.js, imported here: `rig report --help` reads MODES without plotly."""
    from plotly.offline import get_plotlyjs as plotly_js

    return str(plotly_js())


@cache
def _gzip_b64() -> str:
    return gzip_b64(get_plotlyjs().encode())


def version() -> str:
    from plotly.offline import get_plotlyjs_version

    return str(get_plotlyjs_version())


def asset_name() -> str:
    """The shared file's name: the version in it, so two rig versions coexist."""
    return f"plotly-{version()}.min.js"


def asset_path(root: Path) -> Path:
    return Path(root) / ASSETS / asset_name()


@cache
def _asset_bytes() -> bytes:
    """This rig's plotly.js, read once per process (a soak writes a page per cycle)."""
    return get_plotlyjs().encode()


#: Shared files this process has checked or written: path -> (inode, size, mtime_ns).
_checked: dict[str, tuple[int, int, int]] = {}


def _same(path: Path, data: bytes) -> bool:
    """`path` holds exactly `data`, compared a megabyte at a time."""
    view, pos = memoryview(data), 0
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size != len(data):
            return False
        while chunk := f.read(1 << 20):
            if view[pos : pos + len(chunk)] != chunk:
                return False
            pos += len(chunk)
    return pos == len(data)


def ensure_asset(root: Path) -> Path:
    """The shared plotly.js under `root`, written atomically when missing or different."""
    path = asset_path(root)
    data = _asset_bytes()
    try:
        st = path.stat()
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if _checked.get(str(path)) == key or _same(path, data):
            _checked[str(path)] = key
            return path
    except FileNotFoundError:
        pass
    path.parent.mkdir(exist_ok=True)
    atomic.write_bytes(path, data, durable=False)
    st = path.stat()
    _checked[str(path)] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return path


def shared_src(page: Path, root: Path) -> str:
    """The relative URL of the shared file as seen from `page` (where it was written)."""
    rel = os.path.relpath(os.path.abspath(asset_path(root)), os.path.abspath(Path(page).parent))
    return Path(rel).as_posix()


def scripts(mode: str, src: str | None = None) -> str:
    """The <script> elements that provide bootrigPlotly(); `src`: mode `shared` only."""
    if mode == SHARED:
        if src is None:
            raise ValueError("plotly.js mode 'shared' needs the shared file's relative URL")
        return (
            f'<script id="plotly-js" src="{escape(src, quote=True)}"'
            ' onerror="this.dataset.failed = 1"></script>\n'
            f"<script>{_SHARED_LOADER}</script>"
        )
    if mode == GZIP:
        return (
            f'<script id="plotly-js-gz" type="application/octet-stream">{_gzip_b64()}</script>\n'
            f"<script>{_GZIP_LOADER}</script>"
        )
    raise ValueError(f"plotly.js mode {mode!r}: expected one of {', '.join(MODES)}")


def footer_note(mode: str, src: str | None = None) -> str:
    """How the page gets plotly.js, for its footer (plain text)."""
    if mode == SHARED:
        return f"loaded from {src} beside the run folders (one copy; the page needs no network)"
    return "embedded (the page needs no network)"
