"""The documentation: links that resolve, a short README, and no pointers outside the repository.

Markdown is read with a few regular expressions (no Markdown library is a dependency): inline
links ``[text](target)`` and images, reference definitions ``[ref]: target``, and ATX headings
``# Title``, all outside fenced code blocks and inline code. Anchors are GitHub's heading slugs.
These tests need no Spark.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote

import pytest

ROOT = Path(__file__).resolve().parents[1]
README_MAX_LINES = 200

#: the Markdown files whose links must resolve
DOC_FILES = ("README.md", "CHANGELOG.md", "CONTRIBUTING.md", "docs/**/*.md")
#: the text files that must not point at the folder beside the repository
TEXT_FILES = (
    *DOC_FILES,
    "pyproject.toml",
    "tox.ini",
    ".ci/run",
    "conftest.py",
    "qtt/**/*.py",
    "tests/**/*.py",
)
#: a relative path out of the repository into its sibling folder (spelled so that this file
#: does not hold it)
OUTSIDE = "/".join(("..", "shared", ""))

#: the README's first two commands: set up and run qtt, set up and run the tests
FIRST_COMMANDS = (
    "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/qtt run",
    "python3 -m venv .venv && .venv/bin/pip install -e '.[test]' && .venv/bin/pytest",
)

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
_REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
_HTML_ANCHOR = re.compile(r"<a\s+(?:[^>]*\s)?(?:id|name)=\"([^\"]+)\"", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
#: history in a page that should say only what is true now ("since 0.12.0", "release 0.8.0")
_HISTORY = re.compile(r"\b(?:since|until|release) (?:qtt )?0\.\d+\.\d+", re.IGNORECASE)


def _files(patterns: tuple[str, ...], root: Path = ROOT) -> list[Path]:
    found: set[Path] = set()
    for pattern in patterns:
        found.update(p for p in root.glob(pattern) if p.is_file() and "__pycache__" not in p.parts)
    return sorted(found)


def _prose_lines(text: str) -> Iterator[str]:
    """The lines of ``text`` outside fenced code blocks, with inline code spans blanked."""
    fence: str | None = None
    for line in text.splitlines():
        opening = _FENCE.match(line)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        yield _INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)


def links(text: str) -> list[str]:
    """Every link target in Markdown ``text``: inline links, images and reference definitions."""
    found: list[str] = []
    for line in _prose_lines(text):
        found += [m.group(1) for m in _INLINE_LINK.finditer(line)]
        if reference := _REFERENCE.match(line):
            found.append(reference.group(1))
    return [target[1:-1] if target.startswith("<") and target.endswith(">") else target for target in found]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text, not its target
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of Markdown ``text``: heading slugs (repeats numbered as GitHub does) and HTML ids."""
    found: set[str] = set()
    counts: dict[str, int] = {}
    for line in _prose_lines(text):
        found.update(_HTML_ANCHOR.findall(line))
        if heading := _HEADING.match(line):
            base = slug(heading.group(2))
            count = counts.get(base, 0)
            counts[base] = count + 1
            found.add(f"{base}-{count}" if count else base)
    return found


def broken_links(file: Path, root: Path = ROOT) -> list[str]:
    """The relative links of Markdown ``file`` that do not resolve, each with the reason."""
    problems: list[str] = []
    for target in links(file.read_text(encoding="utf-8")):
        if _SCHEME.match(target) or target.startswith("//"):
            continue  # an absolute URL: not checked here
        path_part, _, anchor = target.partition("#")
        path_part = unquote(path_part)
        if path_part.startswith("/"):
            problems.append(f"{target}: a link from the file system's root; make it relative")
            continue
        linked = (file.parent / path_part).resolve() if path_part else file
        if not linked.exists():
            problems.append(f"{target}: {path_part} does not exist")
            continue
        if not linked.is_relative_to(root.resolve()):
            problems.append(f"{target}: points outside the repository")
            continue
        if anchor and linked.suffix == ".md" and unquote(anchor) not in anchors(linked.read_text(encoding="utf-8")):
            problems.append(f"{target}: no heading in {linked.name} has the anchor #{anchor}")
    return problems


