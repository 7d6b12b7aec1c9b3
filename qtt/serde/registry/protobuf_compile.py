"""``.proto`` text to message classes, with protoc (``grpcio-tools``) as the parser.

A registry holds Protobuf schemas as ``.proto`` text; Confluent's Python serializers need
generated message classes. protoc parses the text into ``FileDescriptorProto`` messages (its
imports of well-known files, Confluent's ``confluent/meta.proto`` and ``confluent/type/decimal.proto``
and ``google/type/*.proto``, resolve against the descriptors Confluent's client ships), and
``message_factory.GetMessageClass`` builds the classes in a pool of their own. Everything is
cached per schema text, so a Spark worker parses each schema once.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from qtt.errors import StatementError
from qtt.serde.excerpt import excerpt

#: the file name protoc gives the schema being parsed
MAIN_FILE = "qtt_schema.proto"


@dataclass(frozen=True)
class ParsedSchema:
    """A schema's files (its references first, itself last) and the pool holding them."""

    files: tuple[Any, ...]
    pool: Any

    @property
    def main(self) -> Any:
        """The schema's own ``FileDescriptorProto``."""
        return self.files[-1]

    def message_names(self) -> list[str]:
        """The full names of the schema's top-level messages, in declaration order."""
        package = self.main.package
        return [f"{package}.{m.name}" if package else m.name for m in self.main.message_type]

    def descriptor(self, full_name: str | None = None) -> Any:
        """The message called ``full_name`` (with or without its package), else the first one.

        Raises:
            StatementError: the schema has no such message, or no message at all.
        """
        names = self.message_names()
        if not names:
            raise StatementError("Protobuf schema has no message type")
        if full_name is None:
            return self.pool.FindMessageTypeByName(names[0])
        for name in names:
            if full_name in (name, name.rpartition(".")[2]):
                return self.pool.FindMessageTypeByName(name)
        msg = f"Schema full name {full_name} not found in schema: {', '.join(names)}"
        raise StatementError(msg)

    def alone(self, full_name: str) -> Any:
        """The schema's own ``FileDescriptorProto`` as Kafka Connect's Protobuf converter
        registers it for message ``full_name``, without imports (they follow from the types a
        file uses), for a comparison by content.

        The converter writes the one message: every message type it uses that is not nested in
        it (another top-level message, a message of a referenced file) becomes a message nested
        in the one that uses it, under its own name, as a Connect struct does; the well-known
        types (``google.*``, ``confluent.*``) stay as they are, and so do enums.

        Raises:
            StatementError: the schema has no such message.
        """
        target = self.descriptor(full_name)
        main = self.main
        prefix = f".{main.package}." if main.package else "."
        alone = self.content()
        del alone.message_type[:], alone.enum_type[:]
        message = _inlined(target, "." + target.full_name, [])
        alone.message_type.append(message)
        used = set(_used_types(message))
        alone.enum_type.extend(e for e in main.enum_type if prefix + e.name in used)
        return alone

    def content(self) -> Any:
        """A copy of the schema's own ``FileDescriptorProto`` without its imports."""
        content = type(self.main)()
        content.CopyFrom(self.main)
        del content.dependency[:]
        return content

    def message_class(self, full_name: str | None = None) -> Any:
        """The generated class of a message (see :meth:`descriptor`)."""
        from google.protobuf.message_factory import GetMessageClass

        return GetMessageClass(self.descriptor(full_name))


def _used_types(message: Any) -> list[str]:
    """The full names (``.pkg.Name``) of the types a message's fields and nested messages use."""
    used = [field.type_name for field in message.field if field.type_name]
    for nested in message.nested_type:
        used += _used_types(nested)
    return used


#: the files whose messages Connect maps to logical types and back to themselves
_WELL_KNOWN = ("google/", "confluent/")


def _inlined(descriptor: Any, path: str, renames: list[tuple[str, str]]) -> Any:
    """``descriptor`` as a ``DescriptorProto`` placed at ``path`` (``.pkg.Outer.Name``), with
    every message type it uses from outside the messages being written nested in it
    (:meth:`ParsedSchema.alone`). ``renames`` maps each enclosing message's full name to its
    new path."""
    from google.protobuf import descriptor_pb2

    proto = descriptor_pb2.DescriptorProto()
    descriptor.CopyToProto(proto)
    renames = [*renames, ("." + descriptor.full_name, path)]
    del proto.nested_type[:]
    proto.nested_type.extend(_inlined(nested, f"{path}.{nested.name}", renames) for nested in descriptor.nested_types)
    for field, found in zip(proto.field, descriptor.fields, strict=True):
        used = found.message_type or found.enum_type
        if used is None:
            continue
        name = "." + used.full_name
        within = [(old, new) for old, new in renames if name == old or name.startswith(old + ".")]
        if within:
            old, new = max(within, key=lambda pair: len(pair[0]))
            field.type_name = new + name[len(old) :]
        elif found.message_type is not None and not used.file.name.startswith(_WELL_KNOWN):
            field.type_name = f"{path}.{used.name}"
            if all(nested.name != used.name for nested in proto.nested_type):
                proto.nested_type.append(_inlined(used, field.type_name, renames))
    return proto


_LOCK = threading.Lock()


def parse(text: str, references: Sequence[tuple[str, str]] = ()) -> ParsedSchema:
    """The parsed schema for ``.proto`` text, with ``references`` as (import name, text).

    Raises:
        StatementError: protoc rejects the text, with protoc's message.
    """
    return _parse(text, tuple(references))


