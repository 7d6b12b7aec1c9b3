"""The public build context: what a step builder may use, and the table of step builders.

The core builder (:class:`qtt.runtime.build.builder.PlanBuilder`) builds the stateless steps;
the stateful ones are built by the operators of :mod:`qtt.runtime.operators`, which register
their builders here with :func:`builds`. A builder is a function ``(context, step, *inputs)``
returning a :class:`Built`; it sees the query being built only through :class:`BuildContext`,
so the core builder imports none of the operators.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as st

from qtt.plan.ir import steps as s
from qtt.plan.ir.schema import Column as SchemaColumn
from qtt.plan.ir.schema import LogicalSchema
from qtt.runtime.build import serde_udfs
from qtt.runtime.build.names import PSEUDO_COLUMNS, col
from qtt.runtime.spark.spark_types import to_spark

if TYPE_CHECKING:
    from qtt.serde.registry.schema_registry import RegistrySnapshot

StepT = TypeVar("StepT", bound=s.ExecutionStep)

#: the Spark types of ksqlDB's pseudo columns
PSEUDO_TYPES: dict[str, st.DataType] = {name: to_spark(type_) for name, type_ in PSEUDO_COLUMNS.items()}

#: key formats whose bytes carry a schema id: their keys are ordered by JSON text instead
_REGISTRY_FORMATS = frozenset({"AVRO", "PROTOBUF", "PROTOBUF_NOSR", "JSON_SR"})


@dataclass
class Built:
    """A built step: its DataFrame and its logical schema (key and value columns)."""

    df: DataFrame
    schema: LogicalSchema


class StateProcessor(Protocol):
    """A ``transformWithState`` processor that names its state variables (see operators.stateful)."""

    #: the label of the query it belongs to, which a stop it raises names
    owner: str

    def state_names(self) -> tuple[str, ...]: ...


#: a stateful operator's stand-in: (its index in build order, input, key columns, processor,
#: output schema) -> the operator's output
StatefulHook = Callable[[int, DataFrame, list[str], Any, st.StructType], DataFrame]


class BuildContext(Protocol):
    """The query being built, as a step builder sees it."""

    #: the schemas the replay's registry holds, for the registry formats
    registry: RegistrySnapshot | None
    #: the query's replay records as they arrive (topic, partition, offset, seq, headers, key, value)
    raw: DataFrame

    def stateful(self, df: DataFrame, keys: Sequence[str], processor: Any, output: st.StructType) -> DataFrame:
        """The one way a step keeps state: ``processor`` over ``df`` grouped by ``keys``."""
        ...

    def emits_previous(self, step: s.ExecutionStep) -> bool:
        """Whether a ``HAVING`` filter above ``step`` needs each key's previous result along."""
        ...

    def schema_of(self, df: DataFrame, key_names: list[str], value_names: list[str]) -> LogicalSchema:
        """The logical schema of ``df``, with types read back from Spark."""
        ...


#: step class -> builder; filled by :func:`builds`.
BUILDERS: dict[type[s.ExecutionStep], Callable[..., Built]] = {}


def builds(step_class: type[StepT]) -> Callable[[Callable[..., Built]], Callable[..., Built]]:
    """Register a function ``(context, step, *inputs) -> Built`` as the builder of ``step_class``."""

    def register(builder: Callable[..., Built]) -> Callable[..., Built]:
        if step_class in BUILDERS:
            raise TypeError(f"two builders for {step_class.type_tag}")
        BUILDERS[step_class] = builder
        return builder

    return register


def builder_for(step_class: type[s.ExecutionStep]) -> Callable[..., Built] | None:
    """The builder registered for ``step_class``, if any."""
    return BUILDERS.get(step_class)


def key_bytes(context: BuildContext, formats: s.Formats, key: Sequence[SchemaColumn]) -> Column:
    """The key columns ``key`` as the state stores' bytes, to order rows by key as Kafka Streams'
    stores do (a registry format's key is ordered by its JSON text instead)."""
    row = F.struct(*[col(c.name) for c in key])
    if formats.key_format.format in _REGISTRY_FORMATS:
        return F.encode(F.to_json(row), "UTF-8")
    return serde_udfs.encode(
        formats.key_format, formats.key_features, key, is_key=True, row=row, topic="", registry=context.registry
    )


def untaken(names: Iterable[str], taken: set[str]) -> list[str]:
    """``names`` without those in ``taken``, in order."""
    return [n for n in names if n not in taken]
