"""The Avro schema Kafka Connect registers for records written with a declared one.

ksqlDB's test driver produces a case's input records through Kafka Connect's ``AvroConverter``:
the declared schema becomes a Connect schema (``AvroData.toConnectSchema``) and the converter
registers that Connect schema as Avro again (``AvroData.fromConnectSchema``) under the topic's
subject. The round trip keeps names, required fields and the types Connect has, and changes:

- a field whose type is a union of ``null`` and one other type is an optional Connect field:
  it comes back as ``["null", type]`` with ``"default": null`` (unless it had a default);
- an ``enum`` is a Connect string (its symbols kept as ``connect.parameters``).

Connect's own annotations (``connect.name``, ``connect.parameters``) are left out here, as the
post-conditions compare schemas without them. Not modelled, so kept as declared: a union of
several non-null types (a Connect struct of its branches), and a later reference by name to an
enum defined earlier in the schema.

The registry itself keeps the declared schema: its journal is what a historical folder records
and compares, so the round trip is applied where a post-condition reads a subject.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def as_connect_registers(schema: Any) -> Any:
    """``schema`` (Avro, as parsed JSON) after Connect's round trip, as its converter registers it."""
    if isinstance(schema, list):
        return [as_connect_registers(member) for member in schema]
    if not isinstance(schema, Mapping):
        return schema
    kind = schema.get("type")
    if kind == "enum":
        return {"type": "string"}
    if kind == "record":
        return {**schema, "fields": [_field(field) for field in schema.get("fields") or ()]}
    if kind == "array":
        return {**schema, "items": as_connect_registers(schema.get("items"))}
    if kind == "map":
        return {**schema, "values": as_connect_registers(schema.get("values"))}
    return dict(schema)


def _field(field: Mapping[str, Any]) -> dict[str, Any]:
    converted = {**field, "type": as_connect_registers(field.get("type"))}
    members = converted["type"]
    if isinstance(members, list) and len(members) == 2 and "null" in members and "default" not in field:
        other = next(member for member in members if member != "null")
        converted["type"], converted["default"] = ["null", other], None
    return converted