@cache
def _parse(text: str, references: tuple[tuple[str, str], ...]) -> ParsedSchema:
    from google.protobuf import descriptor_pb2
    from google.protobuf.descriptor_pool import DescriptorPool

    for name, body in references:
        _check_import_name(name)
        _check_text(body, f"its import {excerpt(repr(name))}")
    _check_text(text, "the schema")
    written = (*references, (MAIN_FILE, with_meta_import(text)))
    with _LOCK, tempfile.TemporaryDirectory(prefix="qtt-proto-") as folder:
        for name, body in written:
            path = os.path.join(folder, name)
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as out:
                    out.write(body)
            except OSError as e:
                msg = (
                    f"Failed to parse Protobuf schema: its import {excerpt(repr(name))} cannot be written: {e.strerror}"
                )
                raise StatementError(msg) from None
        builtins = os.path.join(folder, "qtt-builtins.pb")
        with open(builtins, "wb") as out:
            out.write(_builtin_set().SerializeToString())
        target = os.path.join(folder, "qtt-out.pb")
        args = [f"--proto_path={folder}", f"--descriptor_set_in={builtins}", f"--descriptor_set_out={target}"]
        args += ["--include_imports", MAIN_FILE]
        if _protoc(args) != 0 or not os.path.exists(target):
            raise StatementError(f"Failed to parse Protobuf schema: {_protoc_message(args, folder)}")
        found = descriptor_pb2.FileDescriptorSet()
        with open(target, "rb") as source:
            found.ParseFromString(source.read())
    builtin_names = {f.name for f in _builtin_set().file}
    files = tuple(f for f in found.file if f.name not in builtin_names)
    pool = DescriptorPool()
    from confluent_kafka.schema_registry.common.protobuf import _init_pool

    _init_pool(pool)
    for file in files:
        pool.Add(file)
    return ParsedSchema(files=files, pool=pool)


#: the names of the files qtt writes next to the schema's own
_RESERVED = frozenset([MAIN_FILE, "qtt-builtins.pb", "qtt-out.pb"])


def _check_import_name(name: str) -> None:
    """Reject an import name that is not a relative path inside the folder protoc parses in.

    Raises:
        StatementError: naming the import.
    """
    shown = f"its import name {excerpt(repr(name))}"
    if name in _RESERVED:
        msg = f"Failed to parse Protobuf schema: {shown} is a name qtt gives its own files; name the import otherwise"
        raise StatementError(msg)
    parts = name.replace("\\", "/").split("/")
    if not name or os.path.isabs(name) or ".." in parts or "\0" in name:
        msg = f"Failed to parse Protobuf schema: {shown} is not a relative path such as 'crate.proto'"
        raise StatementError(msg)
    _check_text(name, shown)


def _check_text(text: str, what: str) -> None:
    """Reject text that is not Unicode: a lone surrogate, which a case file's JSON can spell as
    ``\\ud800`` and no UTF-8 file can hold.

    Raises:
        StatementError: naming the character's line and column.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as e:
        line = text.count("\n", 0, e.start) + 1
        column = e.start - text.rfind("\n", 0, e.start)
        msg = (
            f"Failed to parse Protobuf schema: {what} holds a lone surrogate \\u{ord(text[e.start]):04x} "
            f"at line {line}:{column}; expected Unicode text, as a .proto file is UTF-8"
        )
        raise StatementError(msg) from None


_SYNTAX = re.compile(r"""\bsyntax\s*=\s*["']proto[23]["']\s*;""")


def with_meta_import(text: str) -> str:
    """``text``, importing ``confluent/meta.proto`` where it uses Confluent's field options without it.

    Schemas registered by Confluent's tools write ``(confluent.field_meta)`` on decimals and
    often import only ``confluent/type/decimal.proto``; the registry's own parser accepts them,
    protoc wants the option's file imported.
    """
    if "(confluent." not in text or "confluent/meta.proto" in text:
        return text
    statement = 'import "confluent/meta.proto";'
    found = _SYNTAX.search(text)
    if found is None:
        return f"{statement}\n{text}"
    return f"{text[: found.end()]} {statement}{text[found.end() :]}"


def _protoc(args: list[str]) -> int:
    from grpc_tools import protoc

    return int(protoc.main(["protoc", *args]))


def _protoc_message(args: list[str], folder: str) -> str:
    """protoc's own message for a failed parse (protoc prints it; a child process captures it)."""
    done = subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", *args],
        capture_output=True,
        text=True,
        cwd=folder,
        check=False,
    )
    text = (done.stderr or done.stdout).strip().replace(f"{folder}{os.sep}", "")
    return text.replace(MAIN_FILE + ":", "line ") or "protoc rejected the schema"


@cache
def _builtin_set() -> Any:
    """The files a schema may import without a reference, as one ``FileDescriptorSet``."""
    from confluent_kafka.schema_registry.common.protobuf import _init_pool
    from google.protobuf import descriptor_pb2
    from google.protobuf.descriptor_pool import DescriptorPool

    pool = DescriptorPool()
    _init_pool(pool)
    names = [
        "google/protobuf/descriptor.proto",
        "google/protobuf/any.proto",
        "google/protobuf/duration.proto",
        "google/protobuf/empty.proto",
        "google/protobuf/struct.proto",
        "google/protobuf/timestamp.proto",
        "google/protobuf/wrappers.proto",
        "google/type/date.proto",
        "google/type/timeofday.proto",
        "google/type/datetime.proto",
        "google/type/money.proto",
        "google/type/latlng.proto",
        "confluent/meta.proto",
        "confluent/type/decimal.proto",
    ]
    found = descriptor_pb2.FileDescriptorSet()
    done: set[str] = set()

    def add(name: str) -> None:
        if name in done:
            return
        done.add(name)
        file = pool.FindFileByName(name)
        for dependency in file.dependencies:
            add(dependency.name)
        proto = found.file.add()
        file.CopyToProto(proto)

    for name in names:
        add(name)
    return found
