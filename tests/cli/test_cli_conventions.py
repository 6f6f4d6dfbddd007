# SPDX-License-Identifier: BSD-3-Clause
"""Command-line conventions: --version, --exclude, --label, `runs rm`, and
defaults from MPISCOPE_OUT and the config files (`config show`)."""

import json
import os
import subprocess
import sys
from importlib.metadata import version

import duckdb
import pytest

from mpiscope.cli import config_defaults
from mpiscope.cli.main import build_parser
from mpiscope.cli.run_options import measure_request
from mpiscope.measure.plan import make_plan
from mpiscope.measure import benchmarks
from mpiscope.store import catalog
from mpiscope.store.rawfile import SUPPORTED_VERSIONS
from rawgen import context_for
from runcli import mpiscope, run_dirs

IDS = ("20240301-090000-aaaa", "20240302-090000-bbbb", "20240303-090000-cccc")


def _fake_runs(out, labels=(None, "baseline", None)):
    for i, (run_id, label) in enumerate(zip(IDS, labels)):
        run = out / run_id
        run.mkdir(parents=True)
        ctx = context_for(run_id=run_id, created=f"2024-03-0{i + 1}T09:00:00+00:00",
                          benches=["pingpong"], label=label)
        (run / "context.json").write_text(json.dumps(ctx))
    return out


# ------------------------------------------------------------------ --version

def test_version_prints_package_and_format_versions():
    p = mpiscope("--version")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith(f"mpiscope {version('mpiscope')} ")
    assert f"raw files: schema {', '.join(map(str, SUPPORTED_VERSIONS))}" in p.stdout
    assert "--version" in mpiscope("--help").stdout


# ---------------------------------------------------- --exclude (plan only)

def _plan(*argv):
    return make_plan(measure_request(build_parser("run").parse_args(["run", *argv])))


def test_exclude_leaves_benchmarks_out_of_the_suite_and_the_bench_list():
    plan = _plan("-n", "2", "--exclude", "bw,ring")
    assert plan.benches == [b for b in benchmarks.SUITES["quick"]["bench"] if b not in ("bw", "ring")]
    assert _plan("-n", "2", "--bench", "pingpong,bw,allreduce", "--exclude", "bw").benches == \
        ["pingpong", "allreduce"]
    # A benchmark the list does not hold is no error; an empty list excludes nothing.
    assert _plan("-n", "2", "--bench", "pingpong", "--exclude", "multipair").benches == ["pingpong"]
    assert _plan("-n", "2", "--bench", "pingpong", "--exclude", "").benches == ["pingpong"]


@pytest.mark.parametrize("exclude, needle", [
    ("pingpang", "--exclude: unknown benchmark 'pingpang'; choose from: "),
    ("pingpong,bw", "leaves no benchmark to measure"),
])
def test_bad_exclude_exits_2_and_stores_nothing(tmp_path, exclude, needle):
    p = mpiscope("run", "-n", 2, "--bench", "pingpong,bw", "--exclude", exclude, out=tmp_path)
    assert p.returncode == 2 and needle in p.stderr, p.stderr
    if "unknown" in needle:
        assert "pingpong" in p.stderr and "allreduce" in p.stderr  # the valid names
    assert run_dirs(tmp_path) == []


@pytest.mark.parametrize("label", ["latest", "  ", "two\nlines"])
def test_bad_label_exits_2(tmp_path, label):
    p = mpiscope("run", "-n", 2, "--bench", "pingpong", "--label", label, out=tmp_path)
    assert p.returncode == 2 and "--label" in p.stderr, p.stderr
    assert run_dirs(tmp_path) == []


# ------------------------------------- a real run: config, --exclude, --label


# ------------------------------------------------------------------- runs rm

