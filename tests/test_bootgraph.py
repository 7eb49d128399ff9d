"""The initcall table of a real `initcall_debug` boot (tests/data/real/initcall-debug-1:
Debian's 6.1 kernel under QEMU) against the kernel's own figures and against what the
kernel's own scripts/bootgraph.pl (shipped in linux-source-6.1) draws from the same log."""

from __future__ import annotations

import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.test_real_boots import DATA, analyze

BOOT = DATA / "initcall-debug-1"
TARBALL = Path("/usr/src/linux-source-6.1.tar.xz")
_RETURN = re.compile(
    r"\] initcall (\S+?)\+0x[0-9a-f]+/0x[0-9a-f]+ returned -?\d+ after (\d+) usecs"
)
# bootgraph.pl draws an initcall when its printk span is at least (last - first) / 1200,
# in pixels 1950 / 1200 of a 1950-pixel-wide time axis.
_MIN_PX = 1950.0 / 1200.0


@pytest.fixture(scope="module")
def bootgraph(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scripts/bootgraph.pl out of Debian's linux-source-6.1 (installed for the QEMU
    target's kernel build by `make test`)."""
    if not TARBALL.exists():
        pytest.fail(f"{TARBALL} missing: apt-get install linux-source-6.1 (make test does)")
    out = tmp_path_factory.mktemp("linux")
    with tarfile.open(TARBALL) as tar:
        member = tar.getmember("linux-source-6.1/scripts/bootgraph.pl")
        tar.extractall(out, members=[member], filter="data")
    return out / member.name


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> dict:
    return analyze(BOOT, tmp_path_factory.mktemp("boot"))


def test_durations_are_the_kernels_own_usecs(report: dict) -> None:
    log = (BOOT / "console.log").read_text(errors="replace")
    kernel = [(m.group(1), int(m.group(2))) for m in _RETURN.finditer(log)]
    assert len(kernel) > 100
    ours = [(c["name"], round(c["duration_s"] * 1e6)) for c in report["initcalls"] if c["returned"]]
    assert ours == kernel


def test_the_set_bootgraph_draws(report: dict, bootgraph: Path) -> None:
    assert shutil.which("perl")
    svg = subprocess.run(
        ["perl", str(bootgraph)],
        stdin=(BOOT / "console.log").open("rb"),
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout.decode()
    rect = r'<rect x="[^"]+" width="([^"]+)" y="\d+" height="145"[^>]*/>'
    drawn = {name: float(w) for w, name in re.findall(rect + r"\s*<text[^>]*>([^<]+)</text>", svg)}
    assert len(drawn) > 10
    spans = {}
    for c in report["initcalls"]:
        if c["printk_span_s"] is not None:
            spans.setdefault(c["name"].split("+")[0], c["printk_span_s"])
    # bootgraph's pixels per second, from each drawn call: one scale for all of them.
    scales = [w / spans[name] for name, w in drawn.items()]
    assert max(scales) == pytest.approx(min(scales), rel=1e-6)
    min_span = _MIN_PX / scales[0]
    expected = {name for name, span in spans.items() if span >= min_span * (1 - 1e-9)}
    assert set(drawn) == expected
