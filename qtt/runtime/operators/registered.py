"""Importing this module registers the stateful steps' builders with the core builder."""

from qtt.runtime.operators import aggregate_builder, fk_join_builder, gates, join_builder, table_filter  # noqa: F401 (registers)
