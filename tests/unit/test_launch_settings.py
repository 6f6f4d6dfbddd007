# SPDX-License-Identifier: BSD-3-Clause
"""A setting as a launch gives it (mpilibs/launch_settings.py): launcher words
of Open MPI, Hydra and Intel MPI, else the environment; an MCA parameter by
its own name or its OMPI_MCA_ variable."""

from mpiscope.mpilibs.launch_settings import launch_setting, mca


def test_each_launcher_form_gives_its_value_and_the_environment_is_the_fallback():
    words = ["mpirun", "--mca", "btl", "tcp,self", "-x", "UCX_TLS=tcp", "-genv", "I_MPI_FABRICS", "shm", "-n", "2"]
    env = {"UCX_TLS": "sm", "PATH_ONLY": "x"}
    assert launch_setting(words, env, "btl") == "tcp,self"
    assert launch_setting(words, env, "UCX_TLS") == "tcp"
    assert launch_setting(words, env, "I_MPI_FABRICS") == "shm"
    assert launch_setting(words, env, "PATH_ONLY") == "x"
    assert launch_setting(words, env, "absent") is None
    assert launch_setting(["mpirun", "--mca", "btl"], {}, "btl") is None  # no value after the name


def test_an_mca_parameter_is_read_by_name_then_as_its_variable():
    words = ["mpirun", "-x", "OMPI_MCA_pml=ob1"]
    assert mca(lambda n: launch_setting(words, {}, n), "pml") == "ob1"
    assert mca(lambda n: launch_setting(["--mca", "pml", "ucx", *words], {}, n), "pml") == "ucx"
    assert mca(lambda n: launch_setting([], {"OMPI_MCA_btl": "^tcp"}, n), "btl") == "^tcp"
