# SPDX-License-Identifier: BSD-3-Clause
"""An application's weights for the tuner (--weights FILE): how often it calls
each collective at each message size and communicator size. Read from what
`mpiscope profile weights` writes (format mpiscope-profile-weights) or from
the short hand-written form {"collectives": {"allreduce": {"sizes":
{"1024": calls}}}} (no communicator size: it holds for every size tuned).

Used three ways: the application's expected time in collectives before and
after (Σ calls × the median at the nearest measured size); which sizes the
adaptive search must measure with every algorithm; and the cost of the
--max-rules bound, as seconds the application loses (rules.bounded)."""

from __future__ import annotations

import math
from pathlib import Path

from mpiscope.common.errors import UsageError
from mpiscope.profile.weights import WEIGHTS_VERSION

PROFILE_FORMAT = "mpiscope-profile-weights"


def _bin_size(lo: int, hi: int) -> int:
    """A profile's size bin [lo, hi] stands for its geometric middle."""
    return int(round(math.sqrt(max(lo, 1) * max(hi, 1)))) if hi > 0 else 0


def read_weights(path, tunable=None) -> tuple[dict, list]:
    """({collective: {comm size or None: {engine size: calls}}}, collectives
    of the file left out because mpiscope does not tune them)."""
    from mpiscope.common.inputs import MODEL_LIMIT, read_json

    path = Path(path)
    doc = read_json(path, MODEL_LIMIT, "--weights", "give what `mpiscope profile weights` writes")
    try:
        out, left_out = {}, []
        if isinstance(doc, dict) and doc.get("format") == PROFILE_FORMAT:
            if doc.get("version") != WEIGHTS_VERSION:
                raise UsageError(
                    f"--weights: {path} has weights version {doc.get('version')!r}, which this "
                    f"mpiscope does not read (it reads {WEIGHTS_VERSION}); write it again with "
                    "`mpiscope profile weights`"
                )
            for e in doc["collectives"]:
                coll = e["collective"]
                if tunable is not None and coll not in tunable:
                    left_out.append(coll)
                    continue
                q = int(e["comm_size"]) if int(e["comm_size"]) > 0 else None  # -1: not kept apart
                by_size = out.setdefault(coll, {}).setdefault(q, {})
                for b in e["sizes"]:
                    s = _bin_size(int(b["lo"]), int(b["hi"]))
                    by_size[s] = by_size.get(s, 0.0) + float(b["calls"])
        else:
            for coll, entry in doc["collectives"].items():
                out[coll] = {None: {int(k): float(v) for k, v in entry["sizes"].items()}}
        for by_q in out.values():
            for by_size in by_q.values():
                if not all(math.isfinite(v) and v >= 0 for v in by_size.values()):
                    raise ValueError("a number of calls that is negative, NaN or infinite")
        return out, sorted(set(left_out))
    except (ValueError, KeyError, TypeError, AttributeError, OverflowError) as e:
        raise UsageError(
            f"--weights: {path} is not a weights file ({e}); give what `mpiscope "
            f"profile weights` writes, or "
            '{"collectives": {"allreduce": {"sizes": {"1024": 300}}}}'
        ) from None


def nearest(values, x):
    """The value of `values` nearest to x on a log scale."""
    return min(values, key=lambda v: abs(math.log2(max(v, 1)) - math.log2(max(x, 1))))


def for_comm_size(weights, p: int, tuned: list) -> dict:
    """{collective: {engine size: calls}} the tune of communicator size p
    answers for: entries of communicator size q go to the tuned size nearest
    to q; entries without a size to every tuned size."""
    out = {}
    for coll, by_q in (weights or {}).items():
        for q, by_size in by_q.items():
            if q is None or nearest(tuned, q) == p:
                acc = out.setdefault(coll, {})
                for s, calls in by_size.items():
                    acc[s] = acc.get(s, 0.0) + calls
    return out


def on_grid(by_size: dict, grid: list) -> dict:
    """The calls moved to the nearest size of the grid: {grid size: calls}."""
    out = {}
    for s, calls in by_size.items():
        g = nearest(grid, s)
        out[g] = out.get(g, 0.0) + calls
    return out


def weighted(weights, verification, tuned: list) -> dict | None:
    """The application's expected time in collectives before and after:
    Σ calls × median at the nearest verified size of the same communicator size."""
    if not weights:
        return None
    before = after = 0.0
    by_p, missing = {}, []
    for p in tuned:
        b = a = 0.0
        for coll, by_size in for_comm_size(weights, p, tuned).items():
            rows = [r for r in verification if r["collective"] == coll and r.get("p", p) == p and r.get("speedup")]
            if not rows:
                missing.append(coll)
                continue
            for size, calls in by_size.items():
                r = rows[[x["size"] for x in rows].index(nearest([x["size"] for x in rows], size))]
                b += calls * r["median_default_s"]
                a += calls * r["median_tuned_s"]
        by_p[str(p)] = {"before_s": b, "after_s": a}
        before, after = before + b, after + a
    return {
        "before_s": before,
        "after_s": after,
        "speedup": before / after if after > 0 else None,
        "by_p": by_p,
        "not_measured": sorted(set(missing)),
    }
