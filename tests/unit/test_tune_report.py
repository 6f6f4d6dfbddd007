# SPDX-License-Identifier: BSD-3-Clause
"""The report's tuning section (report/tune_data.py, templates/tune.html.j2)
from a small tune result: the winner map's cells, change-overs, speedups with
intervals and our own algorithm's win are in the HTML. Content, not pixels."""

import json
import re

from mpiscope.cli.report import write_tune_report
from mpiscope.report.tune_data import tune_dir_of, tune_view

SIZES = [8, 1024, 65536]


def _decision(p, size, winner, default_like, measured=True):
    rows = [{"algorithm": "default", "n": 50, "median_s": 1e-5},
            {"algorithm": default_like, "n": 50, "median_s": 1e-5, "ratio": 1.01,
             "ratio_low": 0.99, "ratio_high": 1.03, "p_value": 0.5, "verdict": "same"}]
    if winner != "default":
        rows.append({"algorithm": winner, "n": 50, "median_s": 5e-6, "ratio": 0.5,
                     "ratio_low": 0.45, "ratio_high": 0.55, "p_value": 1e-9, "verdict": "faster"})
    return {"collective": "allreduce", "p": p, "size": size, "winner": winner,
            "measured": measured, "rows": rows}


def _result():
    # p=2: the default (≈ recursive_doubling) holds up to 1 KiB, ring wins at 64 KiB;
    # p=4: ring from 1 KiB on, the 8 B cell inherited.
    decisions = [_decision(2, 8, "default", "recursive_doubling"),
                 _decision(2, 1024, "default", "recursive_doubling"),
                 _decision(2, 65536, "ring", "recursive_doubling"),
                 _decision(4, 8, "default", "recursive_doubling", measured=False),
                 _decision(4, 1024, "ring", "recursive_doubling"),
                 _decision(4, 65536, "ring", "rabenseifner")]
    cells = [{"collective": "allreduce", "p": d["p"], "size": d["size"], "rule": d["winner"],
              "library_size": d["size"], "speedup": 1.0 if d["winner"] == "default" else 1.9,
              "speedup_low": 0.97 if d["winner"] == "default" else 1.7,
              "speedup_high": 1.04 if d["winner"] == "default" else 2.1,
              "verdict": "same" if d["winner"] == "default" else "tuned faster"}
             for d in decisions]
    return {"library": "openmpi", "version": "4.1.4", "p": 2, "ppn": None, "cluster": None,
            "cells": {"measured": 14, "exhaustive": 30}, "decisions": decisions,
            "verification": {"cells": cells, "geomean_speedup": 1.378, "slower_beyond_noise": [],
                             "file_in_effect": True, "checked_by": "gdb"},
            "withdrawn": [],
            "changeovers": {"allreduce": {"by_p": {
                "2": {"measured": [], "model": [{"size": 4096, "from": "recursive_doubling",
                                                 "to": "ring"}]},
                "4": {"measured": [], "model": None}}}},
            "weighted": {"before_s": 3e-3, "after_s": 2e-3, "speedup": 1.5, "not_measured": []},
            "own_algorithms": [
                {"collective": "allreduce", "size": 65536, "best_library": "ring",
                 "best_own": "rabenseifner", "speedup": 1.31, "speedup_low": 1.2,
                 "speedup_high": 1.4, "own_beats_library": True},
                {"collective": "allreduce", "size": 8, "best_library": "default",
                 "best_own": "ring", "speedup": 0.5, "speedup_low": 0.4, "speedup_high": 0.6,
                 "own_beats_library": False}],
            "files": {"openmpi": "/x/ompi-rules.conf"}}


def test_view_has_the_winner_map_and_change_overs():
    v = tune_view(_result(), "/x")
    (c,) = v["collectives"]
    assert v["ps"] == [2, 4] and c["sizes"] == ["8", "1K", "64K"]
    assert [[x["winner"] for x in row["cells"]] for row in c["rows"]] == \
        [["default", "default", "ring"], ["default", "ring", "ring"]]
    assert c["rows"][1]["cells"][0]["measured"] is False
    by_p = {ch["p"]: ch for ch in c["changeovers"]}
    # tuned: the default (≈ recursive_doubling) gives way to ring at 64K on 2 ranks, 1K on 4
    assert [(x["from"], x["to"], x["size"]) for x in by_p[2]["tuned"]] == \
        [("recursive_doubling", "ring", 65536)]
    assert [(x["from"], x["to"], x["size"]) for x in by_p[4]["tuned"]] == \
        [("recursive_doubling", "ring", 1024)]
    assert [(x["from"], x["to"]) for x in by_p[4]["library"]] == \
        [("recursive_doubling", "rabenseifner")]
    assert by_p[2]["library"] == [] and by_p[4]["model"] is None
    assert [x["size"] for x in by_p[2]["model"]] == [4096]
    assert c["map"]["grid"] == [[0, 0, 1], [0, 1, 1]] and c["map"]["names"] == ["default", "ring"]
    assert [x["best_own"] for x in v["own_wins"]] == ["rabenseifner"]


