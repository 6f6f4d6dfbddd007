# SPDX-License-Identifier: BSD-3-Clause
"""The Slurm recipe of docs/how-to/nightly.md, run as written on a real
Slurm (tests/slurm_cluster.py): the script of "The script" with the
`sbatch --begin` chain's head, submitted with sbatch for two nights. Each
night queues its successor (held until its --begin time, then cancelled
here); `mpiscope history --check` of the second night sees both runs. The
only changes to the text: the paths under ~/mpiscope, the mpiscope command
(this checkout's), and a tiny run instead of the quick suite."""

import json
import re
import sys
from pathlib import Path

import pytest

from slurm_cluster import running

DOC = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "nightly.md"
TINY = "--bench pingpong --sizes 8 --reps-max 30 --time-budget 0.5"


@pytest.fixture(scope="module")
def slurm():
    with running() as cluster:
        yield cluster


def _blocks(text):
    return re.findall(r"```sh\n(.*?)```", text, re.S)


def nightly_script(home: Path) -> str:
    """The chain's head (#!, #SBATCH, set -u, the successor's sbatch) and the
    rest of the nightly script, as the how-to tells to put them together."""
    script, chain = (b for b in _blocks(DOC.read_text()) if "set -u" in b)
    rest = script.split("set -u\n", 1)[1]
    text = chain + rest
    text = text.replace("~/mpiscope", str(home / "mpiscope"))
    text = re.sub(r"^mpiscope ", f"{sys.executable} -m mpiscope.cli ", text, flags=re.M)
    return text.replace("--suite quick", TINY)


def test_two_nights_by_the_sbatch_chain_make_a_history(slurm, tmp_path):
    (tmp_path / "mpiscope").mkdir()
    script = tmp_path / "mpiscope" / "nightly.sh"
    script.write_text(nightly_script(tmp_path))
    script.chmod(0o755)
    assert "#SBATCH --job-name=mpiscope-nightly" in script.read_text()
    assert re.search(r"^sbatch --begin=02:00 --dependency=singleton ", script.read_text(), re.M)
    exits = []
    for night in (1, 2):
        log = tmp_path / f"night{night}.log"
        state = slurm.submit_and_wait(script, log, cwd=tmp_path)
        queued = slurm.run(["squeue", "-h", "-n", "mpiscope-nightly", "-o", "%i %T"]).stdout.split()
        assert queued[1:] == ["PENDING"], (queued, log.read_text())
        # The night queued the next one: not before 02:00, and after this one. Slurm shows
        # the singleton dependency (unfulfilled) until this night's job is gone, then clears it.
        show = slurm.run(["scontrol", "show", "job", queued[0]], timeout=30).stdout
        assert re.search(r"EligibleTime=\S+T02:00:00", show), show
        assert re.search(r"Dependency=(singleton(\(unfulfilled\))?|\(null\))\s", show), show
        slurm.run(["scancel", queued[0]])
        exits.append((state, log.read_text()))
    # The first night has nothing to compare with: --check refuses a history of one run (exit 2).
    assert exits[0][0] == "FAILED" and "has one run" in exits[0][1], exits[0]
    assert exits[1][0] in ("COMPLETED", "FAILED"), exits[1]
    doc = json.loads((tmp_path / "mpiscope" / "nightly" / "history.json").read_text())
    assert doc["series"] and all(len(s["runs"]) == 2 for s in doc["series"])
    assert all(s["check"]["status"] in ("same", "faster", "regression") for s in doc["series"])
    # The job's exit code is the gate's: 0, or 5 with a regression named in history.txt.
    regression = any(s["check"]["status"] == "regression" for s in doc["series"])
    assert (exits[1][0] == "FAILED") == regression
    text = (tmp_path / "mpiscope" / "nightly" / "history.txt").read_text()
    assert "pingpong 8 B" in text
