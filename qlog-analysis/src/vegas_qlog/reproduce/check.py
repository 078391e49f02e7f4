"""Checks that a written report is complete: a verdict-table row per claim
with a valid verdict word, every figure it links present and small, and the
section answering the CUBIC/BBR2 question. ``scripts/reproduce --quick``
runs it on its own output, and so does ``./scripts/test``."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from .claims import all_claims
from .verdict import VERDICTS

MAX_FIGURE_BYTES = 100_000
MODERN_HEADING = "## Does a Vegas-family algorithm beat what you would pick today (CUBIC, BBR2)?"
ROW = re.compile(r"^\| `(?P<id>[^`]+)`:.*\| \*\*(?P<verdict>[a-z]+)\*\* \|$")
IMAGE = re.compile(r"!\[[^\]]*\]\((?P<path>[^)]+)\)")


def check_report(doc: Path, claim_ids: Sequence[str] | None = None, min_figures: int = 1) -> list[str]:
    """Problems found in the report at ``doc`` (empty when it is complete)."""
    problems: list[str] = []
    try:
        text = doc.read_text(encoding="utf-8")
    except OSError as e:
        return [f"{doc}: cannot read: {e.strerror or e}"]
    ids = list(claim_ids) if claim_ids is not None else [c.id for c in all_claims()]
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            rows.setdefault(m["id"], []).append(m["verdict"])
    for claim_id in ids:
        found = rows.get(claim_id, [])
        if len(found) != 1:
            problems.append(f"{doc}: claim {claim_id}: {len(found)} rows in the verdict table (expected 1)")
    for claim_id, verdicts in rows.items():
        if claim_id not in ids:
            problems.append(f"{doc}: row for unknown claim {claim_id}")
        for word in verdicts:
            if word not in VERDICTS:
                problems.append(f"{doc}: claim {claim_id}: verdict {word!r} is not one of {', '.join(VERDICTS)}")
    images = [m["path"] for m in IMAGE.finditer(text)]
    if len(images) < min_figures:
        problems.append(f"{doc}: {len(images)} figures linked (expected at least {min_figures})")
    for rel in images:
        path = doc.parent / rel
        if not path.is_file():
            problems.append(f"{doc}: figure {rel} does not exist")
        elif path.stat().st_size > MAX_FIGURE_BYTES:
            problems.append(f"{doc}: figure {rel} is {path.stat().st_size} bytes (at most {MAX_FIGURE_BYTES})")
    if MODERN_HEADING not in text:
        problems.append(f"{doc}: no section '{MODERN_HEADING.lstrip('# ')}'")
    if "**Answer:**" not in text:
        problems.append(f"{doc}: no answer to the CUBIC/BBR2 question")
    if "Command: `" not in text:
        problems.append(f"{doc}: the command that produced it is not given")
    return problems
