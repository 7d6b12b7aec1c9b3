"""SQL test files (ksqlDB's SQL-format tests): loaded, interpreted without Spark, then run.

Entry points: :func:`qtt.harness.sqltests.files.load_sql_tests` and
:func:`qtt.harness.sqltests.run.run_sql_tests`.
"""
