# SPDX-License-Identifier: BSD-3-Clause
"""`--config NAME=SPEC` of `mpiscope app compare`: the configurations an
application is launched under, each the environment variables it adds.
SPEC is `default` (nothing added; the baseline, added first when no --config
names it); a directory (a tune's output: its env.sh); FILE.json (`transport
advise --json`: its verified settings, else this library's settings of its
first placement class that measured them); FILE.conf (Open MPI's MCA
parameters, `name = value`, as OMPI_MCA_name variables); any other FILE:
environment lines `export NAME=VALUE` or `NAME=VALUE` (taken literally, quotes
removed, no expansion; comments and blank lines skipped). Anything else is
refused before anything runs (UsageError)."""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from mpiscope import mpilibs
from mpiscope.common.errors import UsageError

BASELINE = "default"
TUNE_ENV = "env.sh"  # what `mpiscope tune` writes for a job to add
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,39}$")
VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
MCA_NAME = re.compile(r"[A-Za-z0-9_]+$")
SPEC_FORMS = (
    "default, a tune's directory, `mpiscope transport advise --json` output (.json), an MCA "
    "parameter file (.conf) or a file of `export NAME=VALUE` lines"
)


@dataclass(frozen=True)
class Config:
    name: str
    env: dict = field(default_factory=dict)  # variables the launch adds: name -> value
    source: str = BASELINE  # the SPEC: "default", or the absolute path read
    kind: str = BASELINE  # default | tune | transport | mca | env

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "source": self.source, "env": dict(self.env)}


