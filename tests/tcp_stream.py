# SPDX-License-Identifier: BSD-3-Clause
"""Test helper: a one-second TCP stream between two emulated hosts, run with
`python3 -c STREAM recv` on the receiver and `python3 -c STREAM send HOST` on
the sender; each prints the bytes it moved (the receiver first prints
"listening"). Used by tests/cluster/test_cluster.py and bench/cluster_links.py."""

STREAM = """
import socket, sys, time
if sys.argv[1] == "recv":
    s = socket.socket(); s.bind(("0.0.0.0", 5001)); s.listen(1)
    print("listening", flush=True)
    c, _ = s.accept(); n = 0
    while True:
        d = c.recv(1 << 16)
        if not d:
            break
        n += len(d)
    print(n, flush=True)
else:
    s = socket.create_connection((sys.argv[2], 5001)); buf = b"x" * 65536
    end = time.monotonic() + 1.0; n = 0
    while time.monotonic() < end:
        s.sendall(buf); n += len(buf)
    s.close()
    print(n, flush=True)
"""
