"""The blocking client is generated from the asyncio one; the two must not drift."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "unasync.py"


def test_sync_client_is_what_unasync_generates() -> None:
    spec = importlib.util.spec_from_file_location("unasync", SCRIPT)
    assert spec is not None and spec.loader is not None
    unasync = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(unasync)
    assert unasync.TARGET.read_text() == unasync.generate(), (
        "src/leasehold/_sync.py differs from what scripts/unasync.py generates from "
        "_async.py: change _async.py, then run scripts/unasync.py"
    )
