# SPDX-License-Identifier: BSD-3-Clause
"""Defaults from the environment and TOML files, applied as argparse defaults.

Precedence, highest first: the command line, MPISCOPE_OUT, ./mpiscope.toml, the
user file ($MPISCOPE_CONFIG, else $XDG_CONFIG_HOME/mpiscope/config.toml, else
~/.config/mpiscope/config.toml), the built-in default. A file holds `out` at the
top and [run] and [report] tables, each key its option without the dashes
(`out = "/scratch/me/mpiscope-runs"`, `[run]`, `np = 8`). Unknown keys, wrong
types and refused values are errors (exit 2) naming the file and the key.
Standard library only, tomllib imported only when a file exists: every command
reads this."""

import argparse
import os
from collections import namedtuple

from mpiscope.common.errors import UsageError

# key: as written in a file ("run.np" is np in the [run] table); command: the
# command whose option it sets (None: every command that has the option);
# option: that option; kind: the TOML type it takes; env: its variable, if any;
# path: a file or directory name ("~" expanded).
Setting = namedtuple("Setting", "key command option kind env path", defaults=(None, False))

SETTINGS = (
    Setting("out", None, "--out", str, "MPISCOPE_OUT", True),
    Setting("run.np", "run", "--np", int),
    Setting("run.mpi", "run", "--mpi", str),
    Setting("run.launcher", "run", "--launcher", str),
    Setting("run.mpirun", "run", "--mpirun", str, path=True),
    Setting("run.hostfile", "run", "--hostfile", str, path=True),
    Setting("run.suite", "run", "--suite", str),
    Setting("run.exclude", "run", "--exclude", str),
    Setting("run.sync", "run", "--sync", str),
    Setting("run.clock-sync", "run", "--clock-sync", str),
    Setting("run.timer", "run", "--timer", str),
    Setting("run.cache", "run", "--cache", str),
    Setting("run.reps-min", "run", "--reps-min", int),
    Setting("run.reps-max", "run", "--reps-max", int),
    Setting("run.ci-width", "run", "--ci-width", float),
    Setting("run.time-budget", "run", "--time-budget", float),
    Setting("run.warmup", "run", "--warmup", int),
    Setting("report.jobs", "report", "--jobs", int),
)
BY_KEY = {s.key: s for s in SETTINGS}
# A default from a file or the environment yields to another option given on
# the command line that chooses the same thing: `mpi = "mpich"` in a file
# and `--mpicc PATH` on the command line mean the wrapper named there.
YIELDS_TO = {"--mpi": ("--mpicc",)}
BUILT_IN = "built-in"
PROJECT_FILE = "mpiscope.toml"


def user_file() -> str:
    """$MPISCOPE_CONFIG, else $XDG_CONFIG_HOME/mpiscope/config.toml (~/.config by default)."""
    if os.environ.get("MPISCOPE_CONFIG"):
        return os.environ["MPISCOPE_CONFIG"]
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "mpiscope", "config.toml")


def project_file() -> str:
    return os.path.abspath(PROJECT_FILE)


def _flatten(doc, path):
    """{'out': .., 'run': {'np': ..}} -> {'out': .., 'run.np': ..}; unknown keys refused."""
    flat = {}
    for name, value in doc.items():
        if isinstance(value, dict) and any(k.startswith(f"{name}.") for k in BY_KEY):
            for sub, v in value.items():
                flat[f"{name}.{sub}"] = v
        else:
            flat[name] = value
    unknown = [k for k in flat if k not in BY_KEY]
    if unknown:
        raise UsageError(f"{path}: unknown setting '{unknown[0]}'; known settings: {', '.join(BY_KEY)}")
    return flat


def _check_kind(setting, value, where):
    ok = (isinstance(value, setting.kind) and not isinstance(value, bool)) or (
        setting.kind is float and isinstance(value, int) and not isinstance(value, bool)
    )
    if not ok:
        raise UsageError(f"{where}: '{setting.key}' must be {_KIND_NAMES[setting.kind]}, got {value!r}")
    return os.path.expanduser(value) if setting.path else value


_KIND_NAMES = {str: "a string", int: "an integer", float: "a number"}


def _read_file(path):
    """The settings of one TOML file ({} when nothing is there)."""
    if not os.path.lexists(path):
        return {}
    from mpiscope.common.inputs import CONFIG_LIMIT, read_toml  # only when there is a file

    doc = read_toml(path, CONFIG_LIMIT, "the config file", "fix or remove the file")
    return {k: _check_kind(BY_KEY[k], v, path) for k, v in _flatten(doc, path).items()}


def layers():
    """[(source, {key: value})], lowest precedence first (built-in defaults not included)."""
    user = user_file()
    if os.environ.get("MPISCOPE_CONFIG") and not os.path.lexists(user):
        raise UsageError(f"MPISCOPE_CONFIG names {user}, which does not exist; create it or unset the variable")
    out = [(user, _read_file(user))]
    project = project_file()
    if os.path.abspath(project) != os.path.abspath(user):
        out.append((project, _read_file(project)))
    env = {
        s.key: (os.path.expanduser(os.environ[s.env]) if s.path else os.environ[s.env])
        for s in SETTINGS
        if s.env and os.environ.get(s.env)
    }
    out += [(BY_KEY[k].env, {k: v}) for k, v in env.items()]
    return out


def effective():
    """{key: (value, source)} of every setting given outside the command line."""
    values = {}
    for source, settings in layers():
        for key, value in settings.items():
            values[key] = (value, source)
    return values


def _parsers(parser):
    """`parser` and every subcommand's parser below it."""
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                yield from _parsers(sub)


def _action(parser, option):
    return next((a for a in parser._actions if option in a.option_strings), None)


def convert(action, setting, value, source):
    """`value` as the option would take it from the command line, or UsageError."""
    text = str(value)
    try:
        converted = action.type(text) if callable(action.type) else text
    except (argparse.ArgumentTypeError, TypeError, ValueError) as e:
        raise UsageError(f"{source}: '{setting.key}' = {value!r} is refused by {setting.option} ({e})") from None
    if action.choices is not None and converted not in action.choices:
        raise UsageError(
            f"{source}: '{setting.key}' = {value!r}: {setting.option} takes one of "
            f"{', '.join(map(str, action.choices))}"
        )
    return converted


def _given(option, argv) -> bool:
    return any(a == option or a.startswith(f"{option}=") for a in argv)


def apply(parser, command, argv=()) -> None:
    """Sets the defaults of `command`'s options (in `parser`, which holds it)
    to the values from the environment and the files; `argv`, the command
    line, decides which of them yield (YIELDS_TO)."""
    values = effective()
    if not values:
        return
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    root = sub.choices[command]
    for key, (value, source) in values.items():
        setting = BY_KEY[key]
        if setting.command not in (None, command):
            continue
        if any(_given(o, argv) for o in YIELDS_TO.get(setting.option, ())):
            continue
        for p in _parsers(root):
            action = _action(p, setting.option)
            if action is not None and action.default is not argparse.SUPPRESS:
                action.default = convert(action, setting, value, source)