def test_tune_directory_renders_the_section(tmp_path):
    (tmp_path / "tune.json").write_text(json.dumps(_result()))
    (tmp_path / "runs" / "r1").mkdir(parents=True)
    assert tune_dir_of(tmp_path / "runs" / "r1") == tmp_path.resolve()
    html = write_tune_report([tmp_path], tmp_path / "report.html").read_text()
    assert '<section id="tune-1">' in html and "<svg" in html
    table = re.search(r'<table class="winners">(.*?)</table>', html, re.S).group(1)
    rows = re.findall(r"<tr><td>(\d+)</td>(.*?)</tr>", table, re.S)
    assert [p for p, _ in rows] == ["2", "4"]
    cells4 = re.findall(r"<td class=\"text\">(.*?)</td>", rows[1][1], re.S)
    assert "<b>default</b> (inherited)" in cells4[0]
    assert "<b>ring</b>" in cells4[1] and "1.90× [1.70, 2.10]" in cells4[1]
    assert "recursive_doubling → ring at 64K" in html and "recursive_doubling → ring at 4K" in html
    assert "recursive_doubling → rabenseifner at 64K" in html   # the default's own change-over
    assert "1.378" in html and "3,000.0 µs" in html and "2,000.0 µs" in html
    own = re.search(r'<table class="own">(.*?)</table>', html, re.S).group(1)
    assert "rabenseifner" in own and "1.310×" in own and "1.200 – 1.400" in own
    assert own.count("<tr>") == 2   # the header and the one win; the loss is not listed


def test_what_the_default_runs_read_from_the_library_wins_over_the_times():
    """With default_runs (read under gdb) the library's change-overs are what it
    runs, at every size, not what its times look like; the text says it too."""
    from mpiscope.views.tune import format_tune

    r = _result()
    r["default_runs"] = [{"collective": "allreduce", "p": 4, "size": s, "algorithm": a,
                          "as_forced": True}
                         for s, a in ((8, "recursive_doubling"), (1024, "ring"), (65536, "ring"))]
    (c,) = tune_view(r, "/x")["collectives"]
    by_p = {ch["p"]: ch for ch in c["changeovers"]}
    assert [(x["from"], x["to"], x["size"]) for x in by_p[4]["library"]] == \
        [("recursive_doubling", "ring", 1024)]
    assert [x["default_read"] for x in c["rows"][1]["cells"]] == [True, True, True]
    assert not any(x["default_read"] for x in c["rows"][0]["cells"])   # p=2: from the times
    r["cells"]["same_as_default"] = 3
    r["changeovers"]["allreduce"]["by_p"]["4"]["library"] = [
        {"size": 1024, "from": "recursive_doubling", "to": "ring"}]
    r["verification"]["failures"] = []
    text = format_tune({**r, "rules": {}, "bound": {"max_rules": 8, "cost": {}},
                        "excluded_components": [], "env": "/x/env.sh", "failures": []})
    assert "3 given the default's launches" in text
    assert "the library's default (read under gdb): recursive_doubling from 8; " \
           "recursive_doubling → ring at 1K" in text


def test_the_same_code_read_under_gdb_is_said_once_per_algorithm(tmp_path):
    """runs_as (the library's read_defaults) in the text and the HTML: one line per
    forced algorithm and what it runs, its sizes as spans of the grid."""
    from mpiscope.views.tune import format_tune

    r = _result()
    r["runs_as"] = [{"collective": "allreduce", "p": 4, "size": s, "algorithm": "segmented_ring",
                     "runs": "ring"} for s in (8, 1024, 65536)] + [
        {"collective": "allreduce", "p": 2, "size": s, "algorithm": "ring", "runs": "default"}
        for s in (8, 65536)]
    r["cells"]["same_code"] = 2
    r["verification"]["failures"] = []
    lines = ["allreduce p=4: forcing segmented_ring runs ring's code at 8–64K",
             "allreduce p=2: forcing ring runs default's code at 8, 64K"]
    assert tune_view(r, "/x")["same_code"] == lines
    text = format_tune({**r, "rules": {}, "bound": {"max_rules": 8, "cost": {}},
                        "excluded_components": [], "env": "/x/env.sh", "failures": []})
    assert "2 given another algorithm's launches" in text and all(x in text for x in lines)
    (tmp_path / "tune.json").write_text(json.dumps(r))
    html = write_tune_report([tmp_path], tmp_path / "report.html").read_text()
    assert all(x.replace("'", "&#39;") in html for x in lines)
