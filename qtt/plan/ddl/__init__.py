"""Sources and their properties: the metastore, WITH properties, schema inference and upgrades.

What ``CREATE STREAM|TABLE`` declares (:mod:`~qtt.plan.ddl.with_properties`,
:mod:`~qtt.plan.ddl.schema_inference`), what exists so far (:mod:`~qtt.plan.ddl.metastore`), how a
result fits an existing sink (:mod:`~qtt.plan.planner.sink_fit`), and which ``CREATE OR REPLACE``
upgrades a running query may take (:mod:`~qtt.plan.ddl.upgrades`).
"""
