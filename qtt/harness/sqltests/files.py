"""Load SQL test files: ksqlDB's SQL-format tests (its ``KsqlTester`` files).

A file holds tests, each begun by a ``--@test: name`` line. Directive lines after it say what
the test expects to fail (``--@expected.error: <exception class>``, ``--@expected.message:
<text the message contains>``); the statements of the test follow, up to the next
``--@test:``; a directive's name is read in any case, as ksqlDB reads it. Any other ``--@``
directive is an error (ksqlDB ignores it), named with its file and line, so a typo
never turns a test into a test of nothing. Comments and blank lines are kept as blank lines:
a statement's line in its test is its line in the file.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from qtt.errors import CaseFileError
from qtt.harness.cases.loader import read_case_text

SUFFIX = ".sql"
_DIRECTIVE = re.compile(r"^--@([A-Za-z.]+):\s?(.*)$")
_KNOWN = ("test", "expected.error", "expected.message")


@dataclass(frozen=True)
class SqlTest:
    """One test of a SQL test file."""

    file: str
    name: str
    #: position of the test in its file, from 0
    index: int
    #: the line of its ``--@test:`` directive, from 1
    line: int
    #: the file's text with every line outside the test blanked: positions are the file's
    script: str
    expected_error: str | None = None
    expected_message: str | None = None

    @property
    def has_statements(self) -> bool:
        return any(line.strip() and not line.lstrip().startswith("--") for line in self.script.splitlines())


def load_sql_tests(path: str | Path, *, display: str | None = None) -> list[SqlTest]:
    """Every test of a SQL test file, in file order.

    Raises:
        CaseFileError: the file cannot be read, has statements before its first test, or an
            unknown directive.
    """
    shown = display or str(path)
    return parse_sql_tests(read_case_text(path, shown), file=shown)


def parse_sql_tests(text: str, *, file: str) -> list[SqlTest]:
    """Every test of a SQL test file's text; errors name ``file`` and the line.

    Raises:
        CaseFileError: a statement before the first test, or an unknown directive.
    """
    shown = file
    lines = text.splitlines()
    tests: list[SqlTest] = []
    start: int | None = None
    name = ""
    expected: dict[str, str] = {}

    def close(end: int) -> None:
        if start is None:
            return
        body = [""] * start + [_blank_directive(line) for line in lines[start:end]]
        tests.append(
            SqlTest(
                file=shown,
                name=name,
                index=len(tests),
                line=start,
                script="\n".join(body),
                expected_error=expected.get("expected.error"),
                expected_message=expected.get("expected.message"),
            )
        )

    for number, line in enumerate(lines, start=1):
        match = _DIRECTIVE.match(line.strip())
        if match is None:
            if start is None and line.strip() and not line.lstrip().startswith("--"):
                msg = "a statement before the first test: every statement belongs to a test begun by '--@test: name'"
                raise CaseFileError(msg, file=shown, line=number)
            continue
        key, value = match.group(1).lower(), match.group(2).strip()  # ksqlDB reads the name in any case
        if key not in _KNOWN:
            msg = f"unknown directive '--@{key}:'; a SQL test file knows {', '.join('--@' + k + ':' for k in _KNOWN)}"
            raise CaseFileError(msg, file=shown, line=number)
        if key == "test":
            close(number - 1)
            start, name, expected = number, value, {}
        elif start is None:
            raise CaseFileError(f"'--@{key}:' before the first '--@test:'", file=shown, line=number)
        else:
            expected[key] = value
    close(len(lines))
    return tests


def discover_sql(paths: Iterable[str | Path]) -> list[Path]:
    """SQL test files under ``paths``: ``*.sql`` files, searched recursively in directories."""
    found: list[Path] = []
    for path in paths:
        p = Path(path)
        if p.is_dir():
            found.extend(sorted(q for q in p.rglob(f"*{SUFFIX}") if q.is_file()))
        elif p.suffix == SUFFIX and p.is_file():
            found.append(p)
    return found


def _blank_directive(line: str) -> str:
    return "" if line.strip().startswith("--") else line
