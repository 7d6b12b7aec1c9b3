"""The schema registry a replay talks to, and the snapshot of it that Spark's workers read.

:class:`Registry` wraps Confluent's own ``SchemaRegistryClient``: by default its in-process
registry (``mock://`` URLs), a fresh one per replay so that the same case always gets the
same ids; a real Confluent-compatible registry when a URL is given. It keeps a journal of
every subject version the replay registered or read, in order, which ``spec.json`` records.

Spark's Python workers are other processes, so they cannot see the driver's in-process
registry. They get a :class:`RegistrySnapshot` (plain, picklable data) inside the query's
UDFs, and read it through a client of the same library seeded with those exact ids.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from qtt.errors import StatementError

if TYPE_CHECKING:
    from confluent_kafka.schema_registry import SchemaRegistryClient

#: environment variable naming a real registry (the CLI's --schema-registry, pytest's --qtt-schema-registry)
REGISTRY_URL_ENV = "QTT_SCHEMA_REGISTRY_URL"
#: a subject's compatibility level on the embedded registry unless set otherwise: none, as on
#: the registry ksqlDB's QTT runs on (Confluent's ``MockSchemaRegistryClient`` registers any
#: schema); a real registry keeps its own level (Confluent's default is BACKWARD)
DEFAULT_COMPATIBILITY = "NONE"


@dataclass(frozen=True, kw_only=True)
class SchemaReference:
    """A schema that another schema imports (Protobuf imports, Avro named types)."""

    name: str
    subject: str
    version: int


@dataclass(frozen=True, kw_only=True)
class RegisteredSchema:
    """One subject version: what a replay registered, or read, under a subject.

    ``origin`` says who put it there: ``"case"`` (the case file's ``topics``, registered
    before the statements run) or ``"statement"`` (a CREATE statement, as ksqlDB's
    ``SchemaRegisterInjector`` does).
    """

    subject: str
    version: int
    schema_id: int
    schema_type: str
    schema: str
    references: tuple[SchemaReference, ...] = ()
    origin: str = "statement"

    def confluent(self) -> Any:
        """The schema as Confluent's client holds it (``confluent_kafka.schema_registry.Schema``)."""
        return _confluent_schema(self.schema_type, self.schema, self.references)


def avro_compatible(new: str, old: str, level: str) -> bool:
    """Whether Avro schema ``new`` may follow ``old`` under a compatibility ``level``."""
    import avro.schema
    from avro.compatibility import ReaderWriterCompatibilityChecker, SchemaCompatibilityType

    checker = ReaderWriterCompatibilityChecker()
    new_schema, old_schema = avro.schema.parse(new), avro.schema.parse(old)
    pairs = []
    if level.startswith(("BACKWARD", "FULL")):
        pairs.append((new_schema, old_schema))  # new readers read old data
    if level.startswith(("FORWARD", "FULL")):
        pairs.append((old_schema, new_schema))  # old readers read new data
    return all(
        checker.get_compatibility(reader=reader, writer=writer).compatibility == SchemaCompatibilityType.compatible
        for reader, writer in pairs
    )


def subject_for(topic: str, *, is_key: bool) -> str:
    """ksqlDB's subject for a topic's keys or values (``<topic>-key``, ``<topic>-value``)."""
    return f"{topic}-{'key' if is_key else 'value'}"


def _confluent_schema(schema_type: str, text: str, references: Iterable[SchemaReference]) -> Any:
    from confluent_kafka.schema_registry import Schema
    from confluent_kafka.schema_registry import SchemaReference as ConfluentReference

    refs = [ConfluentReference(r.name, r.subject, r.version) for r in references]
    return Schema(text, schema_type, refs)


