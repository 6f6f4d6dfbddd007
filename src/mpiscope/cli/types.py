# SPDX-License-Identifier: BSD-3-Clause
"""Typed argument functions: every option's value is checked here, when the
command line is parsed, before any build, launch, measurement or write.

One function per meaning, shared by every command with an option of that
meaning. Each refuses with argparse.ArgumentTypeError (one `mpiscope: error:
argument OPTION: …` line, exit 2); one that only checks returns the text
unchanged. Every function carries `kind` (what the value means):
tests/cli/test_cli_fuzz.py draws malformed values for each option from it, so
an option without a typed function here is noticed."""

from __future__ import annotations

import argparse
import math
import os
import re
import stat
import unicodedata

from mpiscope.common.errors import UsageError

MAX_TEXT = 1000  # characters of a free-text value (a label, a benchmark list)
PATH_MAX = 4096  # bytes of a path (Linux PATH_MAX)
NAME_MAX = 255  # bytes of one path component (Linux NAME_MAX)
MAX_RANKS = 1 << 24  # what the schedule generator and the simulator take
MAX_SECONDS = 7 * 24 * 3600  # a duration longer than a week is a typing error
MAX_SEED = 2**63 - 1  # the engine's seeds are 64-bit
MAX_COUNT = 2**31 - 1  # a count the engine and the simulator take (a C int)
MAX_REPS = 10_000_000  # repetitions of a series: the engine keeps each one's times in memory


def _kind(name, **attrs):
    """Marks a typed function with its kind (and bounds) for the fuzz test."""

    def mark(fn):
        fn.kind = name
        for key, value in attrs.items():
            setattr(fn, key, value)
        return fn

    return mark


def _refuse(message):
    return argparse.ArgumentTypeError(message)


def _from_usage(check, text):
    """Runs `check(text)`, a check that raises UsageError; its message as an
    argparse refusal, without a leading option name (argparse names it)."""
    try:
        return check(text)
    except UsageError as e:
        message = str(e).strip()
        raise _refuse(re.sub(r"^-[-\w/]+:?\s*", "", message) or message) from None


def _one_line(text, what="a value"):
    """Non-empty, at most MAX_TEXT characters, no line break or control character."""
    text = str(text)
    if not text.strip():
        raise _refuse(f"the value is empty; give {what}")
    if len(text) > MAX_TEXT:
        raise _refuse(f"{len(text)} characters is too long for {what} (at most {MAX_TEXT})")
    bad = next((c for c in text if unicodedata.category(c) in ("Cc", "Cs")), None)
    if bad is not None:
        raise _refuse(f"{text[:40]!r} holds the control character {bad!r}: give {what} on one line")
    return text


# ---------------------------------------------------------------- text


@_kind("text")
def text(value):
    """Free text on one line: a benchmark, an algorithm, a setting's key."""
    return _one_line(value)


def names(what):
    """A comma list of names (benchmarks, algorithms), at least one."""

    @_kind("names")
    def check(value):
        value = str(value)
        if not value.replace(",", "").strip():
            raise _refuse(f"{value!r} lists no {what}; name at least one")
        return _one_line(value, f"a comma list of {what}s")

    check.__name__ = "names"
    return check


@_kind("list")
def word_list(value):
    """A comma list or words that may be empty (an empty one overrides a
    config file's): one line, no control character."""
    value = str(value)
    if value.strip():
        _one_line(value, "a list")
    elif value and not value.isspace():
        raise _refuse("give a list on one line")
    return value


@_kind("label")
def label(value):
    """A run's name: one line, not 'latest' (which names the newest run)."""
    value = str(value)
    stripped = value.strip()
    if (
        not stripped
        or "\n" in value
        or stripped == "latest"
        or len(value) > MAX_TEXT
        or any(unicodedata.category(c) == "Cc" for c in value)
    ):
        raise _refuse(f"{value[:40]!r}: give one line of text (not 'latest', which names the newest run)")
    return stripped


@_kind("run")
def run_ref(value):
    """A RUN: a run id, prefix, label, path or 'latest'; never empty."""
    value = str(value)
    if not value.strip():
        raise _refuse(
            "an empty RUN names no run; give a run id, a unique prefix of one, a "
            "label, a path to a run directory, or 'latest'"
        )
    _one_line(value, "a run id, label or path")
    _path_length(value)
    return value


@_kind("name")
def cluster_name(value):
    """An emulated cluster's name."""
    from mpiscope.cluster.spec import check_name

    return _from_usage(check_name, str(value))


@_kind("regex")
def metric(value):
    """--metric REGEX: compiles, with a group that captures the number."""
    from mpiscope.app.launch import compile_metric

    _one_line(value, "a regular expression")
    _from_usage(compile_metric, value)
    return value


# ---------------------------------------------------------------- numbers


