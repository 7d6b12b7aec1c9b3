"""The deterministic replay source (``format("qtt_replay")``): a Python streaming data
source and its readers, one per kind of Spark line (:mod:`.replay_source`)."""
