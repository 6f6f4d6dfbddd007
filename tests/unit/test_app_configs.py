# SPDX-License-Identifier: BSD-3-Clause
"""`--config NAME=SPEC` (app/configs.py): every kind of SPEC gives the
variables it says, the default comes first, and bad input is refused with
one line naming it."""

import json

import pytest

from mpiscope.app.configs import parse_config, parse_configs
from mpiscope.common.errors import UsageError
from mpiscope.tune.write import env_lines
from mpiscope.transport.settings import library_settings, thresholds
from mpiscope import mpilibs
from app_refusals import refused

OPEN_MPI = "Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4, May 26, 2022"
MPICH_UCX = "MPICH Version:      4.0.2\nMPICH Device:       ch4:ucx"


def write(path, text):
    path.write_text(text)
    return path


def test_default_and_the_baseline_first(tmp_path):
    env = write(tmp_path / "a.sh", "export A=1\n")
    configs = parse_configs([f"a={env}"])
    assert [(c.name, c.kind, c.env) for c in configs] == [("default", "default", {}), ("a", "env", {"A": "1"})]
    configs = parse_configs([f"a={env}", "default=default", "same=default"])
    assert [c.name for c in configs] == ["default", "a", "same"]  # an A/A pair is allowed
    assert configs[2].env == {} and configs[2].kind == "default"


def test_a_tunes_directory_is_its_env_sh(tmp_path):
    """The env.sh `mpiscope tune` writes (tune/write.py), for each library it tunes."""
    for key, settings in (("openmpi", {"coll_tuned_use_dynamic_rules": "1",
                                       "coll_tuned_dynamic_rules_filename": "/t/ompi-rules.conf"}),
                          ("mpich", {"MPIR_CVAR_COLL_SELECTION_TUNING_JSON_FILE": "/t/sel.json"})):
        d = tmp_path / key
        d.mkdir()
        lib = mpilibs.get(key)
        write(d / "env.sh", env_lines(lib, settings))
        c = parse_config(f"tuned={d}")
        assert (c.kind, c.source) == ("tune", str(d.resolve()))
        assert c.env == lib.settings_env(settings)


def test_environment_lines(tmp_path):
    f = write(tmp_path / "vars", "# comment\n\nexport A=1\nB='two words'\nexport C=\"x=y\"  # why\n"
                                 "D='$HOME'\n")
    assert parse_config(f"v={f}").env == {"A": "1", "B": "two words", "C": "x=y", "D": "$HOME"}


def test_an_mca_parameter_file(tmp_path):
    f = write(tmp_path / "mca-params.conf", "# Open MPI's form\nbtl_vader_single_copy_mechanism = cma\n"
                                            "coll_tuned_use_dynamic_rules=1\n")
    c = parse_config(f"mca={f}")
    assert c.kind == "mca"
    assert c.env == {"OMPI_MCA_btl_vader_single_copy_mechanism": "cma", "OMPI_MCA_coll_tuned_use_dynamic_rules": "1"}


def _advice(tmp_path, verify=None):
    """Advice as `transport advise --json` writes its settings: Open MPI 4's and
    UCX's own paths measured, single copy winning from 64 KiB."""
    t = thresholds("same socket", [])
    settings = library_settings(t, {"Open MPI 4": (65536, 32768), "UCX": (65536, 32768)})
    doc = {"schema_version": 1, "runs": ["r1", "r2"], "placements": ["same socket"],
           "settings": {"same socket": [s.to_dict() for s in settings]}}
    if verify:
        doc["verify"] = verify
    return write(tmp_path / "advice.json", json.dumps(doc))


def test_transport_advice_for_the_library(tmp_path):
    path = _advice(tmp_path)
    ompi = parse_config(f"cma={path}", OPEN_MPI)
    assert ompi.kind == "transport"
    assert ompi.env == {"OMPI_MCA_btl_vader_single_copy_mechanism": "cma", "OMPI_MCA_btl_vader_eager_limit": "32768"}
    assert parse_config(f"cma={path}", MPICH_UCX).env == {"UCX_TLS": "posix,cma,self", "UCX_RNDV_THRESH": "65536"}


def test_verified_advice_wins(tmp_path):
    final = {"library": "Open MPI 4.x (btl vader)", "lines": [], "note": "", "measured": True,
             "launcher_args": ["--mca", "btl_vader_single_copy_mechanism", "cma"], "env": {}}
    path = _advice(tmp_path, {"library": final["library"], "final": final})
    assert parse_config(f"cma={path}", OPEN_MPI).env == {"OMPI_MCA_btl_vader_single_copy_mechanism": "cma"}


