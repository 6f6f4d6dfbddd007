# SPDX-License-Identifier: BSD-3-Clause
"""Every architecture-specific instruction of the C programs is in
native/clock/ (cpu.h: the counter, the spin-wait hint, the compiler
barriers), so the engine, the profiler, the simulator, the transport lab and
the delay program build for every CPU clock/ knows (tests/cross/ builds and
runs them)."""

import re
from pathlib import Path

NATIVE = Path(__file__).resolve().parents[2] / "native"
PARTS = ("engine", "pmpi", "sim", "transport", "cluster")
# x86, Arm and POWER builtins, and inline assembly in any spelling.
ARCH_SPECIFIC = re.compile(r"__builtin_(ia32|arm|aarch64|ppc|altivec)_|\b(__asm__|__asm|asm)\b")


def test_no_architecture_instruction_outside_clock():
    found = [f"{path.relative_to(NATIVE.parent)}:{n}: {line.strip()}"
             for part in PARTS for path in sorted((NATIVE / part).rglob("*.[ch]"))
             for n, line in enumerate(path.read_text().splitlines(), 1) if ARCH_SPECIFIC.search(line)]
    assert not found, "\n".join(found)
    # the check itself sees what it looks for
    assert ARCH_SPECIFIC.search((NATIVE / "clock" / "cpu.h").read_text())

