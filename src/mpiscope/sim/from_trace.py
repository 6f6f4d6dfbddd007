"""A traced repetition (`mpiscope run --trace`) as a GOAL schedule: each
rank's sends and receives in the order it posted them, the measured gaps
between operations as computation.

An operation posted after some operation completed (a completion lies
between the previous post and this one) followed a wait: it requires the
latest such completion and then a calc of the time from that completion to
its post. An operation posted before anything else completed belongs to
the batch of the previous post and requires what that one required. A
rank's first operation requires a calc of the time from the repetition's
first post anywhere to its own (its start skew)."""

from __future__ import annotations

from pathlib import Path

from mpiscope.common.atomic import atomic_path
from mpiscope.common.errors import UsageError


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
        label, done = 0, []   # done: (t_done, label) of the rank's operations so far
        reqs, prev_post = [], None
        for i in idx:
            post, end = cols["t_post"][i], cols["t_done"][i]
            if post is None or end is None:
                raise UsageError(f"rank {r}: an event of the trace has no time (its clock model is missing)")
            after = [(t, lab) for t, lab in done if t <= post and (prev_post is None or t >= prev_post)]
            if prev_post is None or after:
                anchor_t, anchor = max(after) if after else (origin, None)
                out.append(f"l{label}: calc {max(0.0, post - anchor_t) * 1e9:.0f}")
                if anchor is not None:
                    out.append(f"l{label} requires l{anchor}")
                reqs, label = [label], label + 1
            kind = "send" if cols["op"][i] == "send" else "recv"
            word = "to" if kind == "send" else "from"
            out.append(f"l{label}: {kind} {int(cols['bytes'][i])}b {word} {cols['peer'][i]} tag {cols['tag'][i]}")
            out += [f"l{label} requires l{q}" for q in reqs]
            done.append((end, label))
            label, prev_post = label + 1, post
        out.append("}")
    return "\n".join(out) + "\n"


def write_goal(text: str, path) -> Path:
    path = Path(path)
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)
    return path
