"""Serialization formats: bytes <-> typed rows (runtime) and bytes <-> case-file JSON (harness).

Pure Python. fastavro is imported only inside this package.
"""

from __future__ import annotations

from qtt.serde.formats import Format, SerdeColumn, get_format, known_formats

__all__ = ["Format", "SerdeColumn", "get_format", "known_formats"]