@pytest.mark.parametrize("items, needle", [
    (["tuned"], "write NAME=SPEC"),
    (["=default"], "write NAME=SPEC"),
    (["a="], "write NAME=SPEC"),
    (["a b=default"], "the name 'a b' must be"),
    (["-x=default"], "the name '-x' must be"),
    ([f"{'n' * 41}=default"], "at most 40"),
    (["a=nosuch"], "nosuch is neither 'default' nor an existing file"),
    (["a=default", "a=default"], "name a is given more than once"),
    (["default={vars}"], "the name 'default' is the baseline"),
    ([], "give at least one --config"),
    (["default=default"], "give at least one --config"),
    (["a={empty_dir}"], "has no env.sh"),
    (["a={tune_nothing}"], "sets no variable"),
    (["a={bad_line}"], "bad_line:2: 'source x.sh' is not `export NAME=VALUE`"),
    (["a={two_vars}"], "one variable a line"),
    (["a={expands}"], "needs the shell to expand it"),
    (["a={unclosed}"], "No closing quotation"),
    (["a={bad_conf}"], "bad.conf:1: 'no equals here' is not `name = value`"),
    (["a={empty_conf}"], "sets no MCA parameter"),
    (["a={garbage_json}"], "is not JSON"),
    (["a={other_json}"], "is not `mpiscope transport advise --json` output"),
    (["a={advice_mpich}"], "has no measured settings for Open MPI v4.1.4"),
    (["a={advice_defaults}"], "keeps Open MPI 4.x (btl vader)'s defaults"),
    (["a={advice_words}"], "launcher words '--bind-to core' that are not `--mca NAME VALUE`"),
    (["a={binary}"], "is not UTF-8 text"),
])
def test_bad_configs_are_refused(tmp_path, items, needle):
    keep = {"library": "Open MPI 4.x (btl vader)", "lines": ["# keep the defaults"], "note": "",
            "measured": True, "launcher_args": [], "env": {}}
    files = {  # placeholder: (file name, text)
        "vars": ("vars", "A=1\n"), "bad_line": ("bad_line", "A=1\nsource x.sh\n"),
        "two_vars": ("two_vars", "export A=1 B=2\n"), "expands": ("expands", "A=$HOME/x\n"),
        "unclosed": ("unclosed", "A=\"x\n"), "bad_conf": ("bad.conf", "no equals here\n"),
        "empty_conf": ("empty.conf", "# none\n"), "garbage_json": ("garbage.json", "{not json"),
        "other_json": ("other.json", json.dumps({"schema_version": 1, "rows": []})),
        "advice_mpich": ("mpich.json", json.dumps({"settings": {"s": [dict(keep, library="MPICH ch4",
                                                                           env={"X": "1"})]}})),
        "advice_defaults": ("defaults.json", json.dumps({"settings": {}, "verify": {"final": keep}})),
        "advice_words": ("words.json", json.dumps({"settings": {}, "verify": {"final": dict(
            keep, launcher_args=["--bind-to", "core"])}})),
    }
    names = {key: write(tmp_path / name, text) for key, (name, text) in files.items()}
    (tmp_path / "binary").write_bytes(b"\xff\xfe\x00\x81")
    names["binary"] = tmp_path / "binary"
    (tmp_path / "empty_dir").mkdir()
    names["empty_dir"] = tmp_path / "empty_dir"
    (tmp_path / "tune_nothing").mkdir()
    write(tmp_path / "tune_nothing" / "env.sh", "# written by mpiscope tune: add to a job script\n")
    names["tune_nothing"] = tmp_path / "tune_nothing"
    with pytest.raises(UsageError, match=None) as err:
        parse_configs([i.format(**names) for i in items], OPEN_MPI)
    message = str(err.value)
    assert needle in message and "\n" not in message, message


# ------------------------------------------------------------ app compare's bad input

@pytest.mark.parametrize("argv, needle", [
    (["--config", "a={vars}", "--ci-width", "0", "--", "true"], "--ci-width must be above 0"),
    (["--config", "a={vars}", "--min-rounds", "4", "--max-rounds", "3", "--", "true"], "below --min-rounds"),
    (["--config", "a={vars}", "--profile", "x", "--", "true"], "--profile RUN and --tune DIR go together"),
    (["--config", "a={vars}", "--metric", "([", "--", "true"], "--metric '([' is not a regular expression"),
    (["--config", "a={vars}", "--metric", "Loop time", "--", "true"], "--metric 'Loop time' has no group"),
    (["--config", "a={vars}", "--ci-width", "-1", "--", "true"], "--ci-width must be a relative width"),
    (["--config", "a={vars}", "--time-budget", "0", "--", "true"], "--time-budget must be a positive number of seconds"),
    (["--config", "a={vars}", "--warmup", "-1", "--", "true"], "--warmup"),
    (["--config", "a={vars}", "--noise", "5", "--", "true"], "for percent write 5%"),
    (["--config", "a={vars}", "--alpha", "1.5", "--", "true"], "--alpha must be between 0 and 1"),
    (["--config", "a={vars}", "--resamples", "1", "--", "true"], "--resamples"),
    (["--config", "a={vars}", "--launch-timeout", "0", "--", "true"], "--launch-timeout"),
    (["--config", "a={vars}", "--label", "latest", "--", "true"], "--label"),
])
def test_app_compare_refuses_bad_options_from_the_command_line_alone(argv, needle, tmp_path, monkeypatch, capsys):
    refused(argv, needle, tmp_path, monkeypatch, capsys)
