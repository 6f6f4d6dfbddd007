# SPDX-License-Identifier: BSD-3-Clause
"""Malformed values for every option of every command, derived from the parser.

The test walks the real parser (every command, subcommand and option, so an
option added later is covered without anyone listing it) and draws malformed
values for each from the kind of its typed argument function (cli/types.py):
empty, blank, a line break, a control character, 10,000 characters, negative,
zero where a positive is needed, NaN and infinity, huge, not a number, a path
that does not exist, a directory for a file and a file for a directory, a
binary file, a truncated file of the format the option reads. Every value
must be refused when the command line is parsed: exit 2, one
`mpiscope: error:` line naming the option, no traceback, nothing new in the
output root or the working directory, and no process started (an audit hook
refuses any; so no MPI launch and no process left behind).

The cases run in this process through the CLI's own entry point
(`mpiscope.cli.main.main`); Hypothesis draws a fixed number of examples per
option from a fixed seed. The count and the seed are printed.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, seed, settings, strategies as st

from mpiscope.cli import types
from mpiscope.cli.main import build_parser, main

SEED = 20240601          # Hypothesis's seed: the same values every run
EXAMPLES = 4             # malformed values drawn per option
MIN_CASES = 1000

# Process starts an audit hook refuses while a case runs.
PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.fork",
                  "os.forkpty", "os.spawn", "pty.spawn")
_guard = {"on": False, "seen": []}


def _audit(event, args):
    if _guard["on"] and event in PROCESS_EVENTS:
        _guard["seen"].append(event)
        raise RuntimeError(f"a malformed value reached a process start ({event})")


sys.addaudithook(_audit)

CONTROL = ["\n", "\r", "\x00", "\x1b", "\t", "\x7f"]
LONG = "x" * 10_000


def _with_control():
    return st.builds(lambda a, c, b: a + c + b, st.text("abc-_.", max_size=4),
                     st.sampled_from(CONTROL), st.text("abc-_.", max_size=4))


def _not_int():
    words = st.sampled_from(["", " ", "abc", "1.5", "nan", "inf", "-inf", "1e3", "0x10", "½", "1,2",
                             "\n", LONG])
    return st.one_of(words, st.floats(allow_nan=True).filter(lambda x: x != int(x) if x == x and
                                                            abs(x) != float("inf") else True)
                     .map(repr), _with_control())


def _not_number():
    return st.one_of(st.sampled_from(["", " ", "abc", "nan", "inf", "-inf", "NaN", "1,5", "\n", LONG,
                                      "5%"]), _with_control())


def _counts(fn):
    low, high = fn.low, fn.high
    below = st.integers(max_value=low - 1).map(str)
    parts = [below, _not_int()]
    if high is not None:
        parts.append(st.integers(min_value=high + 1).map(str))
    return st.one_of(*parts)


def _floats_outside(ok):
    return st.one_of(st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not ok(x))
                     .map(repr), _not_number())


def _text():
    return st.one_of(st.sampled_from(["", " ", "\t", "a\nb", LONG]), _with_control(),
                     st.integers(1001, 20_000).map(lambda n: "y" * n))


def _paths(files, *extra):
    """Paths wrong for any input or output: empty, control characters, too
    long, below a file, in a directory that does not exist."""
    return st.one_of(st.sampled_from(["", " ", "a\x00b", "a\nb", LONG, "n" * 300,
                                      f"{files['text']}/below", "/nonexistent/d/x", *extra]),
                     st.integers(300, 6000).map(lambda n: "p" * n))


def strategy(action, files):
    """The malformed values of one option, from the kind of its type."""
    if action.choices is not None:
        choices = [str(c) for c in action.choices]
        return st.one_of(st.sampled_from(["", " ", "\n", LONG, *(c.upper() + "x" for c in choices)]),
                         st.text(max_size=8).filter(lambda t: t not in choices))
    fn = action.type
    kind = getattr(fn, "kind", None)
    f = files
    table = {
        "text": _text,
        "names": lambda: st.one_of(_text(), st.sampled_from([",", ",,", " , "])),
        "list": lambda: st.one_of(st.sampled_from(["a\nb", LONG]), _with_control()),
        "label": lambda: st.one_of(_text(), st.sampled_from(["latest", " latest "])),
        "run": lambda: st.one_of(st.sampled_from(["", " ", "a\nb", "\x00", LONG, "r" * 300]),
                                 _with_control(), st.integers(300, 6000).map(lambda n: "q/" + "r" * n)),
        "name": lambda: st.one_of(st.sampled_from(["", "A", "a/b", "..", "x" * 30, "a b", "name\n", LONG]),
                                  _with_control()),
        "regex": lambda: st.one_of(st.sampled_from(["(", "[", "abc", "", "a\nb", "(?P<", LONG]),
                                   _with_control()),
        "count": lambda: _counts(fn),
        "seed": lambda: st.one_of(st.integers(max_value=-1).map(str),
                                  st.integers(min_value=2**63).map(str), _not_int()),
        "level": lambda: _floats_outside(lambda x: 0 < x < 1),
        "fraction": lambda: _floats_outside(lambda x: 0 <= x <= 1),
        "positive": lambda: _floats_outside(lambda x: 0 < x < float("inf")),
        "duration": lambda: _floats_outside(lambda x: 0 < x <= types.MAX_SECONDS),
        "percent": lambda: st.one_of(st.sampled_from(["abc", "-1%", "100%", "1.5", "nan", "nan%", "", " ",
                                                      "inf", "\n", LONG, "2 %%"]),
                                     st.floats(min_value=1, allow_nan=False).map(repr)),
        "rank_list": lambda: st.one_of(st.sampled_from(["", ",", "2,2", "2,x", "-4", "1.5", "\n", LONG,
                                                        str(types.MAX_RANKS + 1)]),
                                       st.integers(max_value=fn.low - 1).map(str)),
        "size": lambda: st.one_of(st.sampled_from(["-1", "abc", "1.5K", "8Q", "64G", "", " ", "\n", LONG,
                                                   "nan", *(["0"] if fn.low >= 1 else [])]),
                                  st.integers(max_value=-1).map(str),
                                  st.integers(min_value=2**31).map(str)),
        "sizes": lambda: st.one_of(st.sampled_from(["", ",", "abc", "4K-1", "1-4M:x1", "-5", "64G", "\n",
                                                    LONG, "0-8:x2", "1-8:+0"]),
                                   st.integers(min_value=2**31).map(str)),
        "size_range": lambda: st.sampled_from(["1", "5-1", "a-b", "", "1-1", "-", "\n", LONG, "1-64G"]),
        "time": lambda: st.one_of(st.sampled_from(["abc", "", " ", "-1us", "nan", "inf", "1 lightyear", "\n",
                                                   LONG, "-0.5"]), _with_control()),
        "per_byte": lambda: st.one_of(st.sampled_from(["abc", "", "-1ns/B", "0GB/s", "nan", "inf", "1/B",
                                                       "\n", LONG, "-1GB/s"]), _with_control()),
        "clock_inject": lambda: st.sampled_from(["", "fifty", "1:2:3", "-1:5", "nan:1", "1:inf", "\n", LONG]),
        "slurm_time": lambda: st.one_of(st.sampled_from(["", "soon", "1:2:3:4", "\n", "10 minutes", LONG]),
                                        _with_control()),
        "slurm_name": lambda: st.one_of(_text(), st.sampled_from(["a b", "x y z"])),
        "number_list": lambda: st.one_of(_text(), st.sampled_from([",", "a,b", "-1", "1,1", "0", "1e9"])),
        "path": lambda: _paths(f),
        "program": lambda: _paths(f, f["dir"], f["text"], "no-such-program-mpiscope"),
        "output_file": lambda: _paths(f, f["dir"]),
        "new_file": lambda: _paths(f, f["dir"], f["text"]),
        "output_dir": lambda: _paths(f, f["text"]),
        "output_path": lambda: _paths(f),
        "out_root": lambda: _paths(f, f["text"]),
        "input_file": lambda: _paths(f, f["dir"], "/nonexistent/file"),
        "text_file": lambda: _paths(f, f["dir"], "/nonexistent/file", f["binary"]),
        "machine": lambda: _paths(f, f["dir"], "/nonexistent/file", f["binary"], f["truncated"], f["text"],
                                  f["array"]),
        "weights": lambda: _paths(f, f["dir"], "/nonexistent/file", f["binary"], f["truncated"], f["text"],
                                  f["array"]),
        "tune_dir": lambda: _paths(f, f["text"], f["dir"], f["bad_tune"]),
    }
    assert kind in table, (f"{action.option_strings or action.metavar}: no malformed values for kind "
                           f"{kind!r}; give the option a typed argument function (cli/types.py)")
    return table[kind]()


def _options(parser, path=()):
    """(command path, action, words before the value) of every option taking a value."""
    positionals = []
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _options(sub, (*path, name))
        elif a.nargs == 0 or a.nargs in (argparse.REMAINDER, argparse.SUPPRESS) or a.dest == "help":
            continue
        elif a.option_strings:
            yield path, a, ()
        else:
            yield path, a, tuple(VALID[getattr(p.type, "kind", None)] for p in positionals)
            positionals.append(a)


# Valid values for the positionals before the one drawn.
VALID = {"run": "latest", "name": "fuzz", "text": "x"}


def _argv(path, action, before, value):
    if not action.option_strings:  # after --, as a positional that starts with '-' is written
        return [*path, "--", *before, value]
    long = max(action.option_strings, key=len)
    if long.startswith("--"):
        return [*path, f"{long}={value}"]
    return [*path, long, value] if not value.startswith("-") else [*path, long + value]


def _names(action):
    return [*action.option_strings, action.metavar or action.dest]


def _tree(path):
    return sorted(str(p.relative_to(path)) for p in Path(path).rglob("*"))


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "inputs"
    d.mkdir()
    (d / "dir").mkdir()
    (d / "text").write_text("hello\n")
    (d / "binary").write_bytes(b"\xff\xfe\x00garbage\x00\xc3\x28")
    (d / "truncated").write_text('{"alpha": "1us", "be')
    (d / "array").write_text("[1, 2")
    (d / "bad_tune").mkdir()
    (d / "bad_tune" / "tune.json").write_text('{"format": "mpiscope-tune", "coll')
    return {p.name: str(p) for p in d.iterdir()}


def test_every_option_refuses_malformed_values(files, tmp_path, monkeypatch, capsys):
    root, here = tmp_path / "out", tmp_path / "cwd"
    root.mkdir()
    here.mkdir()
    for key in ("MPISCOPE_CONFIG", "MPISCOPE_PROGRESS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("MPISCOPE_OUT", str(root))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.chdir(here)
    options = list(_options(build_parser()))
    cases = []

    for path, action, before in options:
        @seed(SEED)
        @settings(max_examples=EXAMPLES, database=None, deadline=None, derandomize=False,
                  suppress_health_check=list(HealthCheck))
        @given(value=strategy(action, files))
        def case(value):
            argv = _argv(path, action, before, value)
            err, out = io.StringIO(), io.StringIO()
            before_root, before_here = _tree(root), _tree(here)
            _guard["on"] = True
            try:
                with redirect_stderr(err), redirect_stdout(out):
                    try:
                        code = main(argv)
                    except SystemExit as e:
                        code = e.code
            finally:
                _guard["on"] = False
            text = err.getvalue()
            cases.append(argv)
            shown = f"{argv!r:.300}\n{text[-600:]}"
            assert code == 2, shown
            assert "Traceback" not in text, shown
            errors = [line for line in text.splitlines() if line.startswith("mpiscope: error:")]
            assert len(errors) == 1, shown
            assert any(n in errors[0] for n in _names(action)), shown
            assert _tree(root) == before_root and _tree(here) == before_here, shown

        case()

    assert not _guard["seen"]
    assert len(cases) >= MIN_CASES
    with capsys.disabled():
        print(f"\ncli fuzz: {len(cases)} malformed values over {len(options)} options of "
              f"{len({o[0] for o in options})} commands, Hypothesis seed {SEED}, refused cleanly")
