"""Argument violations come out sorted alphabetically instead of in the spec's order."""

from reference.adapter import ReferenceHarness
from reference.errors import ToolArgsError
from reference.tools import schema
from tests.mutants import rebind

original = schema.validate_arguments


def validate_arguments(parameters: dict[str, object], arguments: object) -> dict[str, object]:
    try:
        return original(parameters, arguments)
    except ToolArgsError as err:
        raise ToolArgsError(sorted(err.violations)) from None


rebind(original, validate_arguments)
harness = ReferenceHarness
