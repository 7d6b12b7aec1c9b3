"""ksqlDB's ``BytesUtils.split`` as plain Python (SPLIT over BYTES), quirk included.

``BytesUtils.arrayEquals`` compares ``a[i]`` with ``b[i]`` for ``i`` from the match position
while ``i`` is below the delimiter's length, so from that position on only the first byte of
the delimiter is compared (the UDF as shipped). This module must not import pyspark.
"""

from __future__ import annotations


def _array_equals(a: bytes, a_from: int, b: bytes, length: int) -> bool:
    if a_from + length > len(a) or length > len(b):
        return False
    i = a_from
    while i < length and i < len(b):
        if a[i] != b[i]:
            return False
        i += 1
    return True


def _index_of(array: bytes, target: bytes, start: int) -> int:
    for i in range(start, len(array)):
        if array[i] == target[0] and _array_equals(array, i, target, len(target)):
            return i
    return -1


def split_bytes(data: bytes | None, delimiter: bytes | None) -> list[bytes] | None:
    """SPLIT(bytes, delimiter): null for a null argument; every byte for an empty delimiter."""
    if data is None or delimiter is None:
        return None
    data, delimiter = bytes(data), bytes(delimiter)
    if not data:
        return [b""]
    if not delimiter:
        return [data[i : i + 1] for i in range(len(data))]
    out: list[bytes] = []
    offset = 0
    while (found := _index_of(data, delimiter, offset)) != -1:
        out.append(data[offset:found])
        offset = found + len(delimiter)
    out.append(data[offset:])
    return out
