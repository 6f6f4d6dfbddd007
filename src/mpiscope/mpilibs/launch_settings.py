# SPDX-License-Identifier: BSD-3-Clause
"""A setting's value as a launch gives it: launcher words (Open MPI's --mca and
-x, Hydra's and Intel MPI's -genv and -env) or the environment."""

from __future__ import annotations


def launch_setting(words: list, env: dict, name: str) -> str | None:
    """`name`'s value in launcher words (--mca k v, -x k=v, -genv k v, -env k v)
    or in `env`; None when neither sets it."""
    for i, w in enumerate(words):
        if w in ("--mca", "-mca") and i + 2 < len(words) and words[i + 1] == name:
            return words[i + 2]
        if w == "-x" and i + 1 < len(words) and words[i + 1].startswith(name + "="):
            return words[i + 1].split("=", 1)[1]
        if w in ("-genv", "-env") and i + 2 < len(words) and words[i + 1] == name:
            return words[i + 2]
    return env.get(name) or None


def mca(setting, name: str) -> str | None:
    """An Open MPI MCA parameter through `setting` (a name -> value reader):
    as given with --mca, else as its OMPI_MCA_ variable."""
    value = setting(name)
    return value if value is not None else setting("OMPI_MCA_" + name)
