# SPDX-License-Identifier: BSD-3-Clause
"""Hostfiles read in Open MPI, hydra and plain syntax, written in each launcher's."""

import pytest
from hypothesis import given, strategies as st

from mpiscope import mpilibs
from mpiscope.common import hostfiles
from mpiscope.common.errors import UsageError


def test_the_three_syntaxes_read_alike():
    openmpi = "# cluster\nn1 slots=4 max_slots=8\nn2 slots=2\n"
    hydra = "n1:4\n\nn2:2   # two cores\n"
    plain = "n1\nn1\nn2\nn1\nn2\nn1\n"
    expected = [("n1", 4), ("n2", 2)]
    assert hostfiles.parse(openmpi) == hostfiles.parse(hydra) == hostfiles.parse(plain) == expected


def test_a_host_listed_again_adds_its_slots_in_first_seen_order():
    assert hostfiles.parse("b slots=2\na\nb:3\n") == [("b", 5), ("a", 1)]


@pytest.mark.parametrize("text, needle", [
    ("n1 slots=0\n", "hosts:1: the slot count in 'n1 slots=0' must be a positive integer"),
    ("n1\nn2:x\n", "hosts:2: the slot count"),
    ("n1 cpus=4\n", "hosts:1: cannot read 'n1 cpus=4'"),
    ("# nothing\n\n", "hosts lists no hosts"),
])
def test_unreadable_lines_say_where(text, needle):
    with pytest.raises(UsageError, match=needle):
        hostfiles.parse(text, "hosts")


def test_nodes_and_ppn_select_hosts_and_slots():
    hosts = [("a", 4), ("b", 4), ("c", 4)]
    assert hostfiles.select(hosts, nodes=2, ppn=1) == [("a", 1), ("b", 1)]
    assert hostfiles.select(hosts, ppn=2) == [("a", 2), ("b", 2), ("c", 2)]
    with pytest.raises(UsageError, match="lists only 3 host"):
        hostfiles.select(hosts, nodes=4)


def test_each_launchers_syntax():
    hosts = [("a", 2), ("b", 1)]
    assert hostfiles.render("slots", hosts, 3) == "a slots=2\nb slots=1\n"
    assert hostfiles.render("colon", hosts, 3) == "a:2\nb:1\n"
    assert hostfiles.render("ranks", hosts, 3) == "a\na\nb\n"
    # more ranks than slots: Slurm's list goes round again from the first host
    assert hostfiles.render("ranks", hosts, 5) == "a\na\nb\na\na\n"


def test_ranks_on_this_machine_count_under_any_of_its_names():
    names = sorted(hostfiles.this_host_names())
    hosts = [("elsewhere", 2), (names[0], 1), ("localhost", 2)]
    assert hostfiles.ranks_here(hosts, 5) == 3
    assert hostfiles.ranks_here(hosts, 2) == 0


host_names = st.from_regex(r"[a-z][a-z0-9.-]{0,15}", fullmatch=True)


@given(st.dictionaries(host_names, st.integers(1, 64), min_size=1, max_size=8))
def test_written_hostfiles_read_back(d):
    hosts = list(d.items())
    np = sum(d.values())
    for form in hostfiles.FORMS:
        assert hostfiles.parse(hostfiles.render(form, hosts, np)) == hosts


def test_a_launchers_own_hostfile_is_held_to_its_syntax():
    # --launcher-args hostfiles go to the launcher as they are
    from mpiscope.common.errors import UsageError

    mpirun, hydra = mpilibs.get("openmpi").launcher, mpilibs.get("mpich").launcher
    assert hostfiles.parse("a slots=2\n", form=mpirun.hostfile_form) == [("a", 2)]
    assert hostfiles.parse("a:2\n", form=hydra.hostfile_form) == [("a", 2)]
    with pytest.raises(UsageError, match=r"f:1: 'a:2' is MPICH syntax"):
        hostfiles.parse("a:2\n", "f", form=mpirun.hostfile_form)
    with pytest.raises(UsageError, match=r"f:2: 'b slots=2' is Open MPI syntax"):
        hostfiles.parse("a:1\nb slots=2\n", "f", form=hydra.hostfile_form)
    with pytest.raises(UsageError, match=r"f:1: '%%' is not a host name"):
        hostfiles.parse("%%\n", "f")
    assert hostfiles.named_in(["--hostfile", "h1", "--hostfile=h2", "-x", "A"],
                              mpirun.hostfile_options) == ["h1", "h2"]
    assert hostfiles.named_in(["-f", "h"], hydra.hostfile_options) == ["h"]
    assert hostfiles.named_in(["-f", "h"], mpirun.hostfile_options) == []
