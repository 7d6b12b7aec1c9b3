"""Repository-level pytest configuration: the shared SparkSession fixture and markers.

The qtt plugin itself is loaded through its ``pytest11`` entry point.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@pytest.fixture(scope="session")
def spark() -> SparkSession:
    """The one SparkSession of this test process (started on first use)."""
    from qtt.runtime.session import get_session

    return get_session()


@pytest.fixture
def no_active_streams(spark: SparkSession) -> Iterator[None]:
    """Stop every streaming query a test leaves running."""
    yield
    for query in spark.streams.active:
        query.stop()
