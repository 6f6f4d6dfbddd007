"""Shared by every test: the helpers in this folder (rawgen, runcli, …)
import from any subfolder (unit/, mpi/, cluster/, apps/)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
