# SPDX-License-Identifier: BSD-3-Clause
"""The date of a log that prints none (OSU's outputs, a ReFrame format
without job_completion_time): `--date` gives it, as a date, as the file's
modification time (`mtime`) or as a date written in the file's name
(`name`: osu_latency-2024-03-07.log, imb_20240307_0200.txt)."""

from __future__ import annotations

import os
import re
from datetime import datetime

from mpiscope.common.errors import UsageError

IN_NAME = re.compile(
    r"(?<!\d)(?P<y>(?:19|20)\d\d)-?(?P<m>[01]\d)-?(?P<d>[0-3]\d)"
    r"(?:[T_.-]?(?P<H>[0-2]\d):?(?P<M>[0-5]\d)(?::?(?P<S>[0-5]\d))?)?(?!\d)"
)
WORDS = ("mtime", "name")


def parse_option(text):
    """--date's value: a datetime, or 'mtime' or 'name'; UsageError otherwise."""
    text = str(text).strip()
    if text in WORDS:
        return text
    try:
        return datetime.fromisoformat(text).replace(tzinfo=None)
    except ValueError:
        raise UsageError(
            f"--date '{text}': give a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM), "
            "'mtime' (each file's modification time) or 'name' (a date in each "
            "file's name)"
        ) from None


def date_of(path, option) -> tuple[datetime, str]:
    """(date, how) of a file by --date's value; UsageError when it gives none."""
    if option is None:
        raise UsageError(
            f"{path}: the log holds no date: give --date YYYY-MM-DD[THH:MM], "
            "--date mtime (the file's modification time) or --date name (a date "
            "in the file's name)"
        )
    if option == "mtime":
        return datetime.fromtimestamp(os.stat(path).st_mtime).replace(microsecond=0), "mtime"
    if option == "name":
        m = IN_NAME.search(os.path.basename(str(path)))
        try:
            if m:
                return datetime(
                    int(m["y"]), int(m["m"]), int(m["d"]), int(m["H"] or 0), int(m["M"] or 0), int(m["S"] or 0)
                ), "name"
        except ValueError:
            pass
        raise UsageError(
            f"{path}: --date name finds no date (YYYY-MM-DD or YYYYMMDD) in the "
            "file's name; give --date YYYY-MM-DD or --date mtime"
        )
    return option, "option"
