# SPDX-License-Identifier: BSD-3-Clause
"""json.dumps(obj, indent=N, default=...) to the byte, faster: json indents
with its pure-Python encoder, which a run's summary (context and rows, tens
of thousands of values) waits for. Here a container of scalars alone is
encoded by json's C encoder, the line break and indentation being its item
separator; other containers are joined here. What this does not know (a
subclass of a JSON type, a key that is not a string) is left to json.dumps."""

from __future__ import annotations

import json
from json.encoder import c_make_encoder, encode_basestring_ascii  # type: ignore[attr-defined]

_SCALARS = frozenset((str, int, float, bool, type(None)))
_JSON_TYPES = (str, int, float, list, tuple, dict, type(None))  # what json encodes without `default`
_INF = float("inf")


class _NotPlain(Exception):
    """Something only json.dumps encodes as it does."""


def dumps(obj, indent: int, default=None) -> str:
    """json.dumps(obj, indent=indent, default=default), the same text."""
    if c_make_encoder is None:  # an interpreter without json's C encoder
        return json.dumps(obj, indent=indent, default=default)
    try:
        return _Encoder(indent, default).value(obj, 0)
    except _NotPlain:
        return json.dumps(obj, indent=indent, default=default)


def _scalar(v) -> str:
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    kind = type(v)
    if kind is str:
        return encode_basestring_ascii(v)
    if kind is int:
        return int.__repr__(v)
    if v != v:
        return "NaN"
    if v == _INF:
        return "Infinity"
    if v == -_INF:
        return "-Infinity"
    return float.__repr__(v)


class _Encoder:
    def __init__(self, indent: int, default) -> None:
        self.indent, self.default = indent, default
        self.flat_encoders: dict[int, object] = {}

    def value(self, v, depth):
        kind = type(v)
        if kind in _SCALARS:
            return _scalar(v)
        if kind is dict:
            return self._dict(v, depth)
        if kind is list or kind is tuple:
            return self._list(v, depth)
        if self.default is None or isinstance(v, _JSON_TYPES):
            raise _NotPlain
        return self.value(self.default(v), depth)

    def _inner(self, container, depth):
        """The items of a container of scalars at `depth`, by the C encoder,
        joined as json.dumps joins them (no brackets)."""
        enc = self.flat_encoders.get(depth)
        if enc is None:
            sep = ",\n" + " " * (self.indent * (depth + 1))
            enc = c_make_encoder(None, None, encode_basestring_ascii, None, ": ", sep, False, False, True)
            self.flat_encoders[depth] = enc
        return "".join(enc(container, 0))[1:-1]

    def _dict(self, d, depth):
        if not d:
            return "{}"
        items, scalars = [], {}  # runs of scalar items go to the C encoder together
        for k, v in d.items():
            if type(k) is not str:
                raise _NotPlain
            if type(v) in _SCALARS:
                scalars[k] = v
                continue
            if scalars:
                items.append(self._inner(scalars, depth))
                scalars = {}
            items.append(f"{encode_basestring_ascii(k)}: {self.value(v, depth + 1)}")
        if scalars:
            items.append(self._inner(scalars, depth))
        return self._bracketed("{", items, "}", depth)

    def _bracketed(self, opening, items, closing, depth):
        pad = "\n" + " " * (self.indent * (depth + 1))
        return opening + pad + ("," + pad).join(items) + "\n" + " " * (self.indent * depth) + closing

    def _list(self, seq, depth):
        if not seq:
            return "[]"
        if all(type(v) in _SCALARS for v in seq):
            return self._bracketed("[", [self._inner(seq, depth)], "]", depth)
        return self._bracketed("[", [self.value(v, depth + 1) for v in seq], "]", depth)
