"""The QTT harness: case files, replay, comparison, historical plans and reports.

The CLI and the pytest plugin are thin adapters over this package.
"""

from __future__ import annotations