def _int(value):
    try:
        return int(str(value).strip())
    except ValueError:
        raise _refuse(f"invalid int value: {str(value)[:40]!r} (give a whole number)") from None


def count(low=1, high=MAX_COUNT):
    """A whole number from `low` to `high` (a C int at most unless given; no bound when None)."""

    @_kind("count", low=low, high=high)
    def check(value):
        n = _int(value)
        if n < low:
            raise _refuse(f"must be at least {low} (got {n})")
        if high is not None and n > high:
            raise _refuse(f"must be at most {high} (got {n})")
        return n

    check.__name__ = "count"
    return check


@_kind("seed", low=0, high=MAX_SEED)
def seed(value):
    n = _int(value)
    if not 0 <= n <= MAX_SEED:
        raise _refuse(f"must be >= 0, a whole number below 2^63 (got {n})")
    return n


def _float(value):
    try:
        x = float(str(value).strip())
    except ValueError:
        raise _refuse(f"invalid number: {str(value)[:40]!r}") from None
    if not math.isfinite(x):
        raise _refuse(f"must be a finite number (got {value})")
    return x


@_kind("level")
def level(value):
    """A significance level: strictly between 0 and 1."""
    x = _float(value)
    if not 0.0 < x < 1.0:
        raise _refuse(f"must be between 0 and 1, e.g. 0.05 (got {value})")
    return x


@_kind("fraction")
def fraction(value):
    """A relative width such as --ci-width: from 0 to 1."""
    x = _float(value)
    if not 0.0 <= x <= 1.0:
        raise _refuse(f"must be a relative width from 0 to 1, e.g. 0.02 for ±2% (got {value})")
    return x


@_kind("positive")
def positive(value):
    """A finite number above 0."""
    x = _float(value)
    if not x > 0:
        raise _refuse(f"must be above 0 (got {value})")
    return x


@_kind("duration")
def seconds(value):
    """A duration in seconds: above 0, at most a week."""
    try:
        x = float(str(value).strip())
    except ValueError:
        x = math.nan
    if not 0 < x <= MAX_SECONDS:
        raise _refuse(f"must be a positive number of seconds, at most {MAX_SECONDS} (got {str(value)[:40]})")
    return x


def _later(module, name):
    """The parser `name` of `module`, imported when first called (start-up stays light)."""

    def parse(text):
        import importlib

        return getattr(importlib.import_module(module), name)(text)

    parse.__name__ = name
    return parse


@_kind("percent")
def percent_or_off(value):
    """A relative threshold, or off."""
    return value if str(value) == "off" else percent(value)


def _rank_list(low, what):
    @_kind("rank_list", low=low)
    def check(value):
        words = str(value).split(",")
        try:
            ps = [int(w) for w in words]
        except ValueError:
            ps = []
        if not ps or any(not low <= p <= MAX_RANKS for p in ps) or len(set(ps)) != len(ps):
            raise _refuse(
                f"{str(value)[:40]!r} is not {what} or a comma list of distinct ones "
                f"(each {low} to {MAX_RANKS}), e.g. 4 or 2,4"
            )
        return sorted(ps)

    check.__name__ = "rank_list"
    return check


comm_sizes = _rank_list(2, "a communicator size")
rank_counts = _rank_list(1, "a rank count")


# ---------------------------------------------------------------- sizes and costs


def byte_size(low=0):
    """A byte count with an optional unit (8, 64K, 4M), at least `low`."""

    @_kind("size", low=low)
    def check(value):
        from mpiscope.common.sizes import parse_size_option

        _one_line(value, "a size")
        _from_usage(lambda t: parse_size_option("", t, minimum=low), value)
        return value

    check.__name__ = "size"
    return check


size = byte_size(0)
positive_size = byte_size(1)


@_kind("sizes")
def size_list(value):
    """Sizes as --sizes takes them: 8,1K,1M or ranges 1-4M:x2."""
    from mpiscope.common.sizes import parse_sizes

    value = str(value)
    if not value.replace(",", "").strip():
        raise _refuse(f"{value!r} lists no size; give sizes such as 8,1K,1M or 1-4M:x2")
    _one_line(value, "a list of sizes")
    _from_usage(parse_sizes, value)
    return value


@_kind("size_range")
def size_range(value):
    """LO-HI, e.g. 1-1M, the smaller first."""
    from mpiscope.common.sizes import parse_size_option

    lo, sep, hi = _one_line(value, "a range of sizes").partition("-")
    if not sep:
        raise _refuse(f"{value!r}: write LO-HI, e.g. 1-1M")
    lo, hi = (_from_usage(lambda t: parse_size_option("", t), x) for x in (lo, hi))
    if hi <= lo:
        raise _refuse(f"{value!r} must go from a smaller to a larger size")
    return value


