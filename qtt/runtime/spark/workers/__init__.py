"""Spark's Python workers: how they are started (:mod:`.launcher`, :mod:`.warm_start`) and how
they keep their memory (:mod:`.worker_memory`). Nothing here imports pyspark at import time."""
