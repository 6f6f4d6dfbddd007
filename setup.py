# SPDX-License-Identifier: BSD-3-Clause
"""Everything about the package is in pyproject.toml; this only puts files of
the checkout inside the built package:

- the C sources (native/: engine/, clock/, cluster/, sim/, transport/, pmpi/)
  as mpiscope/_csrc/, so an installed mpiscope can build its engine for whatever
  MPI it is given (src/mpiscope/engine/locations.py finds them there);
- the JSON Schemas of the `--json` documents (docs/schemas/) as
  mpiscope/schemas/, so a wheel's user can validate what mpiscope prints.

MANIFEST.in puts the same files in the sdist, which builds the same wheel.
"""

import os

from setuptools import setup
from setuptools.command.build_py import build_py

NATIVE = "native"  # the C programs, one folder each
SCHEMAS = os.path.join("docs", "schemas")


class build_py_with_c_sources(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install runs from the checkout, which has them
        package = os.path.join(self.build_lib, "mpiscope")
        self.copy_tree(NATIVE, os.path.join(package, "_csrc"))
        self.mkpath(os.path.join(package, "schemas"))
        for name in sorted(os.listdir(SCHEMAS)):
            if name.endswith(".json"):
                self.copy_file(os.path.join(SCHEMAS, name), os.path.join(package, "schemas", name))


setup(cmdclass={"build_py": build_py_with_c_sources})
