"""Crossovers of the lab's designs, per placement class and cache state:
from which size on one design beats another (and keeps beating it at every
larger size measured), the best design at every size, and how far the
hybrid and MPI's own path are from that best.

  single copy over two copies   cma against the better of basic, advanced
  pool over ring                advanced against basic
measured warm (tp_bw), cold (tp_bw_cold), as latency (tp_latency) and with
a late receiver (tp_skew: the sender's time, which a copy lets it cut
short and a pull does not)."""

from __future__ import annotations

from dataclasses import dataclass

from mpiscope.transport.curves import COPIES, DESIGNS, SINGLE, Lab

STATES = (("tp_bw", "warm"), ("tp_bw_cold", "cold"), ("tp_latency", "latency"), ("tp_skew", "late receiver"))


@dataclass
class Crossover:
    placement: str
    state: str                 # warm, cold, latency, late receiver
    bench: str
    challenger: str            # "cma" or "advanced"
    incumbent: str             # "copy" (best of basic, advanced) or "basic"
    size: int | None           # the challenger wins from here on; None: never
    last_loss: int | None      # the largest size it still loses at
    always: bool = False       # wins at every size measured

    def to_dict(self):
        return dict(vars(self))


def _best_copy_cost(lab, bench, cls, size):
    costs = [c.cost(size) for a in COPIES if (c := lab.get(bench, cls, a)) and c.cost(size)]
    return min(costs) if costs else None


def crossover(sizes, wins) -> tuple:
    """(first size of the final run of wins, last size lost before it); wins:
    size -> bool for the sizes both were measured at."""
    measured = [s for s in sizes if s in wins]
    if not measured or not wins[measured[-1]]:
        return None, (measured[-1] if measured else None)
    k = len(measured)
    while k > 0 and wins[measured[k - 1]]:
        k -= 1
    return measured[k], (measured[k - 1] if k > 0 else None)


def crossovers(lab: Lab) -> list:
    out = []
    for cls in lab.placements():
        for bench, state in STATES:
            sizes = lab.sizes(bench, cls)
            cma = lab.get(bench, cls, "cma")
            if cma and cma.medians:
                wins = {s: cma.cost(s) < b for s in sizes
                        if cma.cost(s) and (b := _best_copy_cost(lab, bench, cls, s))}
                first, last = crossover(sizes, wins)
                out.append(Crossover(cls, state, bench, "cma", "copy", first, last,
                                     always=first is not None and last is None))
            basic, adv = lab.get(bench, cls, "basic"), lab.get(bench, cls, "advanced")
            if basic and adv and state in ("warm", "cold"):
                wins = {s: adv.cost(s) < basic.cost(s) for s in sizes if adv.cost(s) and basic.cost(s)}
                first, last = crossover(sizes, wins)
                out.append(Crossover(cls, state, bench, "advanced", "basic", first, last,
                                     always=first is not None and last is None))
    return out


@dataclass
class BestRow:
    placement: str
    bench: str
    size: int
    best: str                  # the best single design here
    best_value: float          # its median (s or B/s)
    hybrid_ratio: float | None  # hybrid's cost / the best's (1.03: 3% slower)
    mpi_ratio: float | None     # MPI's own path's cost / the best's
    values: dict               # design -> median


def best_rows(lab: Lab, bench: str) -> list:
    rows = []
    for cls in lab.placements():
        for size in lab.sizes(bench, cls):
            costs = {a: c.cost(size) for a in SINGLE if (c := lab.get(bench, cls, a)) and c.cost(size)}
            if not costs:
                continue
            best = min(costs, key=costs.get)

            def ratio(algo):
                c = lab.get(bench, cls, algo)
                return c.cost(size) / costs[best] if c and c.cost(size) else None

            values = {a: c.medians[size] for a in (*DESIGNS, "mpi")
                      if (c := lab.get(bench, cls, a)) and size in c.medians}
            rows.append(BestRow(cls, bench, size, best, lab.get(bench, cls, best).medians[size],
                                ratio("hybrid"), ratio("mpi"), values))
    return rows


def overlap(lab: Lab) -> list:
    """tp_overlap per class, design, size: the share of the computation the
    send hid, (alone + compute - total) / compute, from the params the
    engine recorded (the send alone, the computation's actual length)."""
    rows = []
    for (bench, cls, algo), c in sorted(lab.curves.items()):
        if bench != "tp_overlap":
            continue
        for size, total in sorted(c.medians.items()):
            p = c.params.get(size, {})
            alone, compute = p.get("compute_s"), p.get("compute_actual_s")
            if alone and compute:
                rows.append({"placement": cls, "design": algo, "size": size, "alone_s": alone,
                             "compute_s": compute, "total_s": total,
                             "overlap": (alone + compute - total) / compute})
    return rows


def library_crossovers(lab: Lab, placement) -> dict:
    """{family: (first, last_loss)}: from which size an MPI library's own
    single-copy path beats its copy path, for the families measured both ways
    (transport/paths.py). Single copy is what these libraries do by default,
    so it counts as winning at a size where it wins in bandwidth (lib_bw) or
    in latency (lib_latency): copying is advised only where it wins both."""
    from mpiscope.transport.paths import COPY, SINGLE

    bw, lat = lab.library_paths("lib_bw", placement), lab.library_paths("lib_latency", placement)
    out = {}
    for fam in sorted({f for f, _ in bw} | {f for f, _ in lat}):
        wins = {}
        for paths in (bw, lat):
            single, copy = paths.get((fam, SINGLE)), paths.get((fam, COPY))
            if single is None or copy is None:
                continue
            for s in set(single.medians) & set(copy.medians):
                wins[s] = wins.get(s, False) or single.cost(s) < copy.cost(s)
        if wins:
            out[fam] = crossover(sorted(wins), wins)
    return out
