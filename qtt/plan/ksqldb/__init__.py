"""ksqlDB's persisted execution plans (``plan.json`` of its historical plans) translated into qtt's.

Each ksqlDB step type and version has a translator (:mod:`qtt.plan.ksqldb.context`); the
translation types ksqlDB's expression text with qtt's SQL front end, and keeps the semantics of
the version that wrote the step. A step whose semantics no qtt step has does not translate
(:class:`~qtt.plan.ksqldb.context.Untranslatable`), and its replay is a skip naming it.
"""
