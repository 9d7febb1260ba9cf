"""The code of a doc's section, so that a test runs exactly what a reader copies (docs/interop.md's snippets)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def section_code(doc: str, heading: str) -> str:
    """The ```python blocks of the section ``## heading`` of ``doc`` (a path from the repository's root), up to the
    next ``#`` or ``##`` heading, joined in order. A missing section or one without a python block fails: a
    renamed heading must not turn its test into one that runs nothing."""
    text = (ROOT / doc).read_text()
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^##? |\Z)", text, re.M | re.S)
    assert section, f"{doc} has no section '## {heading}'"
    blocks = re.findall(r"^```python\n(.*?)^```$", section.group(1), re.M | re.S)
    assert blocks, f"the section '## {heading}' of {doc} has no ```python block"
    return "\n".join(blocks)


def run_section(doc: str, heading: str) -> dict[str, Any]:
    """Runs the section's blocks as one script in a fresh namespace (as a reader pastes them one after another)
    and returns that namespace, for the test to check what the snippets computed."""
    namespace: dict[str, Any] = {"__name__": "__main__"}
    exec(compile(section_code(doc, heading), f"{doc} ## {heading}", "exec"), namespace)
    return namespace
