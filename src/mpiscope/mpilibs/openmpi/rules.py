# SPDX-License-Identifier: BSD-3-Clause
"""Open MPI's tuned rules files, the classic text (4.1 and 5.0,
coll_tuned_dynamic_file.c) and the JSON of Open MPI 6/main: a writer and our
own reader for each. Classic: the number of collectives, then per collective its COLLTYPE id, its
number of communicator sizes and per size the size, its number of rules and one
line per rule (first message size, algorithm number, 0 the library's fixed
decision; fan-in/out; segment size). The entry and rule used are the largest at
or below the communicator's and message's size; a first rule not at 0 makes Open
MPI ignore the whole file silently. Around every tuned size p an entry p + 1 (and
1, below the smallest) keeps the library's own choice."""

from __future__ import annotations

import json
import re

from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.algorithm_catalog import DEFAULT, Catalog
from mpiscope.mpilibs.selection import Rule, check

COLL_IDS = {
    "allgather": 0,
    "allgatherv": 1,
    "allreduce": 2,
    "alltoall": 3,
    "alltoallv": 4,
    "alltoallw": 5,
    "barrier": 6,
    "bcast": 7,
    "exscan": 8,
    "gather": 9,
    "gatherv": 10,
    "reduce": 11,
    "reduce_scatter": 12,
    "reduce_scatter_block": 13,
    "scan": 14,
    "scatter": 15,
    "scatterv": 16,
}
COLL_NAMES = {v: k for k, v in COLL_IDS.items()}
COLLCOUNT = 22


def _entries(by_p: dict) -> list:
    """(communicator size, rules or None for the library's own) in rising order."""
    out = []
    sizes = sorted(by_p)
    if sizes[0] > 1:
        out.append((1, None))
    for i, p in enumerate(sizes):
        out.append((p, by_p[p]))
        if i + 1 == len(sizes) or sizes[i + 1] != p + 1:
            out.append((p + 1, None))
    return out


def number(catalog: Catalog, coll: str, name: str) -> int:
    """The algorithm number a rule naming `name` writes (0: the library's own)."""
    return 0 if name == DEFAULT else int(catalog.find(coll, name).value)


def write_classic(table: dict, catalog: Catalog) -> str:
    """The classic rules file for `table` {collective: {p: [Rule]}}."""
    colls = sorted((c for c in table if table[c]), key=COLL_IDS.__getitem__)
    lines = [
        f"# Open MPI tuned rules written by mpiscope tune for Open MPI {catalog.version}",
        "# use: --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_dynamic_rules_filename FILE",
        str(len(colls)),
    ]
    for coll in colls:
        fan, seg = catalog.rule_params.get(coll, (0, 0))
        entries = _entries(table[coll])
        lines += [f"{COLL_IDS[coll]}  # {coll}", f"{len(entries)}  # communicator sizes"]
        for p, rules in entries:
            rules = check(rules, f"{coll} p={p}") if rules else [Rule(0, DEFAULT)]
            lines += [
                f"{p}  # communicator size"
                + ("" if rules[0].algorithm != DEFAULT or len(rules) > 1 else ": the library's own"),
                f"{len(rules)}  # message sizes",
            ]
            for r in rules:
                lines.append(f"{r.start} {number(catalog, coll, r.algorithm)} {fan} {seg}  # {r.algorithm}")
    return "\n".join(lines) + "\n"


def _numbers(text: str, path: str) -> list:
    """The integers of a classic file, with their lines; '#' starts a comment."""
    out = []
    for lineno, line in enumerate(text.splitlines(), 1):
        body = line.split("#", 1)[0]
        if lineno == 1 and body.strip().startswith("rule-file-version-"):
            continue
        for word in body.split():
            if not re.fullmatch(r"\d+", word) or (len(word) > 1 and word[0] == "0"):
                # Open MPI reads numbers with %li: a leading 0 is octal.
                raise UsageError(f"{path}:{lineno}: '{word}' is not a decimal number")
            out.append((int(word), lineno))
    return out


