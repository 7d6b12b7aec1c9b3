"""Spark implementations of ksqlDB's lambda invocation functions (TRANSFORM, REDUCE, FILTER).

Registered with :func:`qtt.runtime.builtins.registry.implements`; the signatures are in
the matching section of :mod:`qtt.plan.scalar_signatures`.
"""

from __future__ import annotations
