"""qtt: query translation tests for streaming SQL on Apache Spark."""

from __future__ import annotations

from typing import Any

__all__ = ["__version__"]


def __getattr__(name: str) -> Any:
    # Looked up on first use: reading the installed metadata scans every distribution on the
    # path, and each Python worker Spark starts imports this package.
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            found = version("qtt")
        except PackageNotFoundError:  # running from a source tree that was never installed
            found = "0.0.0+unknown"
        globals()["__version__"] = found
        return found
    raise AttributeError(f"module 'qtt' has no attribute {name!r}")
