"""The wireless variant's kernel fragment (config/qemu-arm64-wifi.toml, the QEMU target
with an initcall of an optional subsystem, init_mac80211_hwsim, for `rig try`'s
initcall_blacklist advice). Its images are a kernel build of their own, about 19 minutes
cold on two cores, so `make test` does not build them: `python bench/try.py` builds
them and tries the advice end to end (docs/try.md)."""

from __future__ import annotations

from tests.e2e import REPO


def test_the_wireless_fragment_keeps_every_line_of_the_hooked_one() -> None:
    """kernel-wifi.config is kernel.config plus the wireless stack: a line added to the
    hooked target's fragment must reach the variant too."""
    hooks = REPO / "firmware-hooks" / "qemu-arm64"
    wanted = [ln for ln in (hooks / "kernel.config").read_text().splitlines()
              if ln.startswith("CONFIG_") or ln.endswith(" is not set")]  # fmt: skip
    have = set((hooks / "kernel-wifi.config").read_text().splitlines())
    assert wanted and [ln for ln in wanted if ln not in have] == []
    assert "CONFIG_MAC80211_HWSIM=y" in have
