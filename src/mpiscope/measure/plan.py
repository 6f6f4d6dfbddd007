# SPDX-License-Identifier: BSD-3-Clause
"""A validated run plan: what to measure, how, and how to start it.

Everything the user can get wrong is checked here, before anything is
created on disk, so bad input leaves no run behind.
"""

import dataclasses
import os
from pathlib import Path

from mpiscope.measure import benchmarks, placement
from mpiscope.measure import algo_options
from mpiscope.measure import loggp_options
from mpiscope.measure import method_options
from mpiscope.common import hostfiles
from mpiscope.common.errors import UsageError
from mpiscope.measure import launch
from mpiscope.measure.launch import LAUNCHERS, MAX_LAUNCHES, local_cpus
from mpiscope.common.sizes import parse_sizes
from mpiscope.store.layout import check_out_root
from mpiscope.engine.describe import describe
from mpiscope.engine.mpi import find_mpi, identify, is_debian

# A field's name in a run's stored plan where it differs from the Plan's: stored runs keep theirs.
STORED_NAMES = {"launcher_family": "mpi"}


@dataclasses.dataclass
class Plan:
    np: int
    launcher_family: str  # how the MPI is launched: openmpi, or mpich (MPICH and its derivatives)
    launcher: str
    benches: list
    sizes: list
    sync: str
    timer: str
    cache: str
    reps_min: int
    reps_max: int
    ci_width: float
    time_budget: float
    launches: int
    check: bool
    seed: int
    out: Path
    hostfile: Path | None = None
    pairs: list | None = None
    root_rotate: bool = False
    clock_inject: str | None = None
    warmup: int = 5
    mpirun: str | None = None
    oversubscribe: bool = False
    refine: bool = False
    cluster: str | None = None
    refine_threshold: float = 0.1
    refine_max: int = 8
    # LogGP benchmarks (loggp_options.py); None: the engine's defaults.
    queue_depths: list | None = None
    overhead_steps: list | None = None
    flood_bytes: int | None = None
    # Our own collective algorithms (algo_options.py): --algo names, segment, --trace.
    algos: list | None = None
    segment: int | None = None
    trace: bool = False
    algo_variants: dict | None = None  # collective -> the variants --algo makes it run
    clock_sync: str = "auto"
    start_barrier: str = "mpi"  # mpi: MPI_Barrier; own: the engine's (procsync_barrier)
    label: str | None = None
    mpicc: str | None = None  # the MPI's compiler wrapper (engine/mpi.py); None: Debian's of the family
    sizeless: list = dataclasses.field(default_factory=list)  # benches measured once, at size 0
    # Where ranks go: -N/--nodes, --ppn, the hostfile's (host, slots) as used
    # (first `nodes` hosts, `ppn` slots each), words added to the launcher's command.
    nodes: int | None = None
    ppn: int | None = None
    hosts: list | None = None
    launcher_args: list = dataclasses.field(default_factory=list)
    notes: list = dataclasses.field(default_factory=list)  # said before the run starts
    launch_timeout: float | None = None  # seconds a launch may take (mpiscope tune); None: no limit
    huge_pages: bool = False  # message buffers in transparent huge pages (--huge-pages)
    # The peers' methods (method_options.py): those asked for, the engine's --methods list
    # (with the reference series), and method series per size of each benchmark.
    methods: list | None = None
    method_engine: list | None = None
    method_series: dict | None = None

    def hostfile_text(self):
        """The hostfile in the launcher's own syntax (None without --hostfile)."""
        if self.hosts is None:
            return None
        return hostfiles.render(
            launch.launcher_of(self.launcher_family, self.launcher).hostfile_form, self.hosts, self.np
        )

    def installation(self):
        """The identified MPI: its wrapper's, else Debian's of the launcher family."""
        return identify(self.mpicc) if self.mpicc else find_mpi(mpi=self.launcher_family)

    def stored(self) -> dict:
        """The plan as a run's context records it: paths as text, the stored names."""
        return {STORED_NAMES.get(k, k): (str(v) if isinstance(v, Path) else v) for k, v in vars(self).items()}

    def series_count(self):
        own = benchmarks.series_count(
            self.benches,
            self.sizes,
            self.sizeless,
            {**loggp_options.variant_counts(self), **algo_options.variant_counts(self)},
        )
        methods = self.method_series or {}
        return own + benchmarks.series_count(list(methods), self.sizes, self.sizeless, methods)

    def engine_args(self, launch, out_dir, benches=None, sizes=None):
        """The engine's command line; `benches`/`sizes` narrow it (refinement)."""
        args = [
            "--bench",
            ",".join(benches or self.benches),
            "--sizes",
            ",".join(map(str, sizes or self.sizes)),
            "--sync",
            self.sync,
            "--timer",
            self.timer,
            "--cache",
            self.cache,
            "--clock-sync",
            self.clock_sync,
            "--start-barrier",
            self.start_barrier,
            "--reps-min",
            str(self.reps_min),
            "--reps-max",
            str(self.reps_max),
            "--ci-width",
            repr(self.ci_width),
            "--time-budget",
            repr(self.time_budget),
            "--warmup",
            str(self.warmup),
            "--launch",
            str(launch),
            "--seed",
            str(self.seed),
            "--expect-np",
            str(self.np),
            "--out",
            str(out_dir),
        ]
        if self.check:
            args.append("--check")
        if self.root_rotate:
            args.append("--root-rotate")
        if self.huge_pages:
            args.append("--huge-pages")
        if self.pairs:
            args += ["--pairs", ",".join(f"{a}:{b}" for a, b in self.pairs)]
        if self.clock_inject:
            args += ["--clock-inject", self.clock_inject]
        args += loggp_options.engine_args(self)
        args += algo_options.engine_args(self)
        args += method_options.engine_args(self)
        return args


