# SPDX-License-Identifier: BSD-3-Clause
"""Which MPI to build and run with: its compiler wrapper, what the wrapper
compiles with (`-show`), the library it links (a probe program asks
MPI_Get_library_version, which needs no launcher), and the launcher beside it.

The choice: --mpicc PATH, else --mpi openmpi|mpich (Debian's mpicc.openmpi /
mpicc.mpich), else $MPISCOPE_MPICC, else Debian's Open MPI then MPICH
wrapper, else `mpicc` on PATH. What differs between libraries (their
wrappers, launchers and names) each library's module says (mpilibs/).
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, asdict
from pathlib import Path

from mpiscope import mpilibs
from mpiscope.common.errors import UsageError
from mpiscope.common.version import version
from mpiscope.engine.locations import build_root, source_dir
from mpiscope.engine.make import make

ENV_VAR = "MPISCOPE_MPICC"


@dataclass(frozen=True)
class Installation:
    wrapper: str  # absolute path of the compiler wrapper
    show: str  # what the wrapper runs (its -show output)
    implementation: str  # open-mpi | mpich | intel-mpi (from mpi.h's macros)
    version: str  # the implementation's version, as the library reports it
    standard: str  # MPI standard version the library implements
    library: str  # MPI_Get_library_version, as the library says it
    launcher: str | None  # mpirun / mpiexec beside the wrapper

    @property
    def launcher_family(self) -> str:
        """How it is launched: the key of its library, or of the one it is launched as."""
        return mpilibs.of(self).launcher_family

    @property
    def name(self) -> str:
        return f"{mpilibs.of(self).title} {self.version}"

    @property
    def key(self) -> str:
        """Names this MPI's engine build: readable, and a hash of everything that
        changes the binary (the wrapper's compile line, the library, our version)."""
        digest = hashlib.sha256("\n".join((self.show, self.library, version())).encode())
        return f"{self.implementation}-{self.version}-{digest.hexdigest()[:10]}"

    def identity(self) -> dict:
        """What a run's context records."""
        return {**asdict(self), "family": self.launcher_family, "name": self.name, "key": self.key}


def find_mpi(mpicc: str | None = None, mpi: str | None = None) -> Installation:
    """The MPI chosen by --mpicc / --mpi / $MPISCOPE_MPICC / the defaults."""
    if mpicc and mpi:
        raise UsageError("--mpicc and --mpi both choose the MPI; give one of them")
    if mpi:
        debian = {lib.key: lib for lib in mpilibs.LIBRARIES if lib.debian_wrapper}
        if mpi not in debian:
            raise UsageError(
                f"--mpi must be one of {', '.join(debian)}, got '{mpi}' "
                f"(for any other MPI give its compiler wrapper with --mpicc PATH)"
            )
        wrapper = debian[mpi].debian_wrapper
        if shutil.which(wrapper) is None:
            raise UsageError(
                f"the {mpi} compiler wrapper {wrapper} is not installed; "
                f"run 'make setup' or apt-get install {debian[mpi].apt_packages}"
            )
        return identify(os.path.abspath(shutil.which(wrapper)))
    if mpicc or os.environ.get(ENV_VAR):
        given, source = (mpicc, "--mpicc") if mpicc else (os.environ[ENV_VAR], ENV_VAR)
        found = shutil.which(given)
        if found is None:
            raise UsageError(
                f"{source}: compiler wrapper '{given}' was not found or is not executable; "
                f"give the path of your MPI's mpicc"
            )
        return identify(os.path.abspath(found))
    for name in (*(lib.debian_wrapper for lib in mpilibs.LIBRARIES if lib.debian_wrapper), "mpicc"):
        if shutil.which(name):
            return identify(os.path.abspath(shutil.which(name)))
    raise UsageError(
        "no MPI compiler wrapper found (mpicc.openmpi, mpicc.mpich or mpicc on PATH); "
        "install an MPI ('make setup' installs Debian's) or name one with --mpicc PATH"
    )


def is_debian(mpi: Installation) -> bool:
    """Whether `mpi` is Debian's mpicc.openmpi / mpicc.mpich (under any of its names)."""
    debian = shutil.which(mpilibs.get(mpi.launcher_family).debian_wrapper)
    return debian is not None and os.path.realpath(debian) == os.path.realpath(mpi.wrapper)


@functools.cache  # once per process: planning, building and the context all ask
def identify(wrapper: str) -> Installation:
    show = _show(wrapper)
    for lib in mpilibs.LIBRARIES:
        lib.check_wrapper(wrapper, show)
    implementation, version, standard, library = _probe(wrapper, show)
    lib = mpilibs.by_implementation(implementation)
    if lib is None:
        raise UsageError(
            f"{wrapper} builds against an MPI that is neither Open MPI nor MPICH-derived "
            f"({library.splitlines()[0] if library else 'no version'}); mpiscope knows how "
            f"to launch those two families"
        )
    return Installation(
        wrapper, show, implementation, version, standard, library, find_launcher(wrapper, lib.launcher_family)
    )


def _show(wrapper: str) -> str:
    """The wrapper's compile line: -show (MPICH, Intel MPI; Open MPI accepts it
    too), -showme (Open MPI's own spelling)."""
    errors = []
    for flag in ("-show", "-showme"):
        try:
            p = subprocess.run([wrapper, flag], capture_output=True, text=True, timeout=60)
        except OSError as e:
            raise UsageError(f"cannot run the compiler wrapper {wrapper}: {e}") from None
        if p.returncode == 0 and p.stdout.strip() and p.stdout.strip() != flag:  # echo: no compiler
            return p.stdout.strip()
        errors.append(f"{flag}: {(p.stderr or p.stdout).strip()[:300]}")
    raise UsageError(
        f"{wrapper} is not an MPI compiler wrapper (neither -show nor -showme "
        f"printed its compile line: {'; '.join(errors)})"
    )


def _probe(wrapper: str, show: str):
    """(implementation, version, standard, library text) from the probe program,
    built once per compile line. The version is the running library's (the
    first dotted number of its text), so a library updated in place under the
    same compile line is seen; mpi.h's is the fallback."""
    out = build_root() / "probes" / hashlib.sha256(show.encode()).hexdigest()[:16]
    binary = out / "mpi-identity"
    made = make(source_dir("engine"), out, f"MPICC={wrapper}", "identity")
    if made.returncode != 0:
        raise UsageError(
            f"{wrapper} cannot compile a small MPI program; is its MPI installed "
            f"completely (headers, libraries, C compiler)?\n{made.stderr[-2000:]}"
        )
    if not binary.is_file():  # the "compiler" succeeded without compiling
        raise UsageError(
            f"{wrapper} is not an MPI compiler: it exited with success but built no "
            "program; give the MPI's mpicc with --mpicc"
        )
    p = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    lines = p.stdout.split("\n", 3)
    if p.returncode != 0 or len(lines) < 4:
        raise UsageError(
            f"a program built with {wrapper} does not run (exit {p.returncode}): {p.stderr.strip()[-1000:]}"
        )
    implementation, header, standard, library = (line.strip() for line in lines)
    number = re.search(r"\d+(?:\.\d+)+", library)
    return implementation, number.group(0) if number else (header or "unknown"), standard, library


def find_launcher(wrapper: str, launcher_family: str) -> str | None:
    """mpirun / mpiexec in the wrapper's directory, with its suffix
    (mpicc.openmpi → mpirun.openmpi). Symbolic links are followed name by
    name, the last mpicc-like name first: /usr/bin/mpicc is Debian's
    alternatives link to mpicc.openmpi, whose launcher is mpirun.openmpi."""
    chain, path = [], Path(wrapper)
    for _ in range(40):  # a loop of links ends the walk
        chain.append(path)
        if not path.is_symlink():
            break
        path = path.parent / os.readlink(path)
    named = [link for link in chain if link.name.startswith("mpicc")] or chain[:1]
    for link in reversed(named):
        suffix = link.name[len("mpicc") :] if link.name.startswith("mpicc") else ""
        for program in mpilibs.get(launcher_family).launcher_programs:
            candidate = link.parent / f"{program}{suffix}"
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return str(Path(os.path.abspath(candidate)))
    return None