@_kind("per_byte")
def per_byte_cost(value):
    """A cost per byte (1ns/B) or a bandwidth (1GB/s)."""
    from mpiscope.models.costmodels.params import parse_per_byte

    x = _from_usage(parse_per_byte, _one_line(value, "a cost per byte"))
    if not (math.isfinite(x) and x >= 0):
        raise _refuse(f"{value!r} must be a finite cost per byte >= 0")
    return value


@_kind("clock_inject")
def clock_inject(value):
    """US:PPM, both numbers >= 0."""
    parts = str(value).split(":")
    try:
        ok = len(parts) == 2 and all(0 <= float(p) < math.inf for p in parts)
    except ValueError:
        ok = False
    if not ok:
        raise _refuse(f"expects MAX_OFFSET_US:MAX_DRIFT_PPM, got {str(value)[:40]!r}")
    return value


_SLURM_TIME = re.compile(
    r"\d+|\d+:\d{1,2}|\d+:\d{1,2}:\d{1,2}|\d+-\d+|\d+-\d+:\d{1,2}"
    r"|\d+-\d+:\d{1,2}:\d{1,2}|UNLIMITED|INFINITE",
    re.ASCII,
)  # sbatch reads 0-9 only


@_kind("slurm_time")
def slurm_time(value):
    """A Slurm time limit: minutes, MM:SS, H:MM:SS, D-H, D-HH:MM, D-HH:MM:SS,
    in ASCII digits (it is written into the #SBATCH line as given)."""
    if not _SLURM_TIME.fullmatch(str(value)):
        raise _refuse(
            f"{str(value)[:40]!r} is not a time limit sbatch takes: minutes, H:MM:SS or D-HH:MM:SS, e.g. 30 or 1:00:00"
        )
    return value


@_kind("slurm_name")
def slurm_name(value):
    """A job, partition or account name: one word."""
    value = _one_line(value, "a name")
    if any(c.isspace() for c in value):
        raise _refuse(f"{value[:40]!r}: give one word, no spaces")
    return value


# ---------------------------------------------------------------- paths


def _path_length(value):
    """A path the file system can take: at most PATH_MAX bytes, each part NAME_MAX."""
    raw = os.fsencode(value)
    if len(raw) >= PATH_MAX:
        raise _refuse(f"a path of {len(raw)} bytes is longer than the file system allows ({PATH_MAX - 1})")
    long = next((p for p in raw.split(b"/") if len(p) > NAME_MAX), None)
    if long is not None:
        raise _refuse(
            f"the name {os.fsdecode(long)[:40]!r}… has {len(long)} bytes, more than the file system allows ({NAME_MAX})"
        )


def _clean_path(value, what="a path"):
    value = str(value)
    if not value.strip():
        raise _refuse("an empty path names nothing; give a path")
    if any(unicodedata.category(c) in ("Cc", "Cs") for c in value):
        raise _refuse(f"{value[:40]!r} holds a control character; give {what}")
    _path_length(value)
    return value


def _stat(value):
    """os.stat, or None when nothing is there; another refusal is bad input."""
    try:
        return os.stat(value)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as e:
        from mpiscope.common.oserrors import describe

        raise _refuse(f"{value}: {describe(e)}") from None


@_kind("path")
def path(value):
    """A file or directory name, checked only for form (never empty)."""
    return _clean_path(value)


@_kind("program")
def program(value):
    """A program: a path to an executable file, or a name found on PATH."""
    import shutil

    value = _clean_path(value, "a program")
    if "/" not in value:
        if shutil.which(value) is None:
            raise _refuse(f"no program {value!r} on PATH; give its path")
        return value
    st = _stat(value)
    if st is None or not os.path.isfile(value):
        raise _refuse(f"{value} does not exist or is not a file")
    if not os.access(value, os.X_OK):
        raise _refuse(f"{value} is not executable")
    return value


def _writable_parent(value):
    parent = os.path.dirname(value) or "."  # as the kernel resolves it: 'gone/../x' needs 'gone'
    st = _stat(parent)
    if st is None or not os.path.isdir(parent):
        raise _refuse(f"cannot write {value}: directory {os.path.dirname(value) or '.'} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        why = (
            "is on a read-only file system"
            if os.statvfs(parent).f_flag & os.ST_RDONLY
            else "is not writable (permission denied)"
        )
        raise _refuse(f"cannot write {value}: directory {os.path.dirname(value) or '.'} {why}")


