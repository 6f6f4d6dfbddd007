# SPDX-License-Identifier: BSD-3-Clause
"""An app run as text (`mpiscope app compare`, `mpiscope show RUN`) and as
the "app" JSON document: per configuration its launches, the median, the
speedup against the default with its interval and the verdict; the
prediction beside the measurement when there is one; every launch that does
not count, named."""

from __future__ import annotations

from mpiscope.app.schedule import describe_stop
from mpiscope.common.documents import SCHEMA_VERSIONS
from mpiscope.views.sim import eager_words
from mpiscope.views.text import interval, sig, table

VERDICTS = (
    "faster / slower need p < {alpha:g} (Mann-Whitney over launches) and the whole interval outside 1 ± {noise:g}"
)


def app_doc(run) -> dict:
    """The document of an app run (app/app_run.py AppRun)."""
    c, a = run.context, run.answer
    return {
        "run_id": c["run_id"],
        "run_dir": str(run.path),
        "kind": c["kind"],
        "status": c.get("status"),
        "error": c.get("error"),
        "label": c.get("label"),
        "created": c.get("created"),
        "command": c.get("launch_command") or c.get("application") or [],
        "mpi": c.get("mpi"),
        "np": c.get("np"),
        "value": c["value"],
        "configs": c["configs"],
        "baseline": c["baseline"],
        "options": c["options"],
        "stop": a.get("stop"),
        "duration_s": c.get("duration_s"),
        "rounds": a["rounds"],
        "launches": a["launches"],
        "results": a["results"],
        "failed_launches": a["failed_launches"],
        "prediction": a.get("prediction"),
        "whatif": _whatif_document(a.get("whatif")),
    }


def _whatif_document(w):
    """The stored what-if as `mpiscope sim whatif --json` gives it (headed by
    its schema version); {"failed": why} and None as they are."""
    if not w or "failed" in w:
        return w
    return {"schema_version": SCHEMA_VERSIONS["sim-whatif"], **w}


def _value_words(doc) -> str:
    metric = doc["value"].get("metric")
    return f"the metric --metric '{metric}' of every launch" if metric else "the wall time of every launch (s)"


def format_app(doc: dict) -> str:
    o = doc["options"]
    head = [
        f"app run {doc['run_id']} ({doc['status']}): {' '.join(map(str, doc['command']))}",
        f"value: {_value_words(doc)}, lower is better; {doc['rounds']} rounds of "
        f"{len(doc['configs'])} configurations (after {o['warmup']} warm-up), "
        f"stopped: {describe_stop(doc.get('stop'), o)}",
    ]
    if doc.get("error"):
        head.append(f"error: {doc['error']}")
    rows = []
    for r in doc["results"]:
        sp = r["speedup"]
        rows.append(
            [
                r["config"],
                str(r["launches"]),
                str(r["failed"] + r["metric_missing"]),
                sig(r["median"]),
                sig(sp["point"]) if sp else "-",
                interval(sp["low"], sp["high"]) if sp else "-",
                sig(r["p_value"], 2) if r["p_value"] is not None else "-",
                r["verdict"],
            ]
        )
    lines = head + [
        "",
        table(
            ["config", "launches", "not counted", "median", "speedup", "95% CI", "p", "verdict"],
            rows,
            [False, True, True, True, True, False, True, False],
        ),
        "speedup: the default's median / the configuration's (above 1: faster); "
        + VERDICTS.format(alpha=o["alpha"], noise=o["noise"]),
    ]
    lines += _prediction_lines(doc.get("prediction"))
    lines += _whatif_lines(doc.get("whatif"))
    if doc["failed_launches"]:
        lines.append("launches that do not count:")
        lines += [f"  {line} (launch-{x['index']}.stderr)" for x, line in zip(doc["failed_launches"], not_counted(doc))]
    return "\n".join(lines) + "\n"


def not_counted(doc: dict) -> list:
    """One line naming each launch that does not count, and why."""
    return [
        f"launch {x['index']} ({x['config']}, round {x['round']}{', warm-up' if x['warmup'] else ''}): "
        f"{x['status']}: {x['reason']}"
        for x in doc["failed_launches"]
    ]


def _prediction_lines(p) -> list:
    if not p:
        return []
    if p.get("error"):
        return [f"prediction for {p['config']}: none ({p['error']})"]
    share = p.get("collective_share")
    out = [
        f"predicted speedup of {p['config']} (profile {p['profile']}, tune {p['tune']}): {sig(p['speedup'])} "
        f"{interval(p['low'], p['high'])}"
        + (f", {100 * share:.1f}% of the time in tuned collectives" if share is not None else "")
    ]
    m = p.get("measured")
    if m is None:
        out.append("measured: no speedup to compare with")
    else:
        out.append(
            f"measured: {sig(m['point'])} {interval(m['low'], m['high'])}: "
            + ("they agree" if p.get("agree") else "they do not agree")
        )
    e = p.get("explanation")
    if e:
        gap = e.get("gap_share")
        out.append(
            f"  {e['direction']}" + (f" by {100 * abs(gap):.1f}% of the application's time" if gap is not None else "")
        )
        for cell in e.get("carrying") or []:
            out.append(f"  carries {100 * (cell.get('share_of_gain') or 0):.0f}% of the predicted gain: {_cell(cell)}")
        for cell in e.get("unchanged") or []:
            out.append(f"  left unchanged: {_cell(cell)}")
    return out


def _whatif_lines(w) -> list:
    if not w:
        return []
    if w.get("failed"):
        return [f"what-if at scale: none ({w['failed']})"]
    simulated = w["validation"]["default"]["median_s"]
    out = [
        f"what-if at scale (traced profile {w['run_id']}, {w['traced_p']} ranks): at {w['traced_p']} ranks "
        f"simulated {sig(simulated)} s against the traced {sig(w['traced_comm_s'])} s a rank in communication "
        f"({100 * w['error']:+.0f}%)",
        f"  eager limit: {eager_words(w.get('eager_limit'), w.get('eager_from') or 'every message eager')}",
        "  per rank in communication, default -> tuned:",
    ]
    for x in w["points"]:
        out.append(
            f"  {x['p']} ranks: {sig(x['default']['median_s'])} s -> {sig(x['tuned']['median_s'])} s, "
            f"speedup {sig(x['speedup']['median'])} {interval(x['speedup']['low'], x['speedup']['high'])}"
        )
    return out


def _cell(cell) -> str:
    return (
        f"{cell['collective']} on {cell['comm_size']} ranks, {cell['lo']}-{cell['hi']} B, "
        f"{100 * (cell.get('share') or 0):.1f}% of the time"
    )
