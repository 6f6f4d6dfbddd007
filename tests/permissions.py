# SPDX-License-Identifier: BSD-3-Clause
"""Root reads a file of mode 000 anyway. `permissions_apply()` drops the two
capabilities that let it (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH) from the
calling thread's effective set for a while: file modes then bind it as they
bind any user, while it still reads all it owns with its owner's rights
(the checkout, the interpreter, a temporary folder of mode 0700)."""

import ctypes
from contextlib import contextmanager

_VERSION_3 = 0x20080522          # _LINUX_CAPABILITY_VERSION_3: two 32-bit words
_DAC = (1 << 1) | (1 << 2)       # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH


class _Header(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _Data(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


_libc = ctypes.CDLL(None, use_errno=True)


def _caps():
    header, data = _Header(_VERSION_3, 0), (_Data * 2)()
    if _libc.capget(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    return header, data


def _set(header, data):
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


@contextmanager
def permissions_apply():
    """Within the block, a file's mode binds this thread even as root."""
    header, data = _caps()
    saved = data[0].effective
    data[0].effective = saved & ~_DAC
    _set(header, data)
    try:
        yield
    finally:
        data[0].effective = saved
        _set(header, data)
