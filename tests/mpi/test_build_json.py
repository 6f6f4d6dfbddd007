# SPDX-License-Identifier: BSD-3-Clause
"""`mpiscope build --json` (the engine built with Open MPI's compiler wrapper):
its document validates against its JSON Schema."""

import json

from runcli import mpiscope
from schemas import validate


def test_build_validates():
    p = mpiscope("build", "--mpi", "openmpi", "--json")
    assert p.returncode == 0, p.stderr
    validate("build", json.loads(p.stdout))
