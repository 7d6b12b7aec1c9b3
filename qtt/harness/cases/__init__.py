"""Case files: the strict model and loader of ksqlDB's QTT format, slugs, expected errors.

Entry point: :func:`qtt.harness.cases.loader.load_file`.
"""
