"""ksqlDB's own historical plans, replayed on Spark: folders read (:mod:`.folders`), plans
translated by :mod:`qtt.plan.ksqldb`, cases replayed and compared (:mod:`.replay`)."""
