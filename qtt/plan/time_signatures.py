"""Scalar function signatures: the date and time section of the table.

Written in :mod:`qtt.plan.signature_dsl`; :mod:`qtt.plan.scalar_signatures` merges every
section into one table. Return types, null rules and errors follow ksqlDB's UDFs.
"""

from __future__ import annotations

from qtt.plan.signature_matching import Function

FUNCTIONS: list[Function] = []
