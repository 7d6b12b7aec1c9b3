"""The schema-registry formats: AVRO, PROTOBUF, JSON_SR and the registry they talk to.

Confluent's serializers write and read the bytes; :mod:`~qtt.serde.registry.schema_registry` is
the registry of a replay (and its snapshot for Spark's workers).
"""
