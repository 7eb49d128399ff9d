"""firmware-hooks/u-boot across U-Boot releases, without U-Boot's repository (CI has no
network): check-releases.sh on a small git repository made here, whose tags hold only
the lines the patches read (each hunk's context at its own line number), and the
v2024.04+ variant against the 2023.01 patch it must stay in step with.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
HOOKS = REPO / "firmware-hooks" / "u-boot"
SCRIPT = HOOKS / "check-releases.sh"
NAME = "0001-boot-bootrig-marker-right-before-entering-the-OS.patch"
BASE = HOOKS / NAME
VARIANT = HOOKS / "v2024.04+" / NAME
README = HOOKS / "README.md"
FILES = ["boot/Kconfig", "boot/Makefile", "boot/bootm_os.c", "boot/bootrig.c", "include/bootrig.h"]
HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@ ?(.*)$")


def parse(patch: Path) -> dict[str, list[tuple[int, str, list[str]]]]:
    """{path: [(old start line, function line of the header, hunk lines)]}, -p1 paths."""
    files: dict[str, list[tuple[int, str, list[str]]]] = {}
    current: list[tuple[int, str, list[str]]] = []
    lines = patch.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("+++ "):
            current = files.setdefault(line[4:].split("/", 1)[1], [])
        elif m := HUNK.match(line):
            body = []
            for rest in lines[i + 1 :]:
                if rest.startswith(("@@", "diff --git", "-- ")):
                    break
                body.append(rest)
            current.append((int(m.group(1)), m.group(2), body))
    return files


def preimage(hunks: list[tuple[int, str, list[str]]], shift: int, tag: str) -> str:
    """A file in which every hunk finds its context at its own line (+shift), the
    function line of its header right above it, and filler elsewhere."""
    out: list[str] = [f"filler {tag} {n}" for n in range(shift)]
    for start, func, body in hunks:
        while len(out) < start + shift - 2:
            out.append(f"filler {tag} {len(out)}")
        out.append(func or f"filler {tag} {len(out)}")
        out += [b[1:] for b in body if b[:1] in (" ", "-") or b == ""]
    return "\n".join(out) + "\n"


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@invalid", *args],
        check=True,
        capture_output=True,
    )


def run(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["bash", str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        check=False,
    )


CMDS = {
    "cmd/gpio.c": "U_BOOT_CMD(gpio, 4, 0, do_gpio,\n\tcase 's':\n\t\tsub_cmd = GPIOC_SET;\n",
    "cmd/mem.c": "U_BOOT_CMD(\n\tmw,\t4,\t1,\tdo_mem_mw,\n",
    "cmd/echo.c": "U_BOOT_CMD(\n\techo, CONFIG_SYS_MAXARGS, 1, do_echo,\n",
}


@pytest.fixture(scope="module")
def uboot_like(tmp_path_factory) -> Path:
    """Tags: v2021.10 (the files under common/), v2023.01 (the 2023.01 patch's context),
    v2023.04 (the same three lines further down), v2023.07 (a Makefile context line
    changed, as upstream's), v2024.04 and v2024.07-rc1 (the
    variant's context), v2024.04-rc1 (older than a release: left out); cmd/gpio.c is
    missing in v2023.04."""
    repo = tmp_path_factory.mktemp("uboot-like")
    git(repo, "init", "-q")

    def commit(
        tag: str, patch: Path, shift: int = 0, under: str = "boot", edit: tuple[str, str] = ("", "")
    ) -> None:
        for old in repo.iterdir():
            if old.name != ".git":
                subprocess.run(["rm", "-rf", str(old)], check=True)
        for path, hunks in parse(patch).items():
            if not hunks or hunks[0][0] == 0:
                continue  # a new file
            target = repo / path.replace("boot/", f"{under}/", 1)
            target.parent.mkdir(parents=True, exist_ok=True)
            text = preimage(hunks, shift, tag)
            if path == "boot/Makefile":
                text = text.replace(*edit)
            target.write_text(text)
        for path, text in CMDS.items():
            if not (tag == "v2023.04" and path == "cmd/gpio.c"):
                (repo / path).parent.mkdir(exist_ok=True)
                (repo / path).write_text(text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "--allow-empty", "-m", tag)
        git(repo, "tag", tag)

    commit("v2021.10", BASE, under="common")
    commit("v2023.01", BASE)
    commit("v2023.04", BASE, shift=3)
    # as upstream v2023.07: a line right after the hunk's last-but-one context line
    commit("v2023.07", BASE, edit=("pxe_utils.o\n\n", "pxe_utils.o\nobj-$(CONFIG_QFW) += q.o\n"))
    commit("v2024.04-rc1", VARIANT)
    commit("v2024.04", VARIANT)
    commit("v2024.07-rc1", VARIANT)
    return repo


def rows(out: str) -> dict[str, list[str]]:
    lines = out.splitlines()
    assert lines[0].split("\t") == ["release", "patch", "hook site", "compiles", "env recipe"]
    return {cells[0]: cells[1:] for cells in (line.split("\t") for line in lines[1:])}


def test_help_exits_0_and_says_how():
    r = run("--help")
    assert r.returncode == 0, r.stderr
    assert "check-releases.sh [options] UBOOT_GIT [TAG...]" in r.stdout
    assert "Exit codes: 0" in r.stdout and "set -euo" not in r.stdout


@pytest.mark.parametrize(
    "args, message",
    [
        ([], "no U-Boot git repository given"),
        (["--bogus", "."], "unknown option '--bogus'"),
        (["{tmp}/none"], "{tmp}/none: no such folder"),
        (["{tmp}"], "{tmp}: not a git repository"),
        (["{hooks}"], "{hooks}: not a git repository"),
        (["--patch", "{tmp}/no.patch", "{git}"], "{tmp}/no.patch: no such patch file"),
        (["--patch", "{readme}", "{git}"], "{readme}: not a patch"),
        (["--config", "DM_GPIO", "{git}"], "--config 'DM_GPIO': want CONFIG_NAME=value"),
    ],
)
def test_bad_input_is_exit_2_with_a_clear_message(tmp_path, args, message):
    (tmp_path / "git").mkdir()
    git(tmp_path / "git", "init", "-q")
    fill = {"tmp": tmp_path, "readme": README, "hooks": HOOKS, "git": tmp_path / "git"}
    # a folder inside a git work tree (this one) must not be taken for that repository
    r = run(*(a.format(**fill) for a in args), cwd=REPO)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.startswith("check-releases.sh: error: "), r.stderr
    assert message.format(**fill) in r.stderr
    assert r.stdout == "" and "Traceback" not in r.stderr


def test_a_repository_without_release_tags_is_refused(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "commit", "-q", "--allow-empty", "-m", "x")
    git(tmp_path, "tag", "v2020.01")
    r = run("--from", "v2020.01", tmp_path / ".git", "v2019.07")
    assert r.returncode == 2 and "no tag v2019.07" in r.stderr, r.stderr
    r = run("--from", "v2099.01", tmp_path)
    assert r.returncode == 2 and "no tag v2099.01" in r.stderr, r.stderr


def test_table_of_the_2023_01_patch(uboot_like):
    r = run("--tsv", "--from", "v2021.10", uboot_like)
    assert r.returncode == 0, r.stderr
    got = rows(r.stdout)
    # releases in order, the newest -rc after them; an -rc whose release is out is not
    assert list(got) == ["v2021.10", "v2023.01", "v2023.04", "v2023.07", "v2024.04", "v2024.07-rc1"]
    missing = "fails: boot/Kconfig missing; boot/Makefile missing; boot/bootm_os.c missing"
    assert got["v2021.10"] == [missing, "common/bootm_os.c (argc, argv)", "-", "yes"]
    assert got["v2023.01"] == ["clean", "boot/bootm_os.c (argc, argv)", "-", "yes"]
    assert got["v2023.04"] == ["offset", "boot/bootm_os.c (argc, argv)", "-", "missing: gpio set"]
    assert got["v2023.07"][0] == "fuzz: boot/Makefile hunk 1 (fuzz 1)"
    patch, site = got["v2024.04"][:2]
    assert patch.startswith("fails: ") and "boot/bootm_os.c hunk 2" in patch, patch
    assert site == "boot/bootm_os.c (bmi)"


def test_table_of_the_variant_in_markdown(uboot_like):
    # a relative path, as typed in the README (patch itself runs elsewhere)
    rel = VARIANT.relative_to(HOOKS)
    r = run("--patch", rel, uboot_like, "v2023.01", "v2024.04", "v2024.07-rc1", cwd=HOOKS)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:2] == [
        "| release | patch | hook site | compiles | env recipe |",
        "| --- | --- | --- | --- | --- |",
    ]
    assert lines[3] == "| v2024.04 | clean | boot/bootm_os.c (bmi) | - | yes |"
    assert lines[4] == "| v2024.07-rc1 | clean | boot/bootm_os.c (bmi) | - | yes |"
    assert lines[2].startswith("| v2023.01 | fails: "), lines[2]
    assert len(lines) == 5


def test_a_series_reports_each_patch(uboot_like, tmp_path):
    # the variant after the base patch: its new files exist by then, so it cannot apply
    r = run("--tsv", "--patch", BASE, "--patch", VARIANT, uboot_like, "v2023.01")
    assert r.returncode == 0, r.stderr
    cell = rows(r.stdout)["v2023.01"][0]
    assert cell.startswith(f"{NAME}: clean; {NAME}: fails: "), cell


def added(patch: Path, path: str) -> list[str]:
    return [b[1:] for _, _, body in parse(patch)[path] for b in body if b.startswith("+")]


def test_every_patch_touches_the_files_the_readme_names():
    readme = README.read_text()
    for patch in (BASE, VARIANT):
        assert sorted(parse(patch)) == sorted(FILES), patch
        assert str(patch.relative_to(HOOKS)) in readme
        text = patch.read_text()
        assert text.startswith("From ") and "\nSubject: [PATCH] " in text
        # a hunk's counts must match its lines, or patch calls it malformed
        for hunks in parse(patch).values():
            for _start, _func, body in hunks:
                assert all(b[:1] in (" ", "-", "+") or b == "" for b in body), patch
    assert "check-releases.sh" in readme


def test_variant_is_the_same_hook_adapted_to_bootm_info():
    for path in ("boot/Kconfig", "boot/Makefile", "include/bootrig.h"):
        assert added(VARIANT, path) == added(BASE, path), path
    base, variant = added(BASE, "boot/bootrig.c"), added(VARIANT, "boot/bootrig.c")
    # bootrig.c: only the includes differ (no <common.h>, which v2024.10 removed)
    assert [x for x in base if not x.startswith("#include")] == [
        x for x in variant if not x.startswith("#include")
    ]
    assert "#include <common.h>" in base and "#include <common.h>" not in variant
    assert {"#include <stdio.h>", "#include <linux/string.h>"} <= set(variant)
    call = added(VARIANT, "boot/bootm_os.c")
    assert call == [
        x.replace("images->os.type", "bmi->images->os.type") for x in added(BASE, "boot/bootm_os.c")
    ]
    hook = parse(VARIANT)["boot/bootm_os.c"][1]
    assert hook[1] == "int boot_selected_os(int state, struct bootm_info *bmi, boot_os_fn *boot_fn)"
    body = [b[1:] for b in hook[2]]
    assert body.index('\t\tbootrig_marker("bootm");') < body.index("\tboot_fn(state, bmi);")


def test_variant_applied_puts_the_hook_before_boot_fn(uboot_like, tmp_path):
    subprocess.run(
        ["git", "-C", str(uboot_like), "worktree", "add", "-q", str(tmp_path / "t"), "v2024.04"],
        check=True,
        capture_output=True,
    )
    tree = tmp_path / "t"
    r = subprocess.run(
        ["patch", "-p1", "--batch", "-d", str(tree), "-i", str(VARIANT)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    src = (tree / "boot" / "bootm_os.c").read_text()
    fn = src.index("int boot_selected_os(int state, struct bootm_info *bmi")
    guard = src.index("if (IS_ENABLED(CONFIG_BOOTRIG_MARKER) && state == BOOTM_STATE_OS_GO", fn)
    assert fn < guard < src.index('bootrig_marker("bootm");', guard)
    assert src.index('bootrig_marker("bootm");') < src.index("boot_fn(state, bmi);", fn)
    makefile = (tree / "boot" / "Makefile").read_text().splitlines()
    # the object sits inside the non-SPL block, next to the bootm objects
    assert makefile.index("obj-$(CONFIG_BOOTRIG_MARKER) += bootrig.o") < makefile.index(
        "obj-$(CONFIG_CMD_BOOTM) += bootm.o bootm_os.o"
    )
