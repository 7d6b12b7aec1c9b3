"""Aggregate function implementations (UDAFs): pure Python, with Java's arithmetic and ordering.

Entry point: :func:`qtt.runtime.aggregates.aggregators.implementation_for`.
"""
