"""The conformance cases, one module per area of SPEC.md.

Every case is marked ``@case("AREA-NNN", rules=[…])`` with the rule IDs of SPEC.md it checks,
and ``@needs(…)`` with the capabilities and options it needs beyond the ``tools`` capability.
"""

import pytest

case = pytest.mark.case
needs = pytest.mark.needs
