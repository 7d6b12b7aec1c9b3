"""Typing SQL expressions: the analyzer and ksqlDB's coercion rules.

Entry point: :class:`qtt.plan.analysis.analyzer.Analyzer` turns AST expressions into typed plan
expressions against a scope of visible columns, with :mod:`~qtt.plan.analysis.coercion` (implicit
casts, widening, comparisons) and ksqlDB's messages (:mod:`~qtt.plan.analysis.messages`).
"""