@_kind("output_file")
def output_file(value):
    """A file to write: a new name in a writable directory, a regular file,
    or a character device or FIFO (written in place, common/atomic.py); not a
    directory, nor a name ending in '/'."""
    value = _clean_path(value)
    if value == "-":
        return value
    if value.endswith("/"):
        raise _refuse(f"cannot write {value}: a name ending in '/' is a directory; give a file name")
    st = _stat(value)
    if st is not None and os.path.isdir(value):
        raise _refuse(f"cannot write {value}: it is a directory; give a file name")
    if st is not None and not stat.S_ISREG(st.st_mode):  # a node, written in place
        from mpiscope.common.atomic import target

        _from_usage(target, value)
        if not os.access(value, os.W_OK):
            raise _refuse(f"cannot write {value}: permission denied")
        return value
    _writable_parent(value)
    return value


@_kind("new_file")
def new_file(value):
    """A file to write that must not exist yet (never overwritten)."""
    value = output_file(value)
    if _stat(value) is not None:
        raise _refuse(f"{value} exists; give a new file name (it is never overwritten)")
    return value


@_kind("output_dir")
def output_dir(value):
    """A directory to write into: an existing directory, or a new name in a
    writable directory; not a file."""
    value = _clean_path(value)
    st = _stat(value)
    if st is not None and not os.path.isdir(value):
        raise _refuse(f"{value} is a file; give a directory")
    if st is None:
        _writable_parent(value)
    elif not os.access(value, os.W_OK | os.X_OK):
        raise _refuse(f"cannot write into {value}: it is not writable")
    return value


@_kind("output_path")
def output_path(value):
    """A file or a new directory to write (the format decides): its
    directory exists and is writable."""
    value = _clean_path(value)
    if value != "-":
        _writable_parent(value)
    return value


def _input(read, value):
    """read(value) with common/inputs.py; its refusal as argparse's."""
    from mpiscope.common.inputs import InputError

    try:
        return read(value)
    except InputError as e:
        raise _refuse(str(e)) from None


@_kind("input_file")
def input_file(value):
    """A file to read (a schedule): a regular file (not a directory, FIFO or
    device) that exists, of at most the size of a schedule."""
    from mpiscope.common.inputs import SCHEDULE_LIMIT, readable_file

    value = _clean_path(value)
    _input(lambda v: readable_file(v, "file", "give a file", limit=SCHEDULE_LIMIT), value)
    return value


@_kind("text_file")
def text_file(value):
    """A text file to read (a hostfile, a pairs file): a regular file, UTF-8,
    within the size of a hostfile."""
    from mpiscope.common.inputs import HOSTFILE_LIMIT, read_text

    value = _clean_path(value)
    _input(lambda v: read_text(v, HOSTFILE_LIMIT, "file", "give a text file"), value)
    return value


def _json_file(value, limit=None):
    from mpiscope.common.inputs import DOCUMENT_LIMIT, read_json

    value = _clean_path(value)
    _input(lambda v: read_json(v, limit or DOCUMENT_LIMIT, "file"), value)
    return value


@_kind("machine")
def machine_file(value):
    """A machine model (JSON costs or a LogGP model), read and checked."""
    from mpiscope.common.inputs import MODEL_LIMIT
    from mpiscope.models.costmodels.params import load_machine

    return _from_usage(lambda t: load_machine(t) and t, _json_file(value, MODEL_LIMIT))


@_kind("weights")
def weights_file(value):
    """An application's weights (mpiscope profile weights), read and checked."""
    from mpiscope.tune.weights import read_weights

    return _from_usage(lambda t: read_weights(t) and t, input_file(value))


@_kind("tune_dir")
def tune_dir(value):
    """The output directory of `mpiscope tune` (its tune.json readable)."""
    value = _clean_path(value)
    st = _stat(value)
    if st is None or not os.path.isdir(value):
        raise _refuse(f"{value} is not a directory: give the output directory of `mpiscope tune`")
    result = os.path.join(value, "tune.json")
    if not os.path.lexists(result):
        raise _refuse(f"{value} holds no tune.json: give the output directory of `mpiscope tune`")
    from mpiscope.tune.result_file import read

    _from_usage(read, result)
    return value


# ---------------------------------------------------------------- resources


def cpus() -> int:
    return os.cpu_count() or 1


@_kind("count", low=0, high=None)
def jobs(value):
    """Worker processes: 0 (none) up to the CPUs here."""
    n = _int(value)
    if not 0 <= n <= cpus():
        raise _refuse(f"must be a number of processes from 0 to the {cpus()} CPUs here (got {n})")
    return n


jobs.high = cpus()


def checked(parse, kind="text"):
    """A typed function from a parser that raises UsageError (one line, then `parse`)."""

    @_kind(kind)
    def check(value):
        _from_usage(parse, _one_line(value))
        return value

    check.__name__ = getattr(parse, "__name__", "checked")
    return check


percent = checked(_later("mpiscope.cli.percent", "parse_percent"), "percent")  # 2% or 0.02
time_cost = checked(_later("mpiscope.models.costmodels.params", "parse_time"), "time")  # 2us
