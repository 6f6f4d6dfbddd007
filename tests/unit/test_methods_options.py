# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope run --methods` checked before anything runs (measure/method_options.py):
names, `all`, the benchmarks each tool measures, the reference series added."""

import pytest

from mpiscope.common.errors import UsageError
from mpiscope.engine.describe import Method
from mpiscope.measure.method_options import parse_methods, plan_fields, references
from mpiscope.measure.request import MeasureRequest


def traits(timing="call", start="barrier_after", root="none", cache="warm"):
    return {"timing": timing, "start": start, "root": root, "cache": cache, "ranks": "all"}


KNOWN = {
    "osu": Method("osu", "OSU", False, {"pingpong": traits(start="back_to_back"), "allreduce": traits()}),
    "mpptest": Method("mpptest", "Mpptest", False, {"bcast": traits("loop", "back_to_back", "rotating")}),
    "skampi": Method("skampi", "SKaMPI", False, {"allreduce": traits(start="slot", cache="cycling")}),
    "ref_barrier": Method("ref_barrier", "ref", True, {"pingpong": traits(), "allreduce": traits(),
                                                       "bcast": traits()}),
    "ref_b2b": Method("ref_b2b", "ref", True, {"pingpong": traits(), "allreduce": traits(), "bcast": traits()}),
    "ref_rotate": Method("ref_rotate", "ref", True, {"bcast": traits()}),
    "ref_cycle": Method("ref_cycle", "ref", True, {"allreduce": traits()}),
}


def args(text):
    return MeasureRequest(methods=text)


def test_names_in_the_engines_order_and_all():
    assert parse_methods("skampi,osu", KNOWN) == ["osu", "skampi"]
    assert parse_methods("all", KNOWN) == ["osu", "mpptest", "skampi"]
    with pytest.raises(UsageError, match="unknown method 'ref_b2b'"):
        parse_methods("ref_b2b", KNOWN)  # references are added, never asked for
    with pytest.raises(UsageError, match="comma list"):
        parse_methods(" , ", KNOWN)


def test_references_follow_what_the_tools_do_differently():
    assert references(["osu"], ["allreduce"], KNOWN) == ["ref_barrier"]
    assert references(["osu"], ["pingpong"], KNOWN) == ["ref_barrier", "ref_b2b"]
    assert references(["mpptest"], ["bcast"], KNOWN) == ["ref_barrier", "ref_b2b", "ref_rotate"]
    assert references(["skampi"], ["allreduce"], KNOWN) == ["ref_barrier", "ref_cycle"]


def test_plan_fields_note_what_a_tool_does_not_measure_and_count_the_series():
    f = plan_fields(args("osu,mpptest"), ["pingpong", "bcast"], KNOWN)
    assert f["methods"] == ["osu", "mpptest"]
    assert f["method_engine"] == ["osu", "mpptest", "ref_barrier", "ref_b2b", "ref_rotate"]
    assert any("OSU measures no bcast" in n for n in f["method_notes"])
    # per size: pingpong by osu and two references; bcast by mpptest and three references
    assert f["method_series"] == {"pingpong": 3, "bcast": 4}
    assert plan_fields(args(None), ["pingpong"], KNOWN) == {"methods": None, "method_series": None}


def test_a_list_that_reproduces_nothing_is_refused():
    with pytest.raises(UsageError, match="none of the benchmarks asked for"):
        plan_fields(args("skampi"), ["pingpong"], KNOWN)
