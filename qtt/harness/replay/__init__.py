"""Replaying case variants on Spark and judging them: driver, runner, scenarios, comparison.

Entry points: :func:`qtt.harness.replay.runner.run_variants` (plan, replay, compare one variant)
and :func:`qtt.harness.replay.driver.replay_many` (the inputs encoded, queries run in order,
sinks decoded); :mod:`~qtt.harness.replay.scenarios` runs a case under restart, rebatch, batch.
"""
