"""Plan -> PySpark Structured Streaming. The only package that imports pyspark."""

from __future__ import annotations
