# SPDX-License-Identifier: BSD-3-Clause
"""Which repetition of which series on which rank: the leading columns of
every per-rank table (samples.parquet, trace.parquet)."""

import pyarrow as pa

REP_KEY_FIELDS = [
    ("bench", pa.string()),
    ("algo", pa.string()),
    ("size", pa.int64()),
    ("launch", pa.int32()),
    ("rep", pa.int32()),
    ("rank", pa.int32()),
]
