# SPDX-License-Identifier: BSD-3-Clause
"""What differs between MPI libraries is asked of mpilibs/, never decided by
comparing a library's name elsewhere; and every library module implements
the one interface (mpilibs/library.py), registered once."""

import ast
from pathlib import Path

import pytest

from mpiscope import mpilibs
from mpiscope.common.errors import UsageError
from mpiscope.mpilibs.library import MpiLibrary

SRC = Path(mpilibs.__file__).resolve().parent.parent
# The names the code knows libraries by: registry keys, and the identity probe's.
NAMES = {"openmpi", "mpich", "open-mpi", "intel-mpi", "intelmpi"}
# Words of the libraries' own text (MPI_Get_library_version's, their titles)
# and of their intra-node path families' names.
TEXT = {"open mpi", "mpich", "intel", "ucx"}


def _library_text(value: str) -> bool:
    return any(word in value.lower() for word in TEXT)


def _a_name(node) -> bool:
    """A string constant naming a library or holding its text, or a
    tuple/list/set of them holding one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value in NAMES or _library_text(node.value)
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and any(map(_a_name, node.elts))


def name_tests(tree) -> list:
    """Line numbers of comparisons, `in` tests, match cases and startswith /
    endswith calls against a library's name."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare) and any(map(_a_name, [node.left, *node.comparators])):
            out.append(node.lineno)
        elif isinstance(node, ast.MatchValue) and _a_name(node.value):
            out.append(node.lineno)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ("startswith", "endswith") and any(map(_a_name, node.args))):
            out.append(node.lineno)
    return sorted(out)


def test_no_module_outside_mpilibs_compares_a_librarys_name():
    found = {}
    for path in sorted(SRC.rglob("*.py")):
        if "mpilibs" in path.relative_to(SRC).parts:
            continue
        lines = name_tests(ast.parse(path.read_text(), str(path)))
        if lines:
            found[str(path.relative_to(SRC))] = lines
    assert found == {}, f"ask mpilibs instead of comparing a library's name: {found}"


def test_the_check_sees_each_form_of_comparison():
    code = '''
a == "openmpi"
b in ("mpich", "x")
"mpich" in text
lib.startswith("intel-mpi")
match k:
    case "open-mpi":
        pass
get("openmpi").launcher        # a key into the registry: fine
"Open MPI" in (library or "")
fam in ("Open MPI 4", "Open MPI 5")
fam == "UCX"
text.startswith("Intel(R) MPI")
label = "Open MPI 4.x (btl vader)"   # text, not a test: fine
'''
    assert name_tests(ast.parse(code)) == [2, 3, 4, 5, 7, 10, 11, 12, 13]


def test_the_words_of_library_text_cover_every_library_and_path_family():
    for lib in mpilibs.LIBRARIES:
        assert _library_text(lib.title), lib.title
    for fam in mpilibs.path_families():
        assert _library_text(fam.name) and _library_text(fam.label), fam.name
    assert _library_text("Intel(R) MPI Library 2021.18 for Linux* OS")


def test_every_library_implements_the_interface_and_is_found_by_its_names():
    keys = [lib.key for lib in mpilibs.LIBRARIES]
    assert len(set(keys)) == len(keys) == len(mpilibs.MODULES)
    for lib in mpilibs.LIBRARIES:
        assert isinstance(lib, MpiLibrary) and not type(lib).__abstractmethods__
        assert mpilibs.get(lib.key) is lib
        assert all(mpilibs.by_implementation(i) is lib for i in lib.implementations)
        assert mpilibs.get(lib.launcher_family).launcher_family == lib.launcher_family   # launched as a library registered
        assert lib.launcher.hostfile_form and lib.launcher_programs and lib.srun_plugin
    with pytest.raises(UsageError, match="unknown MPI library 'nosuch'"):
        mpilibs.get("nosuch")
    assert mpilibs.by_implementation("unknown") is None


class Untuned(MpiLibrary):
    """A library mpiscope launches but does not tune: the interface's own tuning methods."""
    key = launcher_family = "untuned"
    title = "Some MPI"

    def recognizes(self, library_text):
        return False

    def settings_words(self, settings):
        return []

    def settings_env(self, settings):
        return {}

    def cluster_command(self, **kwargs):
        return [], {}


def test_a_library_without_tuning_refuses_every_tuning_step():
    lib = Untuned()
    for call in (lambda: lib.read_catalog(None, None), lambda: lib.forcing(None, {}),
                 lambda: lib.selection_size("bcast", 8, 2), lambda: lib.size_meaning("bcast"),
                 lambda: list(lib.selection_files(None, {})),
                 lambda: lib.use_settings(None, {}, {}), lambda: lib.entered(None, None, 2, [], {}, []),
                 lambda: lib.read_defaults(None, None, None, 2, [], {}, None)):
        with pytest.raises(UsageError, match="does not support Some MPI yet"):
            call()
    assert not lib.reads_under_gdb(None) and lib.keeps_default


def test_intel_mpi_is_launched_as_mpich_and_tuned_by_its_own_module():
    intel = mpilibs.get("intelmpi")
    assert intel.launcher_family == "mpich" and intel.launcher is mpilibs.get("mpich").launcher
    assert not intel.keeps_default and not intel.path_families
    assert intel.oversubscribed_settings   # its ranks poll: told to wait when sharing cores


@pytest.mark.parametrize("text, key", [
    ("Open MPI v4.1.4, package: Debian OpenMPI", "openmpi"),
    ("MPICH Version:\t4.0.2\nMPICH Device:\tch4:ucx", "mpich"),
    ("Intel(R) MPI Library 2021.13 for Linux* OS", "intelmpi"),
])
def test_a_library_text_is_recognized_by_its_own_module(text, key):
    assert mpilibs.from_library_text(text) is mpilibs.get(key)
    assert mpilibs.from_library_text("Some MPI 1.0") is None
