"""The kernel patch series (firmware-hooks/linux) against Debian's linux-source-6.1 and
linux-source-6.12: one series for both.

The pristine files the patches touch are extracted from each installed tarball; the
series must apply in name order without fuzz, and with CONFIG_BOOTRIG_MARKERS off no
hook code may be compiled.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.require import require

REPO = Path(__file__).resolve().parents[1]
PATCH_DIR = REPO / "firmware-hooks" / "linux"
#: The kernel sources the series is for (Debian packages linux-source-<version>).
VERSIONS = ("6.1", "6.12")

PATCHES = sorted(PATCH_DIR.glob("*.patch"))


def touched_files(patch: Path) -> tuple[set[str], set[str]]:
    """(files the patch changes, files it creates), relative to the tree top (-p1)."""
    changed: set[str] = set()
    created: set[str] = set()
    old = None
    for line in patch.read_text().splitlines():
        if line.startswith("--- "):
            old = line[4:].split("\t")[0]
        elif line.startswith("+++ ") and old is not None:
            new = line[4:].split("\t")[0].split("/", 1)[1]
            (created if old == "/dev/null" else changed).add(new)
            old = None
    return changed, created


def added_lines(patch: Path, path: str) -> list[str]:
    """The lines a patch adds to one file."""
    out: list[str] = []
    current = None
    for line in patch.read_text().splitlines():
        if line.startswith("+++ "):
            current = line[4:].split("\t")[0].split("/", 1)[1]
        elif line.startswith("+") and current == path:
            out.append(line[1:])
    return out


@pytest.fixture(scope="module", params=VERSIONS, ids=lambda v: f"linux-{v}")
def pristine(request, tmp_path_factory) -> Path:
    """The files the series touches, as each version's tarball has them."""
    top = f"linux-source-{request.param}"
    tarball = Path("/usr/src") / f"{top}.tar.xz"
    if not tarball.exists():
        require("qemu", f"{tarball} is absent (Debian package {top})")
    assert PATCHES, f"no patches in {PATCH_DIR}"
    needed: set[str] = set()
    for p in PATCHES:
        changed, _ = touched_files(p)
        needed |= changed
    dest = tmp_path_factory.mktemp("linux")
    members = [f"{top}/{f}" for f in sorted(needed | {"Makefile"})]
    subprocess.run(
        ["tar", "-xJf", str(tarball), "-C", str(dest), *members],
        check=True,
        capture_output=True,
    )
    tree = dest / top
    for f in needed:
        assert (tree / f).is_file(), f"{f} not found in {tarball}"
    # the tarball holds the version its name says
    version, patchlevel = request.param.split(".")
    head = (tree / "Makefile").read_text()
    assert f"\nVERSION = {version}\nPATCHLEVEL = {patchlevel}\n" in head, head[:200]
    return tree


@pytest.fixture
def patched(pristine, tmp_path) -> Path:
    """A copy of the pristine files with the whole series applied."""
    tree = tmp_path / "tree"
    shutil.copytree(pristine, tree)
    for p in PATCHES:
        subprocess.run(
            ["patch", "-p1", "--batch", "--forward", "-s", "-i", str(p)],
            cwd=tree,
            check=True,
            capture_output=True,
        )
    return tree


def test_series_is_numbered_and_git_formatted():
    assert [p.name[:5] for p in PATCHES] == [f"{i:04d}-" for i in range(1, len(PATCHES) + 1)]
    for p in PATCHES:
        text = p.read_text()
        assert text.startswith("From "), p.name
        assert "\nSubject: [PATCH" in text, p.name
        for place in (str(REPO.parent), str(Path.home())):
            assert place not in text, f"{p.name} has a machine path"


def test_series_applies_cleanly_in_name_order(pristine, tmp_path):
    """Without fuzz on both; on 6.1, which the series was made against, exactly (6.12's
    files moved the same lines up or down: offsets only)."""
    exact = pristine.name == "linux-source-6.1"
    tree = tmp_path / "tree"
    shutil.copytree(pristine, tree)
    for p in PATCHES:
        dry = subprocess.run(
            ["patch", "-p1", "--dry-run", "--batch", "--forward", "-i", str(p)],
            cwd=tree,
            capture_output=True,
            text=True,
        )
        report = dry.stdout + dry.stderr
        assert dry.returncode == 0, f"{p.name} does not apply:\n{report}"
        assert "fuzz" not in report and "FAILED" not in report, f"{p.name}:\n{report}"
        assert not exact or "offset" not in report, f"{p.name}:\n{report}"
        # apply for real so the next patch sees the tree it was made against
        subprocess.run(
            ["patch", "-p1", "--batch", "--forward", "--no-backup-if-mismatch", "-s", "-i", str(p)],
            cwd=tree,
            check=True,
            capture_output=True,
        )
    assert not list(tree.rglob("*.rej")) and not list(tree.rglob("*.orig"))


