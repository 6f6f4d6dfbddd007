# SPDX-License-Identifier: BSD-3-Clause
"""The first-run page's commands (docs/getting-started/first-run.md), in
order, as a newcomer types them: each succeeds, its run on real Open MPI
ranks."""

import os
import subprocess
import sys

from docs_text import DOCS, mpiscope_commands


def test_first_run_commands_run(tmp_path):
    """The first-run page's commands, in order, as a newcomer types them."""
    out = tmp_path / "runs"
    env = {**os.environ, "MPISCOPE_OUT": str(out), "MPISCOPE_PROGRESS": "none"}
    for argv in mpiscope_commands(DOCS / "getting-started" / "first-run.md"):
        p = subprocess.run([sys.executable, "-m", "mpiscope.cli", *argv], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, f"mpiscope {' '.join(argv)}: exit {p.returncode}\n{p.stderr}"
