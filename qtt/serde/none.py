"""The NONE format: a key with no columns. Nothing is written and nothing is read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from qtt import sqltypes as t
from qtt.errors import StatementError
from qtt.serde.formats import Deserializer, Format, SerdeColumn, Serializer, register


class NoneFormat(Format):
    name: ClassVar[str] = "NONE"
    supported_types: ClassVar[frozenset[str]] = frozenset()

    def validate(self, columns: Sequence[SerdeColumn], *, is_key: bool, properties: Mapping[str, str]) -> None:
        if columns:
            suffix = " KEY" if is_key else ""
            shown = ", ".join(f"{t.quote(c.name)} {c.type}{suffix}" for c in columns)
            msg = f"The '{self.name}' format can only be used when no columns are defined. Got: [{shown}]"
            raise StatementError(msg)

    def serializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
    ) -> Serializer:
        return lambda row: None

    def deserializer(
        self,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
        features: frozenset[str],
    ) -> Deserializer:
        return lambda data: ()

    def from_document(
        self,
        document: Any,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
    ) -> bytes | None:
        return None if document is None else str(document).encode("utf-8")

    def to_document(
        self,
        data: bytes | None,
        columns: Sequence[SerdeColumn],
        *,
        is_key: bool,
        properties: Mapping[str, str],
    ) -> Any:
        return None if data is None else data.decode("utf-8", errors="replace")


NONE = register(NoneFormat())
