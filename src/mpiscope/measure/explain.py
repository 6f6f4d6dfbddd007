# SPDX-License-Identifier: BSD-3-Clause
"""Why a launch failed, in one line: what the engine or the launcher said,
without the launcher's remarks about its own messages."""

import re

# Lines a launcher adds about its own messages, not about the failure (Open MPI
# aggregates repeated help messages and says how to see them all).
_BOILERPLATE = re.compile(
    r"more process(es)? ha(s|ve) sent help message|orte_base_help_aggregate|"
    r"see all help / error messages|^\s*$"
)
WHY_CHARS = 300


def explanation(stderr):
    """The launcher's own explanation of a failure: the engine's line when it
    left one, else the first paragraph of the launcher's message (Open MPI's
    help text sits between lines of dashes) without its boilerplate."""
    lines = [l.strip() for l in stderr.splitlines()]
    ours = [l for l in lines if l.startswith("mpiscope-engine:")]
    if ours:
        return ours[0]
    paragraph = []
    for line in lines:
        if line and not line.strip("-"):  # a line of dashes ends a paragraph
            if paragraph:
                break
            continue
        if _BOILERPLATE.search(line):
            if paragraph and not line:
                break
            continue
        paragraph.append(line)
    why = " ".join(paragraph) or "no message"
    return why if len(why) <= WHY_CHARS else why[: WHY_CHARS - 1] + "…"
