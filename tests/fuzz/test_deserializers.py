"""Fuzz every deserializer: each registered format, keys and values, over a spread of schemas.

The contract: reading any bytes (as the runtime does, and as the harness reads a topic)
returns a row or raises :class:`~qtt.errors.SerdeError`, whose message names the format
and quotes at most a bounded excerpt of the input; and it takes bounded time.
"""

from __future__ import annotations

from typing import Any

import pytest
import simplejson
from hypothesis import assume, event, given
from hypothesis import strategies as st

from qtt import sqltypes as t
from qtt.errors import SerdeError, StatementError
from qtt.serde import Format, SerdeColumn, get_format, known_formats
from qtt.serde.formats import UNWRAP_SINGLE_VALUE, WRAP_SINGLE_VALUE
from qtt.serde.interface import Layout, unsupported_base_in
from qtt.serde.registry.registry_format import RegistryFormat, is_unwrapped
from qtt.serde.registry.schema_registry import Registry, RegistrySnapshot, subject_for
from tests.fuzz.inputs import edge_numbers, json_scalars
from tests.fuzz.profiles import fuzz_settings

pytestmark = pytest.mark.fuzz

#: longer messages mean the input was quoted whole.
MAX_MESSAGE = 1000

_NAMES = st.sampled_from(["A", "B", "ID", "V", "lower", "Mixed Case", "ÄÖ"])

primitives = st.sampled_from([t.Primitive(name) for name in t.Primitive.NAMES]) | st.builds(
    lambda precision, scale: t.Decimal(precision, min(scale, precision)),
    st.integers(min_value=1, max_value=38),
    st.integers(min_value=0, max_value=38),
)

sql_types = st.recursive(
    primitives,
    lambda inner: st.one_of(
        st.builds(t.Array, inner),
        st.builds(lambda value: t.Map(t.STRING, value), inner),
        st.lists(st.tuples(_NAMES, inner), min_size=1, max_size=3, unique_by=lambda f: f[0]).map(
            lambda fields: t.Struct(tuple(t.Field(name, type_) for name, type_ in fields))
        ),
    ),
    max_leaves=6,
)


@st.composite
def layouts(draw: st.DrawFn) -> tuple[Format, list[SerdeColumn], bool, dict[str, str], frozenset[str]]:
    """A format with columns, side, properties and features that it accepts."""
    format_ = get_format(draw(st.sampled_from(known_formats())))
    is_key = draw(st.booleans())
    most = {"NONE": 0, "KAFKA": 1}.get(format_.name, 4)
    names = draw(st.lists(_NAMES, max_size=most, unique=True))
    supported = format_.supported_types
    types = sql_types if "ARRAY" in supported else primitives.filter(lambda type_: type_.base in supported)
    columns = [SerdeColumn(name, draw(types)) for name in names]
    assume(all(unsupported_base_in(c.type, supported) is None for c in columns))
    properties = {}
    if "delimiter" in format_.supported_properties and draw(st.booleans()):
        properties["delimiter"] = draw(st.sampled_from([",", "|", ";", "TAB", "SPACE", "x", '"']))
    features: set[str] = set()
    if not is_key and len(columns) == 1:
        if format_.supports_unwrapping and draw(st.booleans()):
            features.add(UNWRAP_SINGLE_VALUE)
        elif format_.supports_wrapping and draw(st.booleans()):
            features.add(WRAP_SINGLE_VALUE)
    try:
        format_.validate(columns, is_key=is_key, properties=properties)
    except StatementError:
        assume(False)
    return format_, columns, is_key, properties, frozenset(features)


def _raw(token: str) -> Any:
    return simplejson.RawJSON(token)


json_leaves = st.one_of(json_scalars, edge_numbers.map(_raw), edge_numbers)
json_documents = st.recursive(
    json_leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_NAMES | st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


def _json_bytes(document: Any) -> bytes:
    return simplejson.dumps(document, ensure_ascii=False).encode("utf-8", errors="surrogatepass")


def _csv_bytes(fields: list[str], delimiter: str) -> bytes:
    return delimiter.join(fields).encode("utf-8", errors="surrogatepass")


record_bytes = st.one_of(
    st.binary(max_size=64),
    st.sampled_from([b"", b"\x00" * 4, b"\xff" * 8, b"\xef\xbb\xbf{}", b"[" * 3000 + b"]" * 3000]),
    json_documents.map(_json_bytes),
    st.dictionaries(_NAMES, json_documents, max_size=4).map(_json_bytes),
    st.builds(
        _csv_bytes,
        st.lists(st.one_of(st.text(max_size=10), edge_numbers), min_size=1, max_size=5),
        st.sampled_from([",", "|", ";", "\t", " "]),
    ),
)


TOPIC = "fuzz"


def _check_message(format_: Format, error: SerdeError) -> None:
    assert format_.name.lower() in error.message.lower(), f"the format is not named in: {error.message[:300]}"
    assert len(error.message) <= MAX_MESSAGE, f"a {len(error.message)}-character message: {error.message[:300]}"


def _registered(
    format_: Format, columns: list[SerdeColumn], is_key: bool, properties: dict[str, str], features: frozenset[str]
) -> RegistrySnapshot | None:
    """For a registry format, a registry holding the schema of ``columns`` under id 1."""
    if not isinstance(format_, RegistryFormat) or not format_.uses_registry or not columns:
        return None
    layout = Layout(columns=tuple(columns), is_key=is_key, properties=properties, features=features)
    text = format_.schema_text(columns, is_key=is_key, properties=properties, unwrapped=is_unwrapped(layout))
    registry = Registry()
    registry.register(subject_for(TOPIC, is_key=is_key), format_.schema_type, text)
    return registry.snapshot()


@fuzz_settings
@given(layouts(), record_bytes, st.booleans())
def test_every_deserializer_raises_only_serde_errors_that_name_the_format(
    layout: tuple[Format, list[SerdeColumn], bool, dict[str, str], frozenset[str]], data: bytes, framed: bool
) -> None:
    format_, columns, is_key, properties, features = layout
    registry = _registered(format_, columns, is_key, properties, features)
    if registry is not None and framed:
        data = b"\x00\x00\x00\x00\x01" + data  # past the registry's framing, into the payload
    on_topic = {"topic": TOPIC, "registry": registry}
    deserialize = format_.deserializer(columns, is_key=is_key, properties=properties, features=features, **on_topic)
    try:
        row = deserialize(data)
    except SerdeError as error:
        _check_message(format_, error)
        event(f"{format_.name}: rejected")
    else:
        assert row is None or len(row) == len(columns)
        event(f"{format_.name}: read")
    try:
        format_.to_document(data, columns, is_key=is_key, properties=properties, **on_topic)
    except SerdeError as error:
        _check_message(format_, error)
