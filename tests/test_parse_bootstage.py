from __future__ import annotations

from rig.analysis.lines import Line, split_lines
from rig.analysis.parsers.bootstage import parse_bootstage
from rig.model import Chunk
from tests.test_parse_replay import load


def _lines(text: str) -> list[Line]:
    return split_lines([Chunk(0, text.replace("\n", "\r\n").encode())])


def test_stm32mp1_report() -> None:
    (r,) = parse_bootstage(load("stm32mp1-2023.04-bootstage").lines)
    assert r.records == 12
    # Microseconds as printed, in seconds.
    assert [(x.stage, x.mark_s, x.elapsed_s) for x in r.rows[:3]] == [
        ("reset", 0, 0),
        ("board_init_f", 0.583401, 0.583401),
        ("board_init_r", 0.727725, 0.144324),
    ]
    assert r.rows[-1].stage == "start_kernel" and r.rows[-1].mark_s == 3.866544
    assert len(r.rows) == 12  # the header's count, "reset" included
    assert [(a.stage, a.total_s) for a in r.accumulated] == [("dm_f", 0.036047), ("dm_r", 0.041718)]


def test_old_header_unnamed_rows_and_big_numbers() -> None:
    text = """Timer summary in microseconds:
       Mark    Elapsed  Stage
          0          0  reset
    155,241    155,241
  3,575,695         17  arch_cpu_init A9
 29,916,167 26,005,792  bootm_start
 30,361,327    445,160  start_kernel

Starting kernel ...
"""
    (r,) = parse_bootstage(_lines(text))
    assert r.records is None
    assert [x.stage for x in r.rows] == [
        "reset",
        "",
        "arch_cpu_init A9",
        "bootm_start",
        "start_kernel",
    ]
    assert r.rows[3].elapsed_s == 26.005792
    assert r.accumulated == []


def test_table_cut_short_and_two_reports() -> None:
    text = """Timer summary in microseconds (3 records):
       Mark    Elapsed  Stage
          0          0  reset
    224,5
=> bootstage report
Timer summary in microseconds (2 records):
       Mark    Elapsed  Stage
          0          0  reset
    224,599    224,599  board_init_f
"""
    first, second = parse_bootstage(_lines(text))
    assert [x.stage for x in first.rows] == ["reset"]
    assert [x.stage for x in second.rows] == ["reset", "board_init_f"]
