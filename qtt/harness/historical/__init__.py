"""Historical plans: the folder store, ``spec.json``, stored checkpoints, replay, snapshot, check.

Entry points: :func:`qtt.harness.historical.replay.replay_folders`,
:func:`qtt.harness.historical.restored.restore_folders`, :func:`qtt.harness.historical.snapshot.snapshot`
and :func:`qtt.harness.historical.uptodate.check`.
"""
