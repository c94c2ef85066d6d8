"""ACME's adapter for harness-conformance: the reference adapter under ACME's name."""

from __future__ import annotations

from typing import Any

import acme_harness
from reference.adapter import ReferenceHarness


class AcmeHarness(ReferenceHarness):
    """What the suite tests: ACME's harness behind the contract."""

    def describe(self) -> dict[str, Any]:
        """ACME's name and version; everything else as the reference declares it."""
        return {**super().describe(), "name": "acme-harness", "version": acme_harness.__version__}