def test_runs_rm_deletes_directories_and_catalog_entries(tmp_path):
    out = _fake_runs(tmp_path / "runs")
    assert len(catalog.list_runs(out)) == 3  # the catalog knows all three
    p = mpiscope("runs", "rm", IDS[0], "baseline", "--out", out)  # an id and a label
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [f"removed {IDS[0]}", f"removed {IDS[1]}"]
    # (.catalog.lock: the lock by which processes take turns on the catalog)
    assert sorted(d.name for d in out.iterdir()) == [".catalog.lock", IDS[2], "catalog.duckdb"]
    con = duckdb.connect(str(out / "catalog.duckdb"))
    assert con.execute("SELECT run_id FROM runs").fetchall() == [(IDS[2],)]
    con.close()


def test_runs_rm_with_out_before_rm(tmp_path):
    out = _fake_runs(tmp_path / "runs")
    p = mpiscope("runs", "--out", out, "rm", "latest")
    assert p.returncode == 0 and p.stdout == f"removed {IDS[2]}\n", p.stderr
    assert not (out / IDS[2]).exists()


def test_runs_rm_deletes_nothing_when_one_run_is_unknown(tmp_path):
    out = _fake_runs(tmp_path / "runs")
    p = mpiscope("runs", "rm", IDS[0], "nope", out=out)
    assert p.returncode == 2 and "no run 'nope'" in p.stderr, p.stderr
    assert all((out / run_id).is_dir() for run_id in IDS)
    assert p.stdout == ""


def test_runs_rm_refuses_a_run_outside_the_output_root(tmp_path):
    out = _fake_runs(tmp_path / "runs")
    elsewhere = _fake_runs(tmp_path / "elsewhere")
    p = mpiscope("runs", "rm", elsewhere / IDS[0], out=out)
    assert p.returncode == 2 and "not a run under the output root" in p.stderr, p.stderr
    assert (elsewhere / IDS[0]).is_dir()


def test_runs_rm_needs_a_run(tmp_path):
    p = mpiscope("runs", "rm", out=tmp_path)
    assert p.returncode == 2 and "RUN" in p.stderr


# ----------------------------------------------------------------- settings


def test_mpiscope_out_lists_that_root(clean_env, tmp_path):
    out = _fake_runs(tmp_path / "runs")
    p = mpiscope("runs", cwd=clean_env["work"], env={**clean_env["env"], "MPISCOPE_OUT": str(out)})
    assert p.returncode == 0 and all(run_id in p.stdout for run_id in IDS), p.stderr


def test_config_show_names_every_source(clean_env):
    clean_env["user"].write_text('[run]\nnp = 3\nmpi = "mpich"\n[report]\njobs = 0\n')
    clean_env["project"].write_text('[run]\nnp = 4\n')
    p = mpiscope("config", "show", "--json", cwd=clean_env["work"],
                 env={**clean_env["env"], "MPISCOPE_OUT": "/tmp/env-out"})
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    got = {s["key"]: (s["value"], s["source"]) for s in doc["settings"]}
    assert got["out"] == ("/tmp/env-out", "MPISCOPE_OUT")
    assert got["run.np"] == (4, str(clean_env["project"]))
    assert got["run.mpi"] == ("mpich", str(clean_env["user"]))
    assert got["report.jobs"] == (0, str(clean_env["user"]))
    assert got["run.timer"] == ("tsc", "built-in")
    assert set(got) == {s.key for s in config_defaults.SETTINGS}
    assert doc["files"]["user"] == {"path": str(clean_env["user"]), "exists": True}
    text = mpiscope("config", "show", cwd=clean_env["work"], env=clean_env["env"]).stdout
    line = next(l for l in text.splitlines() if l.startswith("run.np "))
    assert line.split() == ["run.np", "4", str(clean_env["project"])]
    assert mpiscope("config", "get", "run.mpi", cwd=clean_env["work"],
                    env=clean_env["env"]).stdout == "mpich\n"


def test_mpiscope_config_replaces_the_user_file(clean_env, tmp_path):
    clean_env["user"].write_text('[run]\nnp = 3\n')
    other = tmp_path / "other.toml"
    other.write_text('[run]\nnp = 7\n')
    env = {**clean_env["env"], "MPISCOPE_CONFIG": str(other)}
    assert mpiscope("config", "get", "run.np", cwd=clean_env["work"], env=env).stdout == "7\n"
    p = mpiscope("config", "show", cwd=clean_env["work"],
                 env={**env, "MPISCOPE_CONFIG": str(tmp_path / "missing.toml")})
    assert p.returncode == 2 and "MPISCOPE_CONFIG names" in p.stderr and "missing.toml" in p.stderr