def read_classic(text: str, catalog: Catalog | None = None, path: str = "rules") -> dict:
    """Reads a classic file as Open MPI does, more strictly: every count must
    match, the first message size of every entry be 0, sizes rise, and (with a
    catalog) every algorithm number exist. Returns {collective: [(p, [(start,
    algorithm number, faninout, segsize)])]}."""
    nums = _numbers(text, path)
    pos = 0

    def take(what):
        nonlocal pos
        if pos >= len(nums):
            raise UsageError(f"{path}: ends where {what} should be")
        pos += 1
        return nums[pos - 1]

    ncoll, _ = take("the number of collectives")
    if ncoll > COLLCOUNT:
        raise UsageError(f"{path}: {ncoll} collectives, more than Open MPI has ({COLLCOUNT})")
    out = {}
    for _ in range(ncoll):
        cid, line = take("a collective id")
        if cid not in COLL_NAMES:
            raise UsageError(f"{path}:{line}: collective id {cid} is not one mpiscope knows")
        coll = COLL_NAMES[cid]
        if coll in out:
            raise UsageError(f"{path}:{line}: {coll} listed twice")
        ncs, _ = take("the number of communicator sizes")
        entries, last_p = [], -1
        for _ in range(ncs):
            p, line = take("a communicator size")
            if p <= last_p:
                raise UsageError(f"{path}:{line}: communicator sizes do not rise ({last_p}, {p})")
            last_p = p
            nms, _ = take("the number of message sizes")
            rules, last = [], -1
            for k in range(nms):
                start, line = take("a message size")
                alg, _ = take("an algorithm")
                fan, _ = take("a fan-in/out")
                seg, _ = take("a segment size")
                if k == 0 and start != 0:
                    raise UsageError(
                        f"{path}:{line}: the first message size of {coll} p={p} is "
                        f"{start}, not 0: Open MPI would ignore the whole file"
                    )
                if start <= last:
                    raise UsageError(f"{path}:{line}: message sizes do not rise ({last}, {start})")
                last = start
                if (
                    catalog is not None
                    and alg != 0
                    and str(alg) not in [a.value for a in catalog.algorithms.get(coll, [])]
                ):
                    raise UsageError(
                        f"{path}:{line}: {coll} has no algorithm {alg} in Open MPI "
                        f"{catalog.version} (it would silently do nothing)"
                    )
                rules.append((start, alg, fan, seg))
            entries.append((p, rules))
        out[coll] = entries
    if pos != len(nums):
        raise UsageError(f"{path}:{nums[pos][1]}: numbers left after the last collective")
    return out


def classic_selects(parsed: dict, coll: str, p: int, size: int) -> int:
    """The algorithm number Open MPI 4.1/5.0 looks up for (coll, p, library size)."""
    entries = parsed.get(coll)
    if not entries:
        return 0
    entry = entries[0]
    for e in entries:
        if e[0] <= p:
            entry = e
    alg = entry[1][0][1]
    for start, a, _, _ in entry[1]:
        if start <= size:
            alg = a
    return alg


def write_json(table: dict, catalog: Catalog) -> str:
    """The JSON rules of Open MPI 6/main (docs/tuning-apps/tuned_dynamic_file_schema.json):
    explicit communicator ranges, message sizes inclusive, algorithms by name."""
    colls = {}
    for coll in sorted(table, key=COLL_IDS.__getitem__):
        comm_rules = []
        for p in sorted(table[coll]):
            rules = check(table[coll][p], f"{coll} p={p}")
            msg = []
            for r, nxt in zip(rules, rules[1:] + [None]):
                rule = {
                    "msg_size_min": r.start,
                    "msg_size_max": nxt.start - 1 if nxt else "inf",
                    "alg": "ignore" if r.algorithm == DEFAULT else r.algorithm,
                }
                msg.append(rule)
            comm_rules.append({"comm_size_min": p, "comm_size_max": p, "rules": msg})
        colls[coll] = comm_rules
    return json.dumps({"rule_file_version": 3, "module": "tuned", "collectives": colls}, indent=2) + "\n"


def read_json(text: str, catalog: Catalog | None = None, path: str = "rules.json") -> dict:
    """Reads the JSON rules, checking names, ranges and algorithms. Returns
    {collective: [(p_min, p_max, [(min, max, alg)])]}."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise UsageError(f"{path}: not JSON ({e})") from None
    if not isinstance(doc.get("collectives"), dict):
        raise UsageError(f"{path}: the top-level field 'collectives' is missing")
    out = {}
    for coll, comm_rules in doc["collectives"].items():
        if coll not in COLL_IDS:
            raise UsageError(
                f"{path}: unknown collective '{coll}' (Open MPI writes them in lower case, e.g. reduce_scatter_block)"
            )
        entries = []
        for cr in comm_rules:
            msgs, last_max = [], -1.0  # inf once a rule runs to the largest size
            for m in cr["rules"]:
                lo = m.get("msg_size_min", 0)
                hi = m.get("msg_size_max", "inf")
                if lo != last_max + 1:
                    raise UsageError(f"{path}: {coll}: message-size rules leave a gap or overlap at {lo}")
                alg = m["alg"]
                if catalog is not None and alg != "ignore" and alg not in catalog.names(coll):
                    raise UsageError(f"{path}: {coll} has no algorithm '{alg}' in Open MPI {catalog.version}")
                msgs.append((lo, hi, alg))
                last_max = hi if hi != "inf" else float("inf")
            entries.append((cr.get("comm_size_min", 0), cr.get("comm_size_max", "inf"), msgs))
        out[coll] = entries
    return out


def json_selects(parsed: dict, coll: str, p: int, size: int) -> str:
    """The algorithm name (or "ignore": the library's own) the JSON rules give
    (coll, p, library size); "ignore" where no range holds."""
    for p_lo, p_hi, msgs in parsed.get(coll, []):
        if p_lo <= p and (p_hi == "inf" or p <= p_hi):
            for lo, hi, alg in msgs:
                if lo <= size and (hi == "inf" or size <= hi):
                    return alg
    return "ignore"
