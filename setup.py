# SPDX-License-Identifier: BSD-3-Clause
"""Everything about the package is in pyproject.toml; this only ships the C
sources (engine/, clock/, cluster/, sim/, transport/, pmpi/) inside it as mpiscope/_csrc/, so an installed
mpiscope can build its engine for whatever MPI it is given
(src/mpiscope/engine/locations.py finds them there)."""

import os

from setuptools import setup
from setuptools.command.build_py import build_py

C_SOURCES = ("engine", "clock", "cluster", "sim", "transport", "pmpi")


class build_py_with_c_sources(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install runs from the checkout, which has them
        for name in C_SOURCES:
            self.copy_tree(name, os.path.join(self.build_lib, "mpiscope", "_csrc", name))


setup(cmdclass={"build_py": build_py_with_c_sources})