def read_pairs(path, np):
    """Pairs file: two rank numbers a line (initiator first); '#' starts a comment."""
    from mpiscope.common.inputs import HOSTFILE_LIMIT, read_text

    path = Path(path)
    text = read_text(path, HOSTFILE_LIMIT, "--pairs", "give a pairs file: two rank numbers a line")
    pairs, seen = [], {}
    for lineno, line in enumerate(text.splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        if len(fields) != 2 or not all(f.isdigit() for f in fields):
            raise UsageError(f"{path}:{lineno}: expected two rank numbers, got '{line.strip()}'")
        a, b = map(int, fields)
        for rank in (a, b):
            if rank >= np:
                raise UsageError(f"{path}:{lineno}: rank {rank} is out of range for -n {np} (ranks are 0..{np - 1})")
            if rank in seen:
                raise UsageError(
                    f"{path}:{lineno}: rank {rank} is listed twice (first on line "
                    f"{seen[rank]}); every rank may appear in at most one pair"
                )
            seen[rank] = lineno
        pairs.append((a, b))
    if not pairs:
        raise UsageError(f"--pairs: {path} lists no pairs")
    return pairs


def _positive(name, value, minimum=1, maximum=None):
    if value is None or value < minimum:
        raise UsageError(f"{name} must be at least {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise UsageError(f"{name} must be at most {maximum}, got {value}")
    return value


def make_plan(request):
    """Builds a Plan from a MeasureRequest (request.py), or raises UsageError.
    What the benchmarks are, the engine built for the MPI chosen says
    (engine/describe.py)."""
    r = request
    at = dataclasses.replace(r.launch, launcher=r.launch.launcher or LAUNCHERS[0])
    suite = benchmarks.SUITES[r.suite]
    cluster = at.cluster
    if cluster and (at.launcher != "mpirun" or at.hostfile or at.mpirun):
        raise UsageError(
            "--cluster starts the ranks on the emulated hosts itself: drop --launcher, --hostfile and --mpirun"
        )
    if at.launcher not in LAUNCHERS:
        raise UsageError(f"--launcher must be one of {', '.join(LAUNCHERS)}, got '{at.launcher}'")
    check_out_root(r.out)
    _check_numbers(r)
    mpi = at.find_installation()
    mpirun = _mpirun(at, mpi, cluster)
    layout = placement.resolve(at, mpi.launcher_family, cluster, _default_np)
    np = layout.pop("np")
    known = describe(mpi)
    if r.bench is not None and not r.bench.replace(",", "").strip():
        raise UsageError(
            f"--bench {r.bench!r} lists no benchmark; name at least one (e.g. "
            "--bench pingpong), or leave --bench out for the --suite's"
        )
    benches = [b.strip() for b in (r.bench or ",".join(suite["bench"])).split(",") if b.strip()]
    benches = _exclude(benches, r.exclude, known)
    for b in benches:
        if b not in known.benchmarks:
            raise UsageError(f"unknown benchmark '{b}'; choose from: {', '.join(known.names())}")
        if np < known.benchmarks[b].min_ranks:
            raise UsageError(f"benchmark '{b}' needs at least {known.benchmarks[b].min_ranks} ranks; raise -n")
    if len(set(benches)) != len(benches):
        raise UsageError("--bench lists a benchmark twice")
    pairings = {known.benchmarks[b].pairing: b for b in benches}
    if "halves" in pairings and np % 2:
        raise UsageError(f"{pairings['halves']} pairs rank p with p + n/2 and needs an even -n, got {np}")
    pairs = None
    if "listed" in pairings:
        if not r.pairs:
            raise UsageError(f"benchmark '{pairings['listed']}' needs --pairs FILE (two rank numbers a line)")
        pairs = read_pairs(r.pairs, np)
    if r.sizes is not None and not r.sizes.replace(",", "").strip():
        raise UsageError(
            f"--sizes {r.sizes!r} lists no size; give sizes such as 8,1K,1M or "
            "1-4M:x2, or leave --sizes out for the --suite's"
        )
    sizes = parse_sizes(r.sizes or suite["sizes"])
    sync = r.sync or "auto"
    methods = method_options.plan_fields(r, benches, known.methods)
    method_notes = methods.pop("method_notes", [])
    plan = Plan(
        np=np,
        launcher_family=mpi.launcher_family,
        mpicc=mpi.wrapper,
        launcher=at.launcher,
        benches=benches,
        sizes=sizes,
        sync=sync,
        timer=r.timer,
        cache=r.cache,
        clock_sync=r.clock_sync,
        start_barrier=r.start_barrier,
        reps_min=r.reps_min,
        reps_max=r.reps_max,
        ci_width=r.ci_width,
        time_budget=r.time_budget,
        launches=r.launches,
        check=r.check,
        seed=r.seed,
        out=Path(r.out),
        pairs=pairs,
        root_rotate=r.root_rotate,
        clock_inject=r.clock_inject,
        warmup=r.warmup,
        mpirun=mpirun,
        refine=r.refine,
        refine_threshold=r.refine_threshold,
        refine_max=r.refine_max,
        cluster=cluster,
        sizeless=[b for b in benches if known.benchmarks[b].sizeless],
        **layout,
        label=_label(r.label),
        huge_pages=r.huge_pages,
        **loggp_options.plan_fields(r),
        **algo_options.plan_fields(r, benches, known.algorithms),
        **methods,
    )
    plan.notes.extend(method_notes)
    return plan


def _check_numbers(r):
    """The stopping rule's and the launches' numbers: each one's own range."""
    _positive("--reps-min", r.reps_min)
    _positive("--reps-max", r.reps_max)
    if r.reps_min > r.reps_max:
        raise UsageError(f"--reps-min ({r.reps_min}) is larger than --reps-max ({r.reps_max})")
    if not r.ci_width >= 0:
        raise UsageError("--ci-width must be a relative width >= 0, e.g. 0.02 for ±2%")
    if not 0 < r.time_budget < float("inf"):
        raise UsageError("--time-budget must be a positive number of seconds")
    _positive("--launches", r.launches, 1, MAX_LAUNCHES)
    _positive("--warmup", r.warmup, 0)
    if r.clock_inject:
        parts = r.clock_inject.split(":")
        try:
            ok = len(parts) == 2 and all(float(p) >= 0 for p in parts)
        except ValueError:
            ok = False
        if not ok:
            raise UsageError(f"--clock-inject expects MAX_OFFSET_US:MAX_DRIFT_PPM, got '{r.clock_inject}'")
    if r.refine_threshold <= 0 or r.refine_max < 1:
        raise UsageError("--refine-threshold must be > 0 and --refine-max at least 1")


def _exclude(benches, text, known):
    """`benches` without the --exclude LIST; every name must be a benchmark.
    An empty list excludes nothing (it overrides a config file's)."""
    names = [x.strip() for x in str(text or "").split(",") if x.strip()]
    for name in names:
        if name not in known.benchmarks:
            raise UsageError(f"--exclude: unknown benchmark '{name}'; choose from: {', '.join(known.names())}")
    left = [b for b in benches if b not in names]
    if not left:
        raise UsageError(
            f"--exclude {text} leaves no benchmark to measure (`mpiscope config "
            "show` tells whether a config file set it)"
        )
    return left


def _label(text):
    """--label: one line of text; not 'latest', which names the newest run."""
    if text is None:
        return None
    label = str(text).strip()
    if not label or "\n" in label or label == "latest":
        raise UsageError(f"--label {text!r}: give one line of text (not 'latest', which names the newest run)")
    return label


def _mpirun(at, mpi, cluster):
    """The launcher program: --mpirun, else the MPI's own (beside its wrapper);
    `at`: the LaunchRequest."""
    if cluster and not is_debian(mpi):
        raise UsageError(
            f"--cluster starts Debian's Open MPI or MPICH on the emulated hosts; "
            f"{mpi.wrapper} ({mpi.name}) is neither: use --mpi openmpi|mpich there"
        )
    if at.mpirun or at.launcher != "mpirun" or cluster:
        return at.mpirun
    if mpi.launcher is None:
        raise UsageError(f"no mpirun or mpiexec beside {mpi.wrapper}; name {mpi.name}'s launcher with --mpirun PROGRAM")
    return mpi.launcher


def _default_np(cluster):
    """One rank per slot of the emulated cluster, else the CPUs here (at least 2)."""
    if cluster:
        from mpiscope.cluster.state import load

        spec = load(cluster)[1].spec
        return spec.hosts * spec.slots
    return max(2, local_cpus())


def relevant_env():
    """Environment settings that change what MPI does, for the run's context."""
    prefixes = ("OMPI_", "PRTE_MCA_", "PMIX_MCA_", "UCX_", "MPIR_CVAR_", "MPICH_", "HYDRA_", "I_MPI_", "FI_", "SLURM_")
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(prefixes)}
