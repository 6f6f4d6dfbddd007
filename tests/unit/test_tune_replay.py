# SPDX-License-Identifier: BSD-3-Clause
"""The tuner replayed on stored launches (no MPI): the same launches give the
same decisions, the same files and the same launches asked for, byte for
byte, as recorded in tests/data/tune-replay/expected/.

The stored launches are two real tunes reduced by tests/tune_replay.py,
`mpiscope tune -n 2,4 --coll allreduce,bcast --sizes 8,1K,64K --time-budget
0.1 --exhaustive` with Open MPI 4.1.4 (and what its default runs, read under
gdb) and with MPICH 4.0.2 (whose smp algorithms failed there). Each case
runs a whole tune on them: the search (adaptive or exhaustive), the
decisions, the rules (bounded, with an application's weights or without),
the files and env.sh, and the verification, where a rule made to slow its
cell down (`slower`) is withdrawn and the files are written and verified
again; one MPICH case allows a single verification, so that the files and
env.sh after its withdrawal are written without being verified again. One
Open MPI case claims version 6, whose JSON rules are written too.
launches.json holds every launch asked for, with the settings it was given.

To record them again after a deliberate change, run with
MPISCOPE_UPDATE_SNAPSHOTS=1 and review the diff of tests/data/tune-replay/.
"""

import difflib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

from tune_replay import Replay, catalog_of, reading
from mpiscope import mpilibs
from mpiscope.mpilibs.selection import Rule
from mpiscope.tune import tuner as T
from mpiscope.tune.result_file import save
from mpiscope.tune.write import env_lines

DATA = Path(__file__).resolve().parents[1] / "data" / "tune-replay"
EXPECTED = DATA / "expected"


@dataclass(frozen=True)
class Case:
    name: str
    stored: str
    ps: tuple
    adaptive: bool = True
    version: str | None = None      # the library's version claimed (Open MPI 6: JSON rules too)
    weights: dict | None = None
    max_rules: int = 8
    slower: dict = field(default_factory=dict)   # {(p, collective, size): tuned / default}
    verify_rounds: int = 2


WEIGHTS = {"allreduce": {None: {1024: 500.0, 65536: 20.0}}, "bcast": {4: {8: 1000.0, 1024: 10.0}}}

CASES = [
    Case("openmpi-adaptive", "openmpi-4.1-p2-4.json", (2, 4)),
    Case("openmpi6-exhaustive-weights-withdrawn", "openmpi-4.1-p2-4.json", (2, 4), adaptive=False,
         version="6.0.0", weights=WEIGHTS, max_rules=2, slower={(4, "bcast", 1024): 1.5}),
    Case("mpich-adaptive", "mpich-4.0-p2-4.json", (2, 4)),
    Case("mpich-exhaustive-weights-withdrawn", "mpich-4.0-p2-4.json", (2, 4), adaptive=False,
         weights=WEIGHTS, slower={(2, "bcast", 8): 3.0}),
    # bcast's only rule naming an algorithm is withdrawn: env.sh loses its device switch
    Case("mpich-withdrawn-in-the-last-round", "mpich-4.0-p2-4.json", (2, 4), verify_rounds=1,
         slower={(2, "bcast", 8): 3.0}),
]


