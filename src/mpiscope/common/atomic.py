# SPDX-License-Identifier: BSD-3-Clause
"""Write files under a temporary name and rename, so no half-written file ever
carries a final name."""

import contextlib
import os
from pathlib import Path


@contextlib.contextmanager
def atomic_path(path):
    """Yield a temporary path next to `path`; rename it to `path` on success."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}")
    try:
        yield tmp
        os.replace(tmp, path)
    finally:
        if tmp.exists():
            tmp.unlink()


def write_text(path, text, mode=None):
    """`text` into `path` whole or not at all; `mode` (e.g. 0o755) set before the rename."""
    with atomic_path(path) as tmp:
        Path(tmp).write_text(text)
        if mode is not None:
            os.chmod(tmp, mode)
