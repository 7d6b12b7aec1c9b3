"""Keeping historical replay alive for years: quarantine marks instead of a switch, renamed and
orphaned folders, and the completeness gate (what ``qtt check`` adds for the whole project)."""
