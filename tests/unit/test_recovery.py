# SPDX-License-Identifier: BSD-3-Clause
"""Clock recovery error computed at ingest (recovery.py) from the raw facts
the engine records (raw schema 2): a model that matches the injected clocks
exactly has no error; one off by 1 µs is off by 1 µs."""

import pytest

from mpiscope.store.recovery import recovery_error, true_global

INJECT = {"offset_s": 0.05, "drift": 1e-4, "epoch_s": 100.0}
INJECT0 = {"offset_s": -0.02, "drift": -5e-5, "epoch_s": 100.0}


def _exact_model(ref):
    """The linear model global = local - (offset + drift (local - ref)) through true_global."""
    a = true_global(ref + 1.0, INJECT, INJECT0) - true_global(ref, INJECT, INJECT0)
    return {"offset_s": ref - true_global(ref, INJECT, INJECT0), "drift": 1.0 - a, "ref_s": ref}


def test_exact_model_has_no_error_and_an_offset_model_its_offset():
    meta = {"phase": "after", "t_first_local_s": 101.0, "t_last_local_s": 103.5}
    model = _exact_model(100.0)
    err = recovery_error(meta, model, INJECT, INJECT0)
    assert err["start"] == pytest.approx(0, abs=1e-12) and err["end"] == pytest.approx(0, abs=1e-12)
    off = dict(model, offset_s=model["offset_s"] + 1e-6)
    err = recovery_error(meta, off, INJECT, INJECT0)
    assert err["start"] == pytest.approx(1e-6, rel=1e-6) and err["end"] == pytest.approx(1e-6, rel=1e-6)


def test_rank_0_against_itself_has_no_error():
    meta = {"t_first_local_s": 101.0, "t_last_local_s": 102.0}
    zero = {"offset_s": 0.0, "drift": 0.0, "ref_s": 0.0}
    err = recovery_error(meta, zero, INJECT0, INJECT0)
    assert err["start"] == pytest.approx(0, abs=1e-12) and err["end"] == pytest.approx(0, abs=1e-12)


def test_nothing_without_injection_or_the_times():
    meta = {"t_first_local_s": 1.0, "t_last_local_s": 2.0}
    model = {"offset_s": 0.0, "drift": 0.0, "ref_s": 0.0}
    assert recovery_error(meta, model, None, None) is None
    assert recovery_error({"phase": "before"}, model, INJECT, INJECT0) is None  # schema 1, or a crash
    assert recovery_error({"t_first_local_s": None, "t_last_local_s": None}, model, INJECT, INJECT0) == \
        {"start": None, "end": None}  # no series ran