def parse_configs(items, library_text: str = "") -> list[Config]:
    """The configurations of `--config NAME=SPEC` items, the baseline first;
    `library_text`: the MPI library's version text (which advice applies)."""
    configs = [parse_config(item, library_text) for item in items or ()]
    names = [c.name for c in configs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(
            f"--config name {', '.join(twice)} is given more than once; give every configuration a name of its own"
        )
    base = [c for c in configs if c.name == BASELINE]
    if base and base[0].kind != BASELINE:
        raise UsageError(
            f"--config {BASELINE}={base[0].source}: the name '{BASELINE}' is the baseline, "
            f"which runs unchanged; name this configuration otherwise"
        )
    if not base:
        configs.insert(0, Config(BASELINE))
    else:
        configs.remove(base[0])
        configs.insert(0, base[0])
    if len(configs) < 2:
        raise UsageError(
            "give at least one --config NAME=SPEC to compare with the default (e.g. --config tuned=tune-out/)"
        )
    return configs


def parse_config(item: str, library_text: str = "") -> Config:
    name, sep, spec = str(item).partition("=")
    name, spec = name.strip(), spec.strip()
    if not sep or not name or not spec:
        raise UsageError(f"--config '{item}': write NAME=SPEC, e.g. --config tuned=tune-out/ (SPEC: {SPEC_FORMS})")
    if not NAME.match(name):
        raise UsageError(
            f"--config '{item}': the name '{name}' must be letters, digits, '_', '.', '+' "
            f"or '-', starting with a letter or digit, at most 40 characters"
        )
    if spec == BASELINE:
        return Config(name)
    path = Path(spec).expanduser()
    if path.is_dir():
        return Config(name, _tune_env(path, item), str(path.resolve()), "tune")
    if not path.is_file():
        raise UsageError(
            f"--config '{item}': {spec} is neither 'default' nor an existing file or directory (SPEC: {SPEC_FORMS})"
        )
    text = _read(path, item)
    if path.suffix == ".json":
        return Config(name, _advice_env(text, path, item, library_text), str(path.resolve()), "transport")
    if path.suffix == ".conf":
        return Config(name, _mca_env(text, path, item), str(path.resolve()), "mca")
    return Config(name, _env_lines(text, path, item), str(path.resolve()), "env")


def _read(path: Path, item: str) -> str:
    from mpiscope.common.inputs import CONFIG_LIMIT, read_text

    return read_text(path, CONFIG_LIMIT, f"--config '{item}':", "give a text file")


def _tune_env(directory: Path, item: str) -> dict:
    env_sh = directory / TUNE_ENV
    if not env_sh.is_file():
        raise UsageError(
            f"--config '{item}': the directory {directory} has no {TUNE_ENV}, so it is not "
            f"the output of `mpiscope tune` (give a tune's output directory, or a file)"
        )
    env = _env_lines(_read(env_sh, item), env_sh, item)
    if not env:
        raise UsageError(
            f"--config '{item}': {env_sh} sets no variable: the tune changed nothing to "
            f"compare (its tune.json says why)"
        )
    return env


def _lines(text: str):
    """(line number, line) of the lines that are not blank or comments."""
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line and not line.startswith("#"):
            yield n, line


def _env_lines(text: str, path: Path, item: str) -> dict:
    env = {}
    for n, line in _lines(text):
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise UsageError(f"--config '{item}': {path}:{n}: {exc} in '{line}'") from None
        if words[:1] == ["export"]:
            words = words[1:]
        variable, sep, value = (words[0] if len(words) == 1 else "").partition("=")
        if not sep or not VARIABLE.match(variable):
            raise UsageError(
                f"--config '{item}': {path}:{n}: '{line}' is not `export NAME=VALUE` or "
                f"`NAME=VALUE` (one variable a line)"
            )
        if ("$" in value or "`" in value) and "'" not in line:
            raise UsageError(
                f"--config '{item}': {path}:{n}: '{line}' needs the shell to expand it; "
                f"write the value out (values are taken literally)"
            )
        env[variable] = value
    return env


def _mca_env(text: str, path: Path, item: str) -> dict:
    params = {}
    for n, line in _lines(text):
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not MCA_NAME.match(key) or not value:
            raise UsageError(
                f"--config '{item}': {path}:{n}: '{line}' is not `name = value` (an MCA "
                f"parameter file, as Open MPI's mca-params.conf)"
            )
        params[key] = value
    if not params:
        raise UsageError(f"--config '{item}': {path} sets no MCA parameter")
    return mpilibs.get("openmpi").settings_env(params)


def _advice_env(text: str, path: Path, item: str, library_text: str) -> dict:
    """The variables of transport advice (`transport advise --json`)."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise UsageError(
            f"--config '{item}': {path} is not JSON ({exc}); a .json SPEC is the output of "
            f"`mpiscope transport advise --json`"
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("settings"), dict):
        raise UsageError(
            f"--config '{item}': {path} is not `mpiscope transport advise --json` output (it has no settings)"
        )
    chosen = (doc.get("verify") or {}).get("final")
    if chosen is None:
        chosen = _advice_for_library(doc["settings"], library_text, path, item)
    env = dict(chosen.get("env") or {})
    env.update(_mca_words_env(list(chosen.get("launcher_args") or []), path, item))
    if not env:
        raise UsageError(
            f"--config '{item}': the advice in {path} keeps {chosen.get('library')}'s "
            f"defaults: there is nothing to compare"
        )
    return env


def _advice_for_library(settings: dict, library_text: str, path: Path, item: str) -> dict:
    from mpiscope.transport.paths import family

    want = family(library_text)
    for entries in settings.values():
        for entry in entries:
            if want and str(entry.get("library", "")).startswith(want) and entry.get("measured"):
                return entry
    what = library_text.splitlines()[0] if library_text.strip() else "this MPI"
    raise UsageError(
        f"--config '{item}': the advice in {path} has no measured settings for {what} "
        f"(`transport advise` prints how to measure the library's own paths)"
    )


def _mca_words_env(words: list, path: Path, item: str) -> dict:
    """`--mca name value` launcher words as variables."""
    params = {}
    while words:
        if words[0] not in ("--mca", "-mca") or len(words) < 3:
            raise UsageError(
                f"--config '{item}': the advice in {path} has launcher words "
                f"'{' '.join(words)}' that are not `--mca NAME VALUE`"
            )
        params[words[1]] = words[2]
        words = words[3:]
    return mpilibs.get("openmpi").settings_env(params) if params else {}
