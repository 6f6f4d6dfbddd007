# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: malformed input to every command, as a new user would type
it, and how a refusal is checked: exit code 2 and one line naming the input
and the fix, without a traceback and without creating anything under --out.

The cases are refused through the CLI's own entry point (`mpiscope.cli.main.main`,
what the `mpiscope` script calls) in the test's process. Most are refused from
the command line and the files it names alone (tests/unit/test_bad_input.py);
those in ASKS_MPI are refused once the MPI library was asked (its compiler
wrapper identifies it, the engine's description names the benchmarks, the
simulator is built), which starts processes (tests/cli/test_bad_input_mpi.py).
Refusals happen before any MPI launch: no case starts a rank.
"""

import os
import shutil
import time
from pathlib import Path

from analysis_runs import build_run
from mpiscope.cli.main import main
from mpiscope.store import catalog

PID = os.getpid() % 100000
CL = f"bad{PID}"  # a cluster name no test creates

# Files a case can name as {name}: written into the case's directory.
FILES = {
    "garbage_hosts": "localhost slots=2\n%% garbage ((\n",
    "word_hosts": "%%\n",
    "hydra_garbage": "localhost:2\n%% garbage ((\n",
    "abc_slots": "localhost slots=abc\n",
    "zero_slots": "localhost slots=0\n",
    "empty_hosts": "",
    "comment_hosts": "# nothing here\n\n",
    "hydra_abc": "localhost:abc\n",
    "unknown_key": "localhost foo=1\n",
    "ok_hosts": "localhost slots=2\nlocalhost slots=2\n",
    "two_hosts": "a slots=1\nb slots=1\n",
    "pairs_three": "0 1 2\n",
    "pairs_word": "0 x\n",
    "pairs_range": "0 9\n",
    "pairs_twice": "0 1\n1 0\n",
    "pairs_empty": "# none\n",
    "afile": "not a directory\n",
    "machine_text": "not json",
    "machine_noformat": '{"alpha": 1}',
    "machine_version": '{"format": "mpiscope-machine-model", "version": 99}',
    "config_bad_toml": "out = [\n",
    "config_unknown": "colour = 'blue'\n",
    "config_np_text": "[run]\nnp = 'eight'\n",
    "config_np_zero": "[run]\nnp = 0\n",
    "config_out_file": "out = 'afile'\n",
    "exists_json": "{}",
}
BINARY = {"binary_hosts": b"\xff\xfe\x00garbage\x00\n"}

RUN = ["run", "--bench", "pingpong", "--sizes", "8"]
PREDICT = ["model", "predict", "--bench", "allreduce", "-p", "4"]

# (id, argv, words the message must hold). {name}: a file above; {out}: a fresh
# output root (must stay absent); {root}: a root holding two stored runs.
CASES = [
    # ---- mpiscope run: rank counts and placement
    ("np-zero", [*RUN, "-n", "0"], ["-n/--np must be at least 1"]),
    ("np-negative", [*RUN, "-n", "-3"], ["-n/--np must be at least 1"]),
    ("np-word", [*RUN, "-n", "abc"], ["invalid int value: 'abc'"]),
    ("np-fraction", [*RUN, "-n", "2.5"], ["invalid int value: '2.5'"]),
    ("np-beyond-slots", [*RUN, "-n", "100000"], ["-n 100000", "slot(s)", "--hostfile"]),
    ("np-beyond-hostfile", [*RUN, "-n", "1000", "--hostfile", "{ok_hosts}"],
     ["the hostfile lists 4 slot(s)"]),
    ("np-one-pingpong", [*RUN, "-n", "1"], ["needs at least 2 ranks"]),
    ("np-odd-multipair", ["run", "-n", "3", "--bench", "multipair", "--sizes", "8"], ["even -n"]),
    ("nodes-zero", [*RUN, "-N", "0"], ["-N/--nodes must be at least 1"]),
    ("ppn-zero", [*RUN, "--ppn", "0"], ["--ppn must be at least 1"]),
    ("nodes-uneven", [*RUN, "-N", "2", "-n", "3"], ["do not split evenly"]),
    ("nodes-ppn-np", [*RUN, "-N", "2", "--ppn", "2", "-n", "5"], ["is not -N 2 nodes x --ppn 2"]),
    ("nodes-beyond-hostfile", [*RUN, "-N", "3", "--hostfile", "{two_hosts}"],
     ["lists only 2 host(s)"]),
    ("nodes-and-mapping", [*RUN, "-N", "2", "--launcher-args", "--map-by node"],
     ["give one or the other"]),
    ("launcher-args-quote", [*RUN, "--launcher-args", 'a "b'], ["--launcher-args", "quote"]),
    ("launcher-choice", [*RUN, "--launcher", "qsub"], ["invalid choice: 'qsub'"]),
    ("mpicc-missing", [*RUN, "--mpicc", "/nonexistent/mpicc"], ["/nonexistent/mpicc"]),
    # ---- hostfiles, in every syntax, and those --launcher-args name
    ("hostfile-missing", [*RUN, "--hostfile", "/nonexistent/hosts"], ["does not exist"]),
    ("hostfile-garbage", [*RUN, "--hostfile", "{garbage_hosts}"], [":2:", "%% garbage (("]),
    ("hostfile-word", [*RUN, "--hostfile", "{word_hosts}"], [":1:", "'%%' is not a host name"]),
    ("hostfile-slots-abc", [*RUN, "--hostfile", "{abc_slots}"], [":1:", "positive integer"]),
    ("hostfile-slots-zero", [*RUN, "--hostfile", "{zero_slots}"], [":1:", "positive integer"]),
    ("hostfile-empty", [*RUN, "--hostfile", "{empty_hosts}"], ["lists no hosts"]),
    ("hostfile-comments", [*RUN, "--hostfile", "{comment_hosts}"], ["lists no hosts"]),
    ("hostfile-hydra-abc", [*RUN, "--hostfile", "{hydra_abc}"], [":1:", "positive integer"]),
    ("hostfile-unknown-key", [*RUN, "--hostfile", "{unknown_key}"], [":1:", "foo=1"]),
    ("hostfile-binary", [*RUN, "--hostfile", "{binary_hosts}"], ["is not UTF-8"]),
    ("hostfile-directory", [*RUN, "--hostfile", "{dir}"], ["is a directory"]),
    ("hostfile-dev-zero", [*RUN, "--hostfile", "/dev/zero"], ["/dev/zero", "is a character device"]),
    ("weights-dev-zero", ["tune", "-n", "2", "--coll", "allreduce", "--weights", "/dev/zero", "-o", "{out}/t"],
     ["--weights", "is a character device"]),
    ("machine-dev-zero", [*PREDICT, "--machine", "/dev/zero"], ["--machine", "is a character device"]),
    # ---- counts that would build without end
    ("launches-huge", [*RUN, "--dry-run", "--launches", "18446744073709551617"],
     ["--launches must be at most 10000"]),
    ("sizes-billion", ["run", "--methods", "osu", "--sizes", "1-1G:+1"],
     ["'1-1G:+1' gives 1,073,741,824 sizes", "10,000"]),
    ("output-trailing-slash", ["report", "-o", "{dir}/new/", "--out", "{root}"],
     ["ending in '/' is a directory"]),
    ("mpicc-echo", ["build", "--mpicc", "/bin/echo"], ["/bin/echo is not an MPI compiler"]),
    ("launcher-hostfile-garbage", [*RUN, "--launcher-args", "--hostfile {garbage_hosts}"],
     [":2:", "%% garbage (("]),
    ("launcher-hostfile-eq", [*RUN, "--launcher-args", "--hostfile={abc_slots}"],
     ["positive integer"]),
    ("launcher-machinefile", [*RUN, "--launcher-args", "-machinefile {word_hosts}"],
     ["is not a host name"]),
    ("launcher-hostfile-missing", [*RUN, "--launcher-args", "--hostfile /nonexistent/h"],
     ["does not exist"]),
    ("launcher-hostfile-hydra-form", [*RUN, "--launcher-args", "--hostfile {hydra_abc}"],
     ["is MPICH syntax", "slots=N"]),
    ("hydra-f-openmpi-form", [*RUN, "--mpi", "mpich", "--launcher-args", "-f {ok_hosts}"],
     ["is Open MPI syntax", "HOST:N"]),
    ("hydra-f-garbage", [*RUN, "--mpi", "mpich", "--launcher-args", "-f {hydra_garbage}"],
     [":2:", "%% garbage (("]),
    # ---- benchmarks and sizes
    ("bench-empty", ["run", "--bench", ""], ["--bench '' lists no benchmark"]),
    ("bench-commas", ["run", "--bench", ",,"], ["lists no benchmark"]),
    ("bench-unknown", ["run", "--bench", "pingpang"], ["unknown benchmark 'pingpang'"]),
    ("bench-twice", ["run", "--bench", "pingpong,pingpong"], ["lists a benchmark twice"]),
    ("exclude-unknown", [*RUN, "--exclude", "nosuch"], ["--exclude: unknown benchmark"]),
    ("exclude-all", [*RUN, "--exclude", "pingpong"], ["leaves no benchmark"]),
    ("suite-unknown", ["run", "--suite", "huge"], ["invalid choice: 'huge'"]),
    ("sizes-word", ["run", "--bench", "pingpong", "--sizes", "abc"], ["'abc' is not a size"]),
    ("sizes-empty", ["run", "--bench", "pingpong", "--sizes", ""], ["--sizes"]),
    ("sizes-negative", ["run", "--bench", "pingpong", "--sizes", "-5"], ["-5"]),
    ("sizes-reversed", ["run", "--bench", "pingpong", "--sizes", "4K-1"], ["4K-1"]),
    ("sizes-step-one", ["run", "--bench", "pingpong", "--sizes", "1-4M:x1"], ["1-4M:x1"]),
    ("sizes-unit", ["run", "--bench", "pingpong", "--sizes", "8Q"], ["8Q"]),
    ("sizes-huge", ["run", "--bench", "pingpong", "--sizes", "64G"], ["64G"]),
    # ---- numbers
    ("reps-min-zero", [*RUN, "--reps-min", "0"], ["--reps-min must be at least 1"]),
    ("reps-max-zero", [*RUN, "--reps-max", "0"], ["--reps-max must be at least 1"]),
    ("reps-crossed", [*RUN, "--reps-min", "50", "--reps-max", "10"], ["--reps-min (50) is larger"]),
    ("reps-word", [*RUN, "--reps-min", "ten"], ["invalid int value: 'ten'"]),
    ("ci-width-negative", [*RUN, "--ci-width", "-0.1"], ["--ci-width"]),
    ("ci-width-nan", [*RUN, "--ci-width", "nan"], ["--ci-width"]),
    ("time-budget-negative", [*RUN, "--time-budget", "-1"], ["--time-budget must be a positive"]),
    ("time-budget-zero", [*RUN, "--time-budget", "0"], ["--time-budget must be a positive"]),
    ("time-budget-nan", [*RUN, "--time-budget", "nan"], ["--time-budget must be a positive"]),
    ("time-budget-inf", [*RUN, "--time-budget", "inf"], ["--time-budget must be a positive"]),
    ("warmup-negative", [*RUN, "--warmup", "-1"], ["--warmup must be at least 0"]),
    ("launches-zero", [*RUN, "--launches", "0"], ["--launches must be at least 1"]),
    ("clock-inject-word", [*RUN, "--clock-inject", "fifty"], ["MAX_OFFSET_US:MAX_DRIFT_PPM"]),
    ("clock-inject-three", [*RUN, "--clock-inject", "1:2:3"], ["MAX_OFFSET_US:MAX_DRIFT_PPM"]),
    ("clock-inject-negative", [*RUN, "--clock-inject=-1:5"], ["MAX_OFFSET_US:MAX_DRIFT_PPM"]),
    ("refine-threshold", [*RUN, "--refine", "--refine-threshold", "0"], ["--refine-threshold"]),
    ("refine-max", [*RUN, "--refine", "--refine-max", "0"], ["--refine-max"]),
    ("sync-choice", [*RUN, "--sync", "sometimes"], ["invalid choice: 'sometimes'"]),
    ("timer-choice", [*RUN, "--timer", "sundial"], ["invalid choice: 'sundial'"]),
    ("seed-word", [*RUN, "--seed", "x"], ["invalid int value: 'x'"]),
    ("queue-depths", ["run", "--bench", "flood", "--queue-depths", "abc"], ["--queue-depths"]),
    ("flood-bytes", ["run", "--bench", "flood", "--flood-bytes", "lots"], ["lots"]),
    ("algo-unknown", ["run", "-n", "4", "--bench", "allreduce", "--algo", "nosuch"], ["nosuch"]),
    ("segment-word", ["run", "-n", "4", "--bench", "bcast", "--segment", "big"], ["big"]),
    # ---- pairs files
    ("pairs-needed", ["run", "-n", "4", "--bench", "pairs"], ["needs --pairs FILE"]),
    ("pairs-missing", ["run", "-n", "4", "--bench", "pairs", "--pairs", "/nonexistent/p"],
     ["does not exist"]),
    ("pairs-three", ["run", "-n", "4", "--bench", "pairs", "--pairs", "{pairs_three}"],
     [":1:", "two rank numbers"]),
    ("pairs-word", ["run", "-n", "4", "--bench", "pairs", "--pairs", "{pairs_word}"],
     [":1:", "two rank numbers"]),
    ("pairs-range", ["run", "-n", "4", "--bench", "pairs", "--pairs", "{pairs_range}"],
     ["rank 9 is out of range"]),
    ("pairs-twice", ["run", "-n", "4", "--bench", "pairs", "--pairs", "{pairs_twice}"],
     ["listed twice"]),
    ("pairs-empty", ["run", "-n", "4", "--bench", "pairs", "--pairs", "{pairs_empty}"],
     ["lists no pairs"]),
    # ---- labels, output root, clusters
    ("label-empty", [*RUN, "--label", ""], ["--label"]),
    ("label-latest", [*RUN, "--label", "latest"], ["not 'latest'"]),
    ("label-newline", [*RUN, "--label", "a\nb"], ["one line of text"]),
    ("out-a-file", [*RUN, "--out", "{afile}"], ["is a file, not a directory"]),
    ("out-empty", [*RUN, "--out", ""], ["argument --out: an empty path"]),
    ("hostfile-empty-path", [*RUN, "--hostfile", ""], ["argument --hostfile: an empty path"]),
    ("pairs-empty-path", ["run", "-n", "4", "--bench", "pairs", "--pairs", ""],
     ["argument --pairs: an empty path"]),
    ("mpirun-empty", [*RUN, "--mpirun", ""], ["argument --mpirun: an empty path"]),
    ("mpicc-empty", [*RUN, "--mpicc", ""], ["argument --mpicc: an empty path"]),
    ("out-below-a-file", [*RUN, "--out", "{afile}/runs"], ["is a file, not a directory"]),
    ("cluster-with-hostfile", [*RUN, "--cluster", CL, "--hostfile", "{ok_hosts}"],
     ["drop --launcher, --hostfile and --mpirun"]),
    ("cluster-slash", [*RUN, "--cluster", "a/b"], ["cluster name 'a/b'"]),
    ("cluster-newline", [*RUN, "--cluster", "name\n"], ["cluster name 'name\\n'"]),
    ("cluster-unknown", [*RUN, "--cluster", CL], [f"no emulated cluster '{CL}'"]),
    ("cluster-nodes", [*RUN, "--cluster", CL, "-N", "2"], ["drop -N/--nodes"]),
    # ---- mpiscope sbatch takes the same checks
    ("sbatch-np", ["sbatch", "-n", "0", "--bench", "pingpong"], ["-n/--np must be at least 1"]),
    ("sbatch-bench-empty", ["sbatch", "--bench", ""], ["lists no benchmark"]),
    ("sbatch-time-budget", ["sbatch", "--bench", "pingpong", "--time-budget", "-1"],
     ["--time-budget"]),
    ("sbatch-hostfile", ["sbatch", "--bench", "pingpong", "--hostfile", "{garbage_hosts}"],
     ["%% garbage (("]),
    # ---- reading runs: references, flags, output files
    ("show-unknown", ["show", "nosuch", "--out", "{root}"], ["no run 'nosuch'"]),
    ("show-ambiguous", ["show", "2024", "--out", "{root}"], ["ambiguous"]),
    ("show-empty-root", ["show", "--out", "{out}"], ["no runs under"]),
    ("show-out-file", ["show", "--out", "{afile}"], ["is a file, not a directory"]),
    ("runs-out-file", ["runs", "--out", "{afile}"], ["is a file, not a directory"]),
    ("show-empty-ref", ["show", "", "--out", "{root}"], ["an empty RUN names no run"]),
    ("runs-rm-empty-ref", ["runs", "rm", "", "--out", "{root}"], ["an empty RUN names no run"]),
    ("compare-empty-ref", ["compare", "", "latest", "--out", "{root}"], ["an empty RUN"]),
    ("export-output-empty", ["export", "--format", "csv", "-o", "", "--out", "{root}"],
     ["argument -o/--output: an empty path"]),
    ("report-output-empty", ["report", "-o", "", "--out", "{root}"], ["an empty path"]),
    ("timechart-output-empty", ["timechart", "--bench", "allreduce", "--algo", "ring", "--size",
                                "8", "-o", "", "--out", "{root}"], ["an empty path"]),
    ("loggp-save-empty", ["loggp", "--save", "", "--out", "{root}"], ["--save: an empty path"]),
    ("show-not-a-run", ["show", "{dir}", "--out", "{root}"], ["no run"]),
    ("export-format", ["export", "--format", "xml", "--out", "{root}"], ["invalid choice: 'xml'"]),
    ("export-osu-bench", ["export", "--format", "osu", "--bench", "nosuch", "--out", "{root}"],
     ["nosuch"]),
    ("export-output-dir", ["export", "--format", "csv", "-o", "/nonexistent/d/x.csv",
                           "--out", "{root}"], ["/nonexistent/d"]),
    ("export-output-is-dir", ["export", "--format", "csv", "-o", "{dir}", "--out", "{root}"],
     ["is a directory"]),
    ("fit-min-points", ["fit", "--min-points", "0", "--out", "{root}"], ["--min-points"]),
    ("fit-resamples", ["fit", "--resamples", "1", "--out", "{root}"], ["--resamples must be"]),
    ("fit-seed", ["fit", "--seed", "-1", "--out", "{root}"], ["--seed must be >= 0"]),
    ("fit-bench", ["fit", "--bench", "nosuch", "--out", "{root}"], ["nosuch"]),
    ("compare-unknown", ["compare", "20240101-000000-aaaa", "nosuch", "--out", "{root}"],
     ["no run 'nosuch'"]),
    ("compare-noise", ["compare", "20240101-000000-aaaa", "20240102-000000-bbbb", "--noise",
                       "abc", "--out", "{root}"], ["--noise"]),
    ("compare-alpha", ["compare", "20240101-000000-aaaa", "20240102-000000-bbbb", "--alpha",
                       "2", "--out", "{root}"], ["--alpha"]),
    ("compare-size", ["compare", "20240101-000000-aaaa", "20240102-000000-bbbb", "--size",
                      "abc", "--out", "{root}"], ["'abc' is not a size"]),
    ("loggp-save-exists", ["loggp", "--save", "{exists_json}", "--out", "{root}"],
     ["exists; give a new file name"]),
    ("layers-min-points", ["layers", "--min-points", "0", "--out", "{root}"], ["--min-points"]),
    ("report-output-dir", ["report", "-o", "/nonexistent/d/r.html", "--out", "{root}"],
     ["/nonexistent/d"]),
    ("report-jobs", ["report", "--jobs", "-1", "--out", "{root}"], ["--jobs"]),
    ("report-unknown", ["report", "nosuch", "--out", "{root}"], ["no run 'nosuch'"]),
    ("timechart-no-bench", ["timechart", "--out", "{root}"], ["--bench"]),
    ("timechart-rep", ["timechart", "--bench", "allreduce", "--algo", "ring", "--size", "8",
                       "--rep", "-1", "--out", "{root}"], ["--rep"]),
    ("runs-rm-unknown", ["runs", "rm", "nosuch", "--out", "{root}"], ["no run 'nosuch'"]),
    # ---- mpiscope import: another tool's file, an empty one, a directory, a bad --date
    ("import-format", ["import", "csv", "{ok_hosts}", "--out", "{out}"], ["invalid choice: 'csv'"]),
    ("import-foreign", ["import", "osu", "{ok_hosts}", "--date", "2024-03-01", "--out", "{out}"],
     ["not an OSU Micro-Benchmarks output"]),
    ("import-empty", ["import", "imb", "{empty_hosts}", "--out", "{out}"], ["is empty"]),
    ("import-directory", ["import", "reframe", "{dir}", "--out", "{out}"], ["is a directory"]),
    ("import-date", ["import", "osu", "{ok_hosts}", "--date", "soon", "--out", "{out}"],
     ["--date 'soon'"]),
    ("runs-ingest-unknown", ["runs", "ingest", "nosuch", "--out", "{root}"], ["no run 'nosuch'"]),
    ("runs-ingest-no-raw", ["runs", "ingest", "20240102-000000-bbbb", "--out", "{root}"],
     ["no raw/ directory"]),
    # ---- cost models and machine-model files
    ("predict-bench", ["model", "predict", "--bench", "nosuch", "-p", "4"], ["nosuch"]),
    ("predict-np", ["model", "predict", "--bench", "allreduce", "-p", "0"], ["-p"]),
    ("predict-size", [*PREDICT, "--alpha", "1us", "--beta", "1ns/B", "--size", "abc"],
     ["'abc' is not a size"]),
    ("predict-alpha", [*PREDICT, "--size", "8", "--alpha", "abc", "--beta", "1ns/B"],
     ["abc"]),
    ("predict-beta", [*PREDICT, "--size", "8", "--alpha", "1us", "--beta=-1us/B"],
     ["-1us/B"]),
    ("machine-empty", [*PREDICT, "--size", "8", "--machine", ""], ["--machine: an empty path"]),
    ("machine-missing", [*PREDICT, "--size", "8", "--machine",
                         "/nonexistent/m.json"], ["does not exist"]),
    ("machine-not-json", [*PREDICT, "--size", "8", "--machine",
                          "{machine_text}"], ["is not valid JSON"]),
    ("machine-no-format", [*PREDICT, "--size", "8", "--machine",
                           "{machine_noformat}"], ["lacks them"]),
    ("machine-version", [*PREDICT, "--size", "8", "--machine",
                         "{machine_version}"], ["version"]),
    ("predict-range", [*PREDICT, "--alpha", "1us", "--beta", "1ns/B", "--crossover",
                       "--range", "5-1"], ["5-1"]),
    ("check-machine", ["model", "check", "--machine", "{machine_text}", "--out", "{root}"],
     ["is not valid JSON"]),
    # ---- emulated clusters: names and specs (refused before anything is created)
    ("up-newline", ["cluster", "up", "name\n", "--hosts", "2"], ["cluster name 'name\\n'"]),
    ("up-slash", ["cluster", "up", "a/b", "--hosts", "2"], ["cluster name 'a/b'"]),
    ("up-dotdot", ["cluster", "up", "..", "--hosts", "2"], ["cluster name '..'"]),
    ("up-space", ["cluster", "up", "a b", "--hosts", "2"], ["cluster name 'a b'"]),
    ("up-long", ["cluster", "up", "a" * 30, "--hosts", "2"], ["at most 20"]),
    ("up-upper", ["cluster", "up", "Abc", "--hosts", "2"], ["lower-case"]),
    ("up-empty", ["cluster", "up", "", "--hosts", "2"], ["cluster name ''"]),
    ("up-hosts", ["cluster", "up", CL, "--hosts", "1"], ["--hosts must be at least 2"]),
    ("up-slots", ["cluster", "up", CL, "--hosts", "2", "--slots", "0"], ["--slots"]),
    ("up-rate", ["cluster", "up", CL, "--hosts", "2", "--link", "rate=abc"], ["not a rate"]),
    ("up-delay", ["cluster", "up", CL, "--hosts", "2", "--link", "delay=20s"], ["more than 10 s"]),
    ("up-loss", ["cluster", "up", CL, "--hosts", "2", "--link", "loss=100%"], ["every packet"]),
    ("up-key", ["cluster", "up", CL, "--hosts", "2", "--link", "colour=red"], ["colour=red"]),
    ("up-link-empty", ["cluster", "up", CL, "--hosts", "2", "--link", ""], ["is empty"]),
    ("up-switches", ["cluster", "up", CL, "--hosts", "2", "--switches", "0"], ["--switches"]),
    ("up-uplink", ["cluster", "up", CL, "--hosts", "2", "--uplink", "delay=1us"], ["--switches 2"]),
    ("up-preset", ["cluster", "up", CL, "--hosts", "2", "--preset", "slow"], ["invalid choice"]),
    ("down-slash", ["cluster", "down", "a/b"], ["cluster name 'a/b'"]),
    ("exec-bad", ["cluster", "exec", "../x", "h0", "--", "true"], ["cluster name '../x'"]),
    ("exec-unknown", ["cluster", "exec", CL, "h0", "--", "true"], [f"no emulated cluster '{CL}'"]),
    # ---- the command line itself, config files and the environment
    ("no-command", [], ["required: COMMAND"]),
    ("unknown-command", ["frobnicate"], ["invalid choice: 'frobnicate'"]),
    ("unknown-flag", ["runs", "--colour"], ["unrecognized arguments: --colour"]),
    ("completion-shell", ["completion", "fish"], ["invalid choice: 'fish'"]),
    ("config-missing", ["config", "show", "@MPISCOPE_CONFIG=/nonexistent/c.toml"],
     ["MPISCOPE_CONFIG names /nonexistent/c.toml"]),
    ("config-bad-toml", ["runs", "@MPISCOPE_CONFIG={config_bad_toml}"], ["not valid TOML"]),
    ("config-unknown", ["runs", "@MPISCOPE_CONFIG={config_unknown}"], ["unknown setting 'colour'"]),
    ("config-np-text", [*RUN, "@MPISCOPE_CONFIG={config_np_text}"], ["'run.np'"]),
    ("config-np-zero", [*RUN, "@MPISCOPE_CONFIG={config_np_zero}"], ["must be at least 1"]),
    ("env-out-file", [*RUN, "@MPISCOPE_OUT={afile}"], ["is a file, not a directory"]),
    # ---- simulation, tuning, profiling, the transport lab
    ("sim-p0", ["sim", "schedule", "--bench", "allreduce", "--algo", "ring", "-p", "0",
                "--size", "1K", "-o", "{out}/x.goal"], ["-p/--np must be at least 1"]),
    ("sim-algo", ["sim", "schedule", "--bench", "allreduce", "--algo", "nosuch", "-p", "4",
                  "--size", "1K", "-o", "{dir}/x.goal"], ["nosuch"]),
    ("sim-no-costs", ["sim", "run", "{machine_text}"], ["give the costs"]),
    ("sim-garbage-schedule", ["sim", "run", "{machine_text}", "--alpha", "1us", "--beta", "1ns/B"],
     ["expected 'num_ranks N'"]),
    ("sim-binary-schedule", ["sim", "run", "{binary_hosts}", "--alpha", "1us", "--beta", "1ns/B"],
     ["binary_hosts"]),
    ("tune-weights", ["tune", "-n", "2", "--coll", "allreduce", "--weights", "{machine_text}",
                      "-o", "{out}/t"], ["is not valid JSON"]),
    ("tune-np-list", ["tune", "-n", "2,x", "--coll", "allreduce", "-o", "{out}/t"],
     ["-n/--np '2,x' is not a communicator size"]),
    ("tune-coll", ["tune", "-n", "2", "--coll", "nosuch", "-o", "{out}/t"],
     ["not a collective mpiscope tunes"]),
    ("tune-machine", ["tune", "-n", "2", "--coll", "allreduce", "--machine", "{machine_text}",
                      "-o", "{out}/t"], ["is not valid JSON"]),
    ("tune-adaptive-from-run", ["tune", "-n", "2", "--coll", "allreduce", "--search", "adaptive", "--from-run", "x",
                                "-o", "{dir}/t"], ["gives the guided search its costs"]),
    ("tune-guided-exhaustive", ["tune", "-n", "2", "--coll", "allreduce", "--search", "guided", "--exhaustive",
                                "--from-run", "x", "-o", "{dir}/t"], ["give one of them"]),
    ("profile-no-command", ["profile", "--"], ["launch command after --"]),
    ("profile-weights-output-is-dir", ["profile", "weights", "-o", "{dir}", "--out", "{root}"],
     ["is a directory"]),
    ("profile-weights-output-dir", ["profile", "weights", "-o", "/nonexistent/d/w.json", "--out", "{root}"],
     ["/nonexistent/d"]),
    ("profile-n-without-cluster", ["profile", "-n", "4", "--", "true"], ["-n goes with --cluster"]),
    ("profile-cluster-unknown", ["profile", "--cluster", "nosuch", "--", "true"], ["nosuch"]),
    ("profile-weights-unknown", ["profile", "weights", "nosuch", "--out", "{root}"], ["nosuch"]),
    ("profile-weights-not-profile", ["profile", "weights", "20240101-000000-aaaa", "--out", "{root}"],
     ["profile"]),
    ("advise-unknown", ["transport", "advise", "nosuch", "--out", "{root}"], ["nosuch"]),
    ("advise-not-lab", ["transport", "advise", "20240101-000000-aaaa", "--out", "{root}"], ["tp_"]),
    ("advise-verify-rounds", ["transport", "advise", "20240101-000000-aaaa", "--verify", "--verify-rounds", "0",
                              "--out", "{root}"], ["--verify-rounds"]),
]

# The cases refused once the MPI library was asked (see above).
ASKS_MPI = frozenset({
    "np-beyond-slots", "np-beyond-hostfile", "np-one-pingpong", "np-odd-multipair", "nodes-uneven",
    "nodes-ppn-np", "nodes-beyond-hostfile", "nodes-and-mapping", "launcher-args-quote",
    "hostfile-garbage", "hostfile-word", "hostfile-slots-abc", "hostfile-slots-zero",
    "hostfile-empty", "hostfile-comments", "hostfile-hydra-abc", "hostfile-unknown-key",
    "launcher-hostfile-garbage", "launcher-hostfile-eq", "launcher-machinefile",
    "launcher-hostfile-missing", "launcher-hostfile-hydra-form", "hydra-f-openmpi-form",
    "hydra-f-garbage", "bench-unknown", "bench-twice", "exclude-unknown", "exclude-all",
    "algo-unknown", "pairs-needed", "pairs-three", "pairs-word", "pairs-range", "pairs-twice",
    "pairs-empty", "cluster-unknown", "cluster-nodes", "sbatch-hostfile", "sim-algo",
    "sim-garbage-schedule", "sim-binary-schedule", "profile-cluster-unknown", "mpicc-echo",
})


def stored_runs(out):
    """Two stored runs under `out` (synthetic, no MPI): one with raw files, one whose raw/ is gone."""
    build_run(out, "20240101-000000-aaaa", "2024-01-01T00:00:00+00:00",
              benches=("pingpong", "bw"), sizes=[1, 64, 4096])
    gone = build_run(out, "20240102-000000-bbbb", "2024-01-02T00:00:00+00:00",
                     benches=("pingpong",), sizes=[1, 64, 4096])
    shutil.rmtree(gone / "raw")
    # Files changed within the last seconds are read again at every listing and keep
    # no listing beside the catalog; dated a minute back, the listing below is final.
    past = time.time() - 60
    for path in out.rglob("*"):
        os.utime(path, (past, past))
    catalog.list_runs(out)  # the catalog, its lock and its listing exist before any case
    return out


def tree(path):
    path = Path(path)
    return sorted(str(p.relative_to(path)) for p in path.rglob("*")) if path.exists() else None


def argv_env(argv, tmp_path, root):
    here = tmp_path / "case"
    here.mkdir()
    for name, text in FILES.items():
        (here / name).write_text(text)
    for name, data in BINARY.items():
        (here / name).write_bytes(data)
    (here / "dir").mkdir()
    names = {**{k: str(here / k) for k in (*FILES, *BINARY)}, "dir": str(here / "dir"),
             "out": str(tmp_path / "fresh"), "root": str(root)}
    env, words = {}, []
    for word in argv:
        word = word.format(**names) if "{" in word and "{}" not in word else word
        if word.startswith("@"):
            key, _, value = word[1:].partition("=")
            env[key] = value
        else:
            words.append(word)
    if words and words[0] in ("run", "sbatch") and "--out" not in words and \
            "MPISCOPE_OUT" not in env:
        words += ["--out", names["out"]]
    return words, env, here


def set_case_env(monkeypatch, tmp_path, env):
    for key in ("MPISCOPE_OUT", "MPISCOPE_CONFIG", "MPISCOPE_PROGRESS"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(tmp_path)


def refused_cleanly(code, err, needles, fresh, root_before, root):
    assert code == 2, err
    assert "Traceback" not in err, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1, err          # one message…
    assert errors[0].startswith("mpiscope: error:") and errors[0] == err.splitlines()[-1], err
    for needle in needles:                # …naming the input
        assert needle in errors[0], (needle, err)
    assert not Path(fresh).exists(), tree(fresh)  # nothing created
    assert tree(root) == root_before


def refused_in_process(argv, needles, tmp_path, root, monkeypatch, capsys):
    """Case `argv` run through main() here is refused cleanly, launching nothing."""
    from mpiscope.measure import launch

    def no_launch(*a, **kw):
        raise AssertionError("bad input reached an MPI launch")

    monkeypatch.setattr(launch, "execute", no_launch)
    words, env, _ = argv_env(argv, tmp_path, root)
    set_case_env(monkeypatch, tmp_path, env)
    before = tree(root)
    try:
        code = main(words)
    except SystemExit as e:  # argparse's own errors
        code = e.code
    refused_cleanly(code, capsys.readouterr().err, needles, tmp_path / "fresh", before, root)