class Registry:
    """One replay's registry: registrations in statement order, each journaled."""

    def __init__(self, url: str | None = None, *, scope: str | None = None) -> None:
        from confluent_kafka.schema_registry import SchemaRegistryClient

        from qtt.serde.registry.registry_container import resolve

        given = url or os.environ.get(REGISTRY_URL_ENV) or None
        self.url = resolve(given) if given else None
        self.embedded = self.url is None or self.url.startswith("mock://")
        self._scope = scope or uuid.uuid4().hex[:12]
        client_url = f"mock://qtt-{self._scope}" if self.url is None else self.url
        self.client: SchemaRegistryClient = SchemaRegistryClient.new_client({"url": client_url})
        # On a shared registry each replay registers in a context of its own (":.qtt-<scope>:"),
        # so cases that use the same topic names never see each other's subjects.
        self._context = "" if self.embedded else f":.qtt-{self._scope}:"
        self.journal: list[RegisteredSchema] = []
        #: subject -> compatibility level, for the embedded registry (a real one keeps its own)
        self.compatibility: dict[str, str] = {}

    def register(
        self,
        subject: str,
        schema_type: str,
        text: str,
        references: tuple[SchemaReference, ...] = (),
        *,
        origin: str = "statement",
        schema_id: int | None = None,
    ) -> RegisteredSchema:
        """Register ``text`` under ``subject`` (a no-op if that exact schema is there already).

        ``schema_id`` asks for that id, as a case file's ``valueSchemaId`` does; the embedded
        registry gives it, a real one gives its own (registries assign ids unless imported).

        Raises:
            StatementError: the registry refused it, with the registry's reason (ksqlDB's
                "Could not register schema for topic" message).
        """
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        if schema_type == "AVRO" and not text.lstrip().startswith(("{", "[")):
            # a bare primitive ("int"), in the object form Confluent's Avro serde reads it as
            text = '{"type":' + text.strip() + "}"
        schema = _confluent_schema(schema_type, text, references)
        if self.embedded:
            self._check_compatible(subject, schema_type, text)
        if schema_id is not None and self.embedded:
            latest = self.latest(subject)
            registered = RegisteredSchema(
                subject=subject,
                version=latest.version + 1 if latest is not None else 1,
                schema_id=schema_id,
                schema_type=schema_type,
                schema=text,
                references=references,
                origin=origin,
            )
            _store(self.client, [registered])
            self._note(registered)
            return registered
        try:
            found = self.client.register_schema_full_response(self._context + subject, schema)
            version = self.client.lookup_schema(self._context + subject, schema).version
        except SchemaRegistryError as e:
            msg = f"Could not register schema for topic: {e.error_message} ({subject})"
            raise StatementError(msg) from None
        registered = RegisteredSchema(
            subject=subject,
            version=int(version if version is not None else found.version or 1),
            schema_id=int(found.schema_id or 0),
            schema_type=schema_type,
            schema=text,
            references=references,
            origin=origin,
        )
        self._note(registered)
        return registered

    def _check_compatible(self, subject: str, schema_type: str, text: str) -> None:
        """Refuse what the subject's compatibility level refuses, as a registry does (HTTP 409).

        The embedded registry of Confluent's client checks nothing, so for a subject given a
        level qtt checks Avro schemas with Apache Avro's own checker; Protobuf and JSON schemas
        are not checked there.
        """
        level = self.compatibility.get(subject, DEFAULT_COMPATIBILITY)
        earlier = [known for known in self.journal if known.subject == subject]
        if schema_type != "AVRO" or level == "NONE" or not earlier:
            return
        if any(known.schema == text for known in earlier):
            return
        checked = earlier if level.endswith("_TRANSITIVE") else earlier[-1:]
        for known in checked:
            if known.schema_type == "AVRO" and not avro_compatible(text, known.schema, level):
                msg = (
                    "Could not register schema for topic: Schema being registered is incompatible with an "
                    f'earlier schema for subject "{subject}" ({level} compatibility); error code: 409'
                )
                raise StatementError(msg)

    def latest(self, subject: str) -> RegisteredSchema | None:
        """The subject's latest version, or None when the subject does not exist."""
        for known in reversed(self.journal):
            if known.subject == subject:
                return known
        if self.embedded:
            return None
        from confluent_kafka.schema_registry.error import SchemaRegistryError

        try:
            found = self.client.get_latest_version(self._context + subject)
        except SchemaRegistryError:
            return None
        return self._read(found, subject)

    def _read(self, found: Any, subject: str) -> RegisteredSchema:
        schema = found.schema
        read = RegisteredSchema(
            subject=subject,
            version=int(found.version or 0),
            schema_id=int(found.schema_id or 0),
            schema_type=schema.schema_type or "AVRO",
            schema=schema.schema_str or "",
            references=tuple(
                SchemaReference(name=r.name, subject=r.subject, version=r.version) for r in schema.references or ()
            ),
            origin="read",
        )
        self._note(read)
        return read

    def _note(self, registered: RegisteredSchema) -> None:
        if registered not in self.journal:
            self.journal.append(registered)

    def snapshot(self) -> RegistrySnapshot:
        """Everything this replay registered or read, for Spark's workers."""
        return RegistrySnapshot(schemas=tuple(self.journal))


@dataclass(frozen=True)
class RegistrySnapshot:
    """The subject versions a replay knows, as plain data that travels inside Spark's UDFs."""

    schemas: tuple[RegisteredSchema, ...] = ()

    def latest(self, subject: str) -> RegisteredSchema | None:
        for known in reversed(self.schemas):
            if known.subject == subject:
                return known
        return None

    def by_id(self, schema_id: int) -> RegisteredSchema | None:
        for known in self.schemas:
            if known.schema_id == schema_id:
                return known
        return None

    def client(self) -> SchemaRegistryClient:
        """A client of Confluent's library that serves exactly these subject versions and ids."""
        with _CLIENTS_LOCK:
            found = _CLIENTS.get(self)
            if found is None:
                found = _CLIENTS[self] = seeded_client(self.schemas)
            return found


_CLIENTS: dict[RegistrySnapshot, Any] = {}
_CLIENTS_LOCK = threading.Lock()


def seeded_client(schemas: Iterable[RegisteredSchema]) -> SchemaRegistryClient:
    """Confluent's in-process registry, holding ``schemas`` under their original ids.

    The in-process registry numbers schemas itself (1, 2, ...); a snapshot of a real registry
    has other ids, so each schema is stored with its own id through the store that
    ``MockSchemaRegistryClient`` keeps (``tests/serde/test_registry.py`` guards this against a
    library upgrade).
    """
    from confluent_kafka.schema_registry import SchemaRegistryClient

    client = SchemaRegistryClient.new_client({"url": f"mock://qtt-worker-{uuid.uuid4().hex[:8]}"})
    _store(client, schemas)
    return client


def _store(client: SchemaRegistryClient, schemas: Iterable[RegisteredSchema]) -> None:
    """Put ``schemas`` into an in-process registry under their own ids, keeping its id counter past them."""
    from confluent_kafka.schema_registry import RegisteredSchema as ConfluentRegistered

    store = client._store  # type: ignore[attr-defined]
    top = store.max_id
    for known in schemas:
        store.max_id = known.schema_id - 1
        store.set(
            ConfluentRegistered(
                schema_id=known.schema_id,
                guid=None,
                schema=_confluent_schema(known.schema_type, known.schema, known.references),
                subject=known.subject,
                version=known.version,
            )
        )
        top = max(top, known.schema_id)
    store.max_id = top
