"""The name a function's errors show.

ksqlDB's ``Function 'x' does not accept parameters`` names the function as its UDF declares
itself (the ``@UdfDescription`` name), and most built-ins declare a lower-case name, which is
how ksqlDB's users and tests mostly type them. qtt shows the declared name where it is known
from ksqlDB's source, else the name as the statement wrote it. ``Can't find any functions
with the name`` shows the parsed identifier instead: upper case unless it was quoted.
"""

from __future__ import annotations

# Declared names read in ksqlDB's UDF sources that differ from the lower-case default.
_DECLARED: dict[str, str] = {
    "COALESCE": "COALESCE",
    "IFNULL": "IFNULL",
    "NULLIF": "NULLIF",
    "EXPLODE": "explode",
    "CUBE_EXPLODE": "cube_explode",
}


def shown_name(canonical: str, written: str | None = None) -> str:
    """The name ``Function '...' does not accept parameters`` shows for ``canonical``."""
    return _DECLARED.get(canonical) or written or canonical
