"""An edit whose ``old_string`` occurs more than once replaces the first occurrence instead of
refusing as ambiguous (``str.replace(old, new, 1)``)."""

from reference.adapter import ReferenceHarness
from reference.fs import local
from tests.mutants import rebind

original = local._replaced


def _replaced(
    data: bytes, old: bytes, new: bytes, replace_all: bool, path: str
) -> tuple[local.Parts, int]:
    if replace_all or data.count(old) < 2:
        return original(data, old, new, replace_all, path)
    return (data.replace(old, new, 1),), 1


rebind(original, _replaced)
harness = ReferenceHarness
