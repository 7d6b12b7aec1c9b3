"""The function tables: every scalar, aggregate and table function's signatures, and matching.

Signatures are written in a small DSL (:mod:`~qtt.plan.functions.signature_dsl`) and matched
against argument types by :mod:`~qtt.plan.functions.signature_matching`. Entry points:
:mod:`~qtt.plan.functions.scalar_signatures` and :mod:`~qtt.plan.functions.aggregate_signatures`.
"""