def replayed(case: Case, out: Path) -> dict:
    """{file name: text} of a whole tune on the case's stored launches, and
    launches.json: the launches it asked for, in order."""
    stored = json.loads((DATA / case.stored).read_text())
    replay = Replay(stored, case.slower)
    cfg = T.TuneConfig(collectives=stored["collectives"], sizes=stored["sizes"],
                       adaptive=case.adaptive, weights=case.weights, max_rules=case.max_rules,
                       verify_rounds=case.verify_rounds)
    plans = [SimpleNamespace(np=p, ppn=None, cluster=None) for p in case.ps]
    tuning = T.Tuning(plans, catalog_of(stored, case.version), cfg, out, say=lambda *_: None,
                      launches=replay)
    for t in tuning.tuners:
        t.reading = reading(stored, t.p)
    save(tuning.run(), out)
    files = {f.name: f.read_text().replace(str(out), "OUT") for f in sorted(out.iterdir())}
    files["launches.json"] = "".join(json.dumps(c) + "\n" for c in replay.calls).replace(str(out), "OUT")
    return files


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_the_same_launches_give_the_same_decisions_and_files(case, tmp_path):
    got = replayed(case, tmp_path)
    folder = EXPECTED / case.name
    if os.environ.get("MPISCOPE_UPDATE_SNAPSHOTS") == "1":
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.iterdir():
            old.unlink()
        for name, text in got.items():
            (folder / name).write_text(text)
        return
    assert sorted(got) == sorted(f.name for f in folder.iterdir())
    for name, text in got.items():
        expected = (folder / name).read_text()
        if text != expected:
            diff = "".join(difflib.unified_diff(expected.splitlines(True), text.splitlines(True),
                                                f"expected/{case.name}/{name}", "replayed", n=2))
            raise AssertionError(f"{case.name}: {name} differs:\n{diff[:6000]}")


def test_the_cases_reach_what_they_are_for():
    """Every case's outputs hold what it is there to check: rules naming an
    algorithm, both communicator sizes, a withdrawal where one is made, the
    files of its library."""
    for case in CASES:
        folder = EXPECTED / case.name
        doc = json.loads((folder / "tune.json").read_text())
        assert doc["ps"] == list(case.ps)
        named = [r for by_p in doc["rules"].values() for rules in by_p.values() for r in rules
                 if r["algorithm"] != "default"]
        assert named or case.slower, case.name
        assert bool(doc["withdrawn"]) == bool(case.slower), case.name
        tuned = (folder / "launches.json").read_text().count('"verify tuned"')
        rounds = min(2 if case.slower else 1, case.verify_rounds)   # after a withdrawal, verified again
        assert tuned >= rounds * 3 * len(case.ps), case.name
        assert doc["verification"]["last_withdrawal_verified"] == (rounds == 2 or not case.slower)
        files = {f.name for f in folder.iterdir()}
        want = ({"ompi-rules.conf"} | ({"ompi-rules.json"} if case.version else set())
                if doc["library"] == "openmpi" else {"mpich-selection.json"})
        assert want <= files and "env.sh" in files, case.name
        if case.weights:
            assert doc["weighted"] and doc["bound"]["max_rules"] == case.max_rules


def test_env_sh_uses_the_files_as_last_written():
    """env.sh holds the settings of the rules tune.json ends with, also when
    they were rewritten after the last verification allowed."""
    for case in CASES:
        folder = EXPECTED / case.name
        doc = json.loads((folder / "tune.json").read_text())
        stored = json.loads((DATA / case.stored).read_text())
        library = mpilibs.get(doc["library"])
        table = {c: {int(p): [Rule(r["start"], r["algorithm"]) for r in rules]
                     for p, rules in by_p.items()} for c, by_p in doc["rules"].items()}
        written = {k: Path(v) for k, v in doc["files"].items()}
        settings = library.use_settings(catalog_of(stored, case.version), written, table)
        text = env_lines(library, settings).replace(str(Path("OUT").absolute()), "OUT")
        assert (folder / "env.sh").read_text() == text, case.name


def test_tune_json_is_the_tune_document():
    """tune.json is what `mpiscope tune --json` prints: versioned, strict JSON."""
    schema = json.loads((Path(__file__).resolve().parents[2] / "docs" / "schemas" /
                         "tune.schema.json").read_text())
    for case in CASES:
        text = (EXPECTED / case.name / "tune.json").read_text()
        doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"{case.name}: {c} in tune.json"))
        assert list(doc)[0] == "schema_version"
        jsonschema.validate(doc, schema, cls=jsonschema.Draft202012Validator)
