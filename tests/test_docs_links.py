"""Relative links in README.md and docs/*.md point at files and headings that exist (no broker).

Anchors follow GitHub's rule for headings: the rendered text, lowercased, every character but
letters, digits, spaces, ``-`` and ``_`` dropped, spaces turned into ``-``; a repeated heading
gets ``-1``, ``-2``, ... appended.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
#: ``[text](target)`` and ``[text](target "title")``; images too.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
INLINE_CODE = re.compile(r"`[^`]*`")


def _prose_lines(text: str) -> list[str]:
    """The lines of ``text`` outside fenced code blocks."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading (its text after ``#``)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link shows its text
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of the Markdown file ``path``."""
    seen: Counter[str] = Counter()
    result: set[str] = set()
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        m = HEADING.match(line)
        if not m:
            continue
        base = github_anchor(m.group(1))
        n = seen[base]
        seen[base] += 1
        result.add(base if n == 0 else f"{base}-{n}")
    return result


def relative_links(path: Path) -> list[str]:
    """Link targets in ``path`` that are not URLs (``http:``, ``mailto:``, ...)."""
    targets: list[str] = []
    for line in _prose_lines(path.read_text(encoding="utf-8")):
        for m in LINK.finditer(INLINE_CODE.sub("", line)):
            target = m.group(1)
            if not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                targets.append(target)
    return targets


def broken_links(path: Path) -> list[str]:
    """The relative links of ``path`` whose file or ``#anchor`` does not exist, as messages."""
    problems: list[str] = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            problems.append(f"{target}: no file {dest}")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{target}: no heading with anchor #{anchor} in {dest.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_resolve(page: Path) -> None:
    assert broken_links(page) == []


def test_github_anchor_rule() -> None:
    assert github_anchor('Differences from `format("kafka")`') == "differences-from-formatkafka"
    assert github_anchor("Data loss (`failOnDataLoss`)") == "data-loss-failondataloss"
    assert github_anchor("Set-up: two commands") == "set-up-two-commands"
