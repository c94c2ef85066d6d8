"""JSON text that can always be written as UTF-8.

Harnesses answer with strings that UTF-8 cannot carry (a lone surrogate the suite itself sent),
and those end up in requests, traces and reports. ``json_text`` keeps non-ASCII text readable
and falls back to JSON's ``\\uXXXX`` escapes only when it must, so writing never fails and the
value reads back the same.
"""

from __future__ import annotations

import json
from typing import Any


def json_text(value: Any, *, indent: int | None = None, allow_nan: bool = True) -> str:
    """``value`` as JSON text that encodes as UTF-8 (``allow_nan=False``: a NaN or an infinity
    raises ``ValueError``, as JSON has none)."""
    text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=allow_nan)
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(value, ensure_ascii=True, indent=indent, allow_nan=allow_nan)
    return text