@pytest.mark.parametrize("file", _files(DOC_FILES), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(file: Path) -> None:
    problems = broken_links(file)
    assert not problems, f"{file.relative_to(ROOT)} has broken links:\n" + "\n".join(problems)


def test_the_docs_are_there() -> None:
    names = {str(p.relative_to(ROOT)) for p in _files(DOC_FILES)}
    expected = {"README.md", "CHANGELOG.md", "CONTRIBUTING.md", "docs/guide.md", "docs/architecture.md"}
    assert expected <= names, f"missing: {sorted(expected - names)}"


def test_the_link_checker_finds_broken_links(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "guide.md").write_text("# Guide\n\n## Running qtt: the basics\n\ntext\n", encoding="utf-8")
    page = tmp_path / "README.md"
    page.write_text(
        "# Title\n\n"
        "[fine](docs/guide.md) and [fine too](docs/guide.md#running-qtt-the-basics), [here](#title),\n"
        "[web](https://example.com/x.md), ![image](docs/guide.md)\n"
        "[missing file](docs/nothing.md), [missing anchor](docs/guide.md#running),\n"
        "[missing here](#nowhere), `[in code](docs/nothing.md)`\n\n"
        "```\n[in a fence](docs/also-nothing.md)\n```\n\n"
        "[ref]: docs/gone.md\n",
        encoding="utf-8",
    )
    problems = broken_links(page, root=tmp_path)
    assert [p.split(":")[0] for p in problems] == [
        "docs/nothing.md",
        "docs/guide.md#running",
        "#nowhere",
        "docs/gone.md",
    ]


def test_slugs_are_githubs() -> None:
    assert slug("Stateful operators: the contract") == "stateful-operators-the-contract"
    assert slug("Spark's logs and `scratch` folders") == "sparks-logs-and-scratch-folders"
    assert slug("0.13.0") == "0130"
    assert slug("Stream-stream with GRACE PERIOD") == "stream-stream-with-grace-period"
    assert anchors("# A\n## A\n```\n# not a heading\n```\n") == {"a", "a-1"}


def test_the_readme_is_short() -> None:
    lines = len((ROOT / "README.md").read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines (at most {README_MAX_LINES}): move reference material to docs/"
    )


def test_the_readme_starts_with_the_two_commands() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"^```sh\n(.*?)\n```$", text, flags=re.MULTILINE | re.DOTALL)
    assert tuple(blocks[:2]) == FIRST_COMMANDS


@pytest.mark.parametrize(
    "file", [p for p in _files(DOC_FILES) if p.name != "CHANGELOG.md"], ids=lambda p: str(p.relative_to(ROOT))
)
def test_only_the_changelog_tells_history(file: Path) -> None:
    found = [m.group(0) for line in _prose_lines(file.read_text(encoding="utf-8")) for m in _HISTORY.finditer(line)]
    assert not found, f"{file.relative_to(ROOT)} tells history (move it to CHANGELOG.md): {found}"


def test_the_history_check_sees_release_notes() -> None:
    assert _HISTORY.search("Foreign-key joins (since 0.12.0) run")
    assert _HISTORY.search("as Release 0.4.0 did")
    assert not _HISTORY.search("since ksqlDB 0.14, a WHERE over a table")


@pytest.mark.parametrize("file", _files(TEXT_FILES), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_file_points_outside_the_repository(file: Path) -> None:
    text = file.read_text(encoding="utf-8", errors="replace")
    lines = [n for n, line in enumerate(text.splitlines(), 1) if OUTSIDE in line]
    assert not lines, f"{file.relative_to(ROOT)} points at {OUTSIDE} on line(s) {lines}: name the file by its place"