def test_option_is_a_bool_off_by_default(patched):
    kconfig = (patched / "init" / "Kconfig").read_text()
    m = re.search(r"^config BOOTRIG_MARKERS\n((?:\t.*\n|\n)+?)(?=^\S)", kconfig, re.M)
    assert m, "no config BOOTRIG_MARKERS in init/Kconfig"
    body = m.group(1)
    assert re.search(r"^\tbool ", body, re.M), body
    assert not re.search(r"^\t(default|def_bool)\s+y", body, re.M), "must default to n"
    assert not re.search(r"^\tselect ", body, re.M), "must not force other options"
    makefile = (patched / "init" / "Makefile").read_text()
    assert re.search(r"^obj-\$\(CONFIG_BOOTRIG_MARKERS\)\s*\+=\s*bootrig\.o$", makefile, re.M)


def test_call_sites_are_only_marker_calls(patched):
    """do_mounts.c and main.c gain an #include and one call each: all the code is in
    init/bootrig.c, built only with the option on."""
    for patch in PATCHES:
        changed, _ = touched_files(patch)
        for path in changed & {"init/do_mounts.c", "init/main.c"}:
            for line in added_lines(patch, path):
                s = line.strip()
                assert (
                    not s
                    or s == "#include <linux/bootrig.h>"
                    or s.startswith(("/*", "*"))
                    or re.fullmatch(r"bootrig_marker\(BOOTRIG_[A-Z_]+\);", s)
                ), f"{patch.name} adds hook code outside the guard in {path}: {line!r}"
    do_mounts = (patched / "init" / "do_mounts.c").read_text()
    body = re.search(r"static int __init do_mount_root\(.*?\n}\n", do_mounts, re.S).group(0)
    assert "bootrig_marker(BOOTRIG_DO_MOUNT_ROOT);" in body
    # at the start: before the mount itself
    assert body.index("bootrig_marker") < body.index("init_mount(")
    main = (patched / "init" / "main.c").read_text()
    body = re.search(r"static int __ref kernel_init\(.*?\n}\n", main, re.S).group(0)
    hook = body.index("bootrig_marker(BOOTRIG_KERNEL_INIT);")
    assert body.index("free_initmem();") < hook < body.index("run_init_process(")


def _compile_caller(header_dir: Path, tmp_path: Path, *defines: str) -> str:
    src = tmp_path / "caller.c"
    src.write_text(
        "#include <linux/bootrig.h>\n"
        "void caller(void) { bootrig_marker(BOOTRIG_DO_MOUNT_ROOT);"
        " bootrig_marker(BOOTRIG_KERNEL_INIT); }\n"
    )
    obj = tmp_path / "caller.o"
    cmd = ["gcc", "-O2", "-Wall", "-Werror", "-c", *defines, "-I", str(header_dir)]
    subprocess.run(
        [*cmd, "-o", str(obj), str(src)],
        check=True,
        capture_output=True,
    )
    return subprocess.run(["nm", str(obj)], check=True, capture_output=True, text=True).stdout


def test_header_stub_compiles_to_nothing_when_off(patched, tmp_path):
    if not shutil.which("gcc") or not shutil.which("nm"):
        require("qemu", "needs gcc and nm (Debian packages gcc, binutils)")
    header = patched / "include" / "linux" / "bootrig.h"
    text = header.read_text()
    assert "#ifdef CONFIG_BOOTRIG_MARKERS" in text
    off = _compile_caller(patched / "include", tmp_path)
    assert "bootrig_marker" not in off, f"hook code compiled with the option off:\n{off}"
    on = _compile_caller(patched / "include", tmp_path, "-DCONFIG_BOOTRIG_MARKERS")
    assert re.search(r"\bU bootrig_marker\b", on), on


def _functions(src: str) -> dict[str, tuple[str, str]]:
    """name -> (declaration line, body) for the top-level functions of a C file."""
    out = {}
    for m in re.finditer(
        r"^((?:static )?[^\n;#]*?\b(\w+)\([^;{]*?\))\n\{\n(.*?)^\}", src, re.M | re.S
    ):
        out[m.group(2)] = (m.group(1), m.group(3))
    return out


def test_code_after_free_initmem_uses_no_init_memory(patched):
    """kernel_init fires after free_initmem(): bootrig_marker() and everything it uses
    must live outside __init/__initdata."""
    src = (patched / "init" / "bootrig.c").read_text()
    initdata = set(re.findall(r"\b(\w+)(?:\[[^\]]*\])?\s+__initdata\b", src))
    funcs = _functions(src)
    assert "bootrig_marker" in funcs and "bootrig_raise" in funcs, sorted(funcs)
    todo, seen = ["bootrig_marker"], set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        decl, body = funcs[name]
        assert "__init" not in decl, f"{name} runs after free_initmem but is __init"
        for var in initdata:
            assert not re.search(rf"\b{var}\b", body), f"{name} reads __initdata {var}"
        todo += [f for f in funcs if f != name and re.search(rf"\b{f}\(", body)]
    assert {"bootrig_marker", "bootrig_raise"} <= seen