@pytest.mark.parametrize("text, needles", [
    ('[run]\nnps = 3\n', ["unknown setting 'run.nps'", "run.np"]),
    ('np = 3\n', ["unknown setting 'np'"]),
    ('[run]\nnp = "4"\n', ["'run.np' must be an integer"]),
    ('[run]\nci-width = "wide"\n', ["'run.ci-width' must be a number"]),
    ('[run]\nmpi = "lam"\n', ["'run.mpi' = 'lam'", "--mpi takes one of openmpi, mpich"]),
    ('[report]\njobs = -1\n', ["'report.jobs' = -1 is refused by --jobs"]),
    ('[run\n', ["not valid TOML", "line 1"]),
    ('[run]\nmpi = "mpich\xff"\n'.encode("latin-1"), ["is not UTF-8 text"]),
])
def test_bad_config_file_exits_2_naming_file_and_key(clean_env, text, needles):
    if isinstance(text, bytes):  # not UTF-8
        clean_env["project"].write_bytes(text)
    else:
        clean_env["project"].write_text(text)
    p = mpiscope("config", "show", cwd=clean_env["work"], env=clean_env["env"])
    assert p.returncode == 2, (p.stdout, p.stderr)
    for needle in [str(clean_env["project"]), *needles]:
        assert needle in p.stderr, p.stderr


def test_mpicc_on_the_command_line_wins_over_a_files_mpi(clean_env, tmp_path):
    # `mpi` and `--mpicc` choose the same thing: the command line's choice wins.
    clean_env["project"].write_text('[run]\nmpi = "mpich"\n')
    p = mpiscope("run", "-n", 2, "--bench", "pingpong", "--mpicc", "mpicc.openmpi", "--dry-run",
                 out=tmp_path / "runs", cwd=clean_env["work"], env=clean_env["env"])
    assert p.returncode == 0, p.stderr
    assert "mpirun.openmpi" in p.stdout and "mpiexec" not in p.stdout
    p = mpiscope("run", "-n", 2, "--bench", "pingpong", "--dry-run", out=tmp_path / "runs",
                 cwd=clean_env["work"], env=clean_env["env"])
    assert p.returncode == 0 and "mpiexec" in p.stdout, p.stderr


def test_a_closed_pipe_ends_a_command_quietly(tmp_path):
    # `mpiscope ... | head -1`: the reader leaves; no error, no traceback.
    p = subprocess.run(f"{sys.executable} -m mpiscope.cli config show | head -c 1", shell=True,
                       capture_output=True, text=True, cwd=tmp_path)
    assert p.stderr == "", p.stderr


def test_bad_run_setting_stops_the_run_before_anything_is_stored(clean_env, tmp_path):
    clean_env["project"].write_text('[run]\nsync = "sometimes"\n')
    p = mpiscope("run", "-n", 2, "--bench", "pingpong", out=tmp_path / "runs",
                 cwd=clean_env["work"], env=clean_env["env"])
    assert p.returncode == 2 and "'run.sync' = 'sometimes'" in p.stderr, p.stderr
    assert run_dirs(tmp_path / "runs") == []


def test_config_get_unknown_key(clean_env):
    p = mpiscope("config", "get", "run.color", cwd=clean_env["work"], env=clean_env["env"])
    assert p.returncode == 2 and "unknown setting 'run.color'" in p.stderr and "run.np" in p.stderr


def test_no_config_file_no_toml_parser(clean_env):
    # Start-up: without a file to read, tomllib is never imported.
    code = ("import sys; from mpiscope.cli import config_defaults; config_defaults.effective(); "
            "print('tomllib' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=clean_env["work"], env={**os.environ, **clean_env["env"]})
    assert p.stdout.strip() == "False", p.stderr
