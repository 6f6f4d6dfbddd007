# SPDX-License-Identifier: BSD-3-Clause
"""A traced repetition (`mpiscope run --trace`) as a GOAL schedule: each rank's
sends and receives in posting order, the measured gaps as computation.

An operation posted after some operation completed followed a wait: it requires
the latest such completion, then a calc of the time from it to its post. One
posted before anything completed belongs to the previous post's batch and
requires what that one required. A rank's first operation requires a calc of
the time from the repetition's first post anywhere to its own (its start skew)."""

from __future__ import annotations

from pathlib import Path

from mpiscope.common.atomic import atomic_path
from mpiscope.common.errors import UsageError


def trace_nodes(times, origin: float) -> list:
    """One rank's operations [(t_post, t_done)], in posting order, as the
    schedule's nodes [(kind, value, requires)]: kind "calc" (value: seconds)
    or "op" (value: the operation's index in `times`); requires: indices of
    earlier nodes."""
    nodes, done, reqs, prev_post = [], [], [], None  # done: (t_done, node) of the operations so far
    for i, (post, end) in enumerate(times):
        after = [(t, n) for t, n in done if t <= post and (prev_post is None or t >= prev_post)]
        if prev_post is None or after:
            anchor_t, anchor = max(after) if after else (origin, None)
            nodes.append(("calc", max(0.0, post - anchor_t), [] if anchor is None else [anchor]))
            reqs = [len(nodes) - 1]
        nodes.append(("op", i, list(reqs)))
        done = [(t, n) for t, n in done if t >= post]  # earlier ones can anchor no later post
        done.append((end, len(nodes) - 1))
        prev_post = post
    return nodes


def goal_from_events(events, nranks: int) -> str:
    cols = {k: events[k].to_pylist() for k in ("rank", "seq", "op", "peer", "tag", "bytes", "t_post", "t_done")}
    per_rank = {}
    for i in range(len(cols["rank"])):
        per_rank.setdefault(cols["rank"][i], []).append(i)
    posts = [t for t in cols["t_post"] if t is not None]
    if not posts:
        raise UsageError("the traced repetition has no events")
    origin = min(posts)
    out = [f"num_ranks {nranks}"]
    for r in range(nranks):
        out.append(f"\nrank {r} {{")
        idx = sorted(per_rank.get(r, []), key=lambda i: cols["seq"][i])
        if any(cols["t_post"][i] is None or cols["t_done"][i] is None for i in idx):
            raise UsageError(f"rank {r}: an event of the trace has no time (its clock model is missing)")
        for label, (kind, v, reqs) in enumerate(
            trace_nodes([(cols["t_post"][i], cols["t_done"][i]) for i in idx], origin)
        ):
            if kind == "calc":
                out.append(f"l{label}: calc {v * 1e9:.0f}")
            else:
                i = idx[v]
                word = "to" if cols["op"][i] == "send" else "from"
                out.append(
                    f"l{label}: {'send' if word == 'to' else 'recv'} {int(cols['bytes'][i])}b {word} "
                    f"{cols['peer'][i]} tag {cols['tag'][i]}"
                )
            out += [f"l{label} requires l{q}" for q in reqs]
        out.append("}")
    return "\n".join(out) + "\n"


def write_goal(text: str, path) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)
    return path
