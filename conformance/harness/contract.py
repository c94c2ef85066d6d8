"""The harness contract (SPEC §6): capabilities, options, and the calls each one brings.

Every value that crosses the contract is JSON-shaped, so the same calls travel in-process to a
Python object or as JSON Lines to a child process in any language. Errors stay inside the
harness and are named by opaque *handles*; asking twice about the same object gives the same
handle, which is how identity (``remediate(x) is x``) is expressed without sharing objects.

A Python harness object implements the methods of the capabilities it declares, with positional
arguments in the order of the protocol's params (``call_tool(session, name, arguments)``).
Two Python-only extras: ``native_error(handle)`` / ``adopt_error(error)`` (the ``native``
capability) and ``arm_pause(session, point, on_pause)`` (``pause``, with a callback instead of
the protocol's notification).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias

# JSON-shaped: None, bool, int, float, str, lists and str-keyed dicts of those. Spelled Any
# because a recursive alias makes every literal in the cases fight list/dict invariance.
Json: TypeAlias = Any
JsonObject: TypeAlias = dict[str, Any]

PROTOCOL_VERSION: Final = 1

CAPABILITY_METHODS: Final[dict[str, tuple[str, ...]]] = {
    "tools": ("open_workspace", "call_tool", "close_workspace"),
    "taxonomy": (
        "make_error",
        "inspect_error",
        "set_cause",
        "remediate",
        "to_error",
        "error_chain",
    ),
    "loop": ("run_scenario", "derive_messages"),
    "native": ("native_error", "adopt_error"),
    "toolErrors": ("tool_error",),
    "pause": ("arm_pause",),
    "toolCodes": (),
}
"""Capability → the Python methods that implement it (the protocol methods share the names,
except ``native``, which the protocol expresses as ``native_roundtrip``/``_repr``/``_raise``).
``toolCodes`` (structured ``{name, code}`` on tool results) brings no method of its own."""

PROTOCOL_METHODS_OF: Final[dict[str, tuple[str, ...]]] = CAPABILITY_METHODS | {
    "native": ("native_roundtrip", "native_repr", "native_raise", "native_unrenderable"),
}
"""Capability → the protocol methods it brings (what ``lacks`` may name)."""
PROTOCOL_METHODS_BACKED_BY: Final[dict[str, tuple[str, ...]]] = {
    "native_error": ("native_roundtrip", "native_repr", "native_raise"),
    "adopt_error": ("native_roundtrip", "native_raise", "native_unrenderable"),
}
"""A Python method of ``native`` → the protocol methods that need it: a Python harness may
name the method it lacks, and those protocol methods are lacked with it."""

CAPABILITIES: Final = tuple(CAPABILITY_METHODS)
IMPLIED: Final[dict[str, str]] = {"toolCodes": "taxonomy"}
"""A capability that another one implies: a ``taxonomy`` harness has codes on its results."""
SANDBOX_MODES: Final = ("read-only", "workspace-write", "danger-full-access")
PAUSE_POINTS: Final = ("checked", "staged", "waiting")
DEFAULT_PAUSE_POINTS: Final = ("checked", "staged")
"""What a harness that declares ``pause`` without ``pausePoints`` offers: ``waiting`` is opt-in."""
VALUE_CAUSES: Final = ("harness", "all")
"""Which kinds ``make_error`` gives a value cause: the harness kinds only, or every kind."""
LIST_OPTIONS: Final[dict[str, tuple[str, ...]]] = {
    "sandbox": SANDBOX_MODES,
    "pausePoints": PAUSE_POINTS,
}
FLAG_OPTIONS: Final = (
    "writableRoots",
    "maxReadBytes",
    "probe",
    "probeInterrupt",
    "replaceAll",
    "readWindow",
    "unguarded",
    "surrogates",
    "tempWritable",
)
GRANTS: Final = ("tempWritable",)
"""Flags that declare a wider fence rather than a feature: undeclared, they are false."""
OPTIONS: Final = (*LIST_OPTIONS, "valueCauses", *FLAG_OPTIONS)
PATH_STYLES: Final = ("relative", "absolute", "any")
ALL_OPTIONS: Final[Mapping[str, Json]] = (
    {name: list(values) for name, values in LIST_OPTIONS.items()}
    | {"pausePoints": list(DEFAULT_PAUSE_POINTS), "valueCauses": "harness"}
    | dict.fromkeys(FLAG_OPTIONS, True)
    | dict.fromkeys(GRANTS, False)
)
"""What a harness that declares no options is taken to support (``tempWritable`` is a claim
about behaviour, not support: undeclared, the temp directory is not writable; ``waiting`` is
opt-in, as for a harness that declares options without ``pausePoints``)."""


class ContractError(Exception):
    """A harness answered outside the contract; the message names the call and what was wrong."""


@dataclass(frozen=True)
class Profile:
    """What a harness says it is and can do (its ``describe`` answer, checked)."""

    name: str
    version: str
    language: str
    capabilities: frozenset[str]
    options: Mapping[str, Json] = field(default_factory=lambda: dict(ALL_OPTIONS))
    paths: str = "any"
    inferred: bool = False
    options_declared: bool = True
    lacks: frozenset[str] = frozenset()
    """Protocol methods of declared capabilities that the harness does not implement."""

    def has(self, capability: str) -> bool:
        """Whether the harness declares ``capability`` (or one that implies it)."""
        implied_by = IMPLIED.get(capability)
        return capability in self.capabilities or (
            implied_by is not None and implied_by in self.capabilities
        )

    def implements(self, method: str) -> bool:
        """Whether a protocol method is there: its capability declared, and not lacked."""
        owners = [cap for cap, methods in PROTOCOL_METHODS_OF.items() if method in methods]
        return any(self.has(cap) for cap in owners) and method not in self.lacks

    def supports(self, option: str, value: str | None = None) -> bool:
        """Whether a tool option (or one value of a list option) is supported."""
        declared = self.options.get(option, False)
        if option in LIST_OPTIONS:
            return isinstance(declared, list) and (value is None or value in declared)
        if option == "valueCauses":
            return value is None or declared == value
        return declared is True

    def to_json(self) -> JsonObject:
        """The profile as the report shows it."""
        return {
            "name": self.name,
            "version": self.version,
            "language": self.language,
            "capabilities": sorted(self.capabilities, key=CAPABILITIES.index),
            "capabilitiesInferred": self.inferred,
            "options": dict(self.options),
            "optionsDeclared": self.options_declared,
            "paths": self.paths,
            "lacks": sorted(self.lacks),
        }


def infer_capabilities(candidate: object) -> frozenset[str]:
    """The capabilities whose every method ``candidate`` has."""
    return frozenset(
        name
        for name, methods in CAPABILITY_METHODS.items()
        if methods and all(callable(getattr(candidate, m, None)) for m in methods)
    )


def parse_profile(answer: object, where: str, *, methods_of: object = None) -> Profile:
    """Check a ``describe`` answer; raise ``ContractError`` with one line naming what is wrong.

    ``methods_of`` is the Python object behind the answer, if any: when the answer lists no
    capabilities they are inferred from the methods it has (and the profile says so).
    """
    if not isinstance(answer, dict):
        raise ContractError(f"{where}: describe must answer an object, got {answer!r}")
    for key in ("name", "version", "language"):
        if not isinstance(answer.get(key), str):
            raise ContractError(
                f"{where}: describe must give {key!r} as a string, got {answer.get(key)!r}"
            )
    declared = answer.get("capabilities")
    inferred = bool(answer.get("inferred", False))
    if declared is None:
        if methods_of is None:
            raise ContractError(f"{where}: describe must list its capabilities")
        capabilities, inferred = infer_capabilities(methods_of), True
    else:
        if not isinstance(declared, list) or not all(isinstance(c, str) for c in declared):
            raise ContractError(f"{where}: capabilities must be a list of names, got {declared!r}")
        unknown = sorted(set(declared) - set(CAPABILITIES))
        if unknown:
            raise ContractError(
                f"{where}: unknown capability {', '.join(map(repr, unknown))}; "
                f"known: {', '.join(CAPABILITIES)}"
            )
        capabilities = frozenset(declared)
    if "tools" not in capabilities:
        raise ContractError(
            f"{where}: the tools capability (open_workspace, call_tool, close_workspace) is "
            "the minimum every harness implements"
        )
    options = answer.get("options")
    options_declared = options is not None
    checked = dict(ALL_OPTIONS) if options is None else _check_options(options, where)
    paths = answer.get("paths", "any")
    if paths not in PATH_STYLES:
        raise ContractError(
            f"{where}: paths must be one of {', '.join(PATH_STYLES)}, got {paths!r}"
        )
    lacks = _check_lacks(answer.get("lacks", []), capabilities, where)
    if methods_of is not None:
        _check_methods(methods_of, capabilities, lacks, where)
    return Profile(
        name=answer["name"],
        version=answer["version"],
        language=answer["language"],
        capabilities=capabilities,
        options=checked,
        paths=paths,
        inferred=inferred,
        options_declared=options_declared,
        lacks=lacks,
    )


def _check_lacks(lacks: object, capabilities: frozenset[str], where: str) -> frozenset[str]:
    """``lacks``: protocol methods of declared capabilities, never one of ``tools``."""
    if not isinstance(lacks, list) or not all(isinstance(m, str) for m in lacks):
        raise ContractError(
            f"{where}: describe.lacks must be a list of method names, got {lacks!r}"
        )
    for method in lacks:
        owners = [
            cap
            for table in (PROTOCOL_METHODS_OF, CAPABILITY_METHODS)
            for cap, methods in table.items()
            if method in methods
        ]
        if "tools" in owners:
            raise ContractError(
                f"{where}: describe.lacks names {method!r}, a method of the tools capability, "
                "which every harness implements"
            )
        if not any(cap in capabilities for cap in owners):
            raise ContractError(
                f"{where}: describe.lacks names {method!r}, which is not a method of a "
                f"declared capability ({', '.join(sorted(capabilities))})"
            )
    backed = (m for method in lacks for m in PROTOCOL_METHODS_BACKED_BY.get(method, ()))
    return frozenset(lacks).union(backed)


def _check_methods(
    harness: object, capabilities: frozenset[str], lacks: frozenset[str], where: str
) -> None:
    """A Python harness has every method it declares: else one line, before the first case."""
    for capability in sorted(capabilities, key=CAPABILITIES.index):
        for method in CAPABILITY_METHODS[capability]:
            if method not in lacks and not callable(getattr(harness, method, None)):
                remedy = (
                    "every harness implements it"  # describe.lacks never names one of tools
                    if capability == "tools"
                    else "list it in describe.lacks if it is missing on purpose"
                )
                raise ContractError(
                    f"{where}: describe declares the {capability} capability, but the harness "
                    f"has no {method}() method ({remedy})"
                )


def _check_options(options: object, where: str) -> dict[str, Json]:
    if not isinstance(options, dict):
        raise ContractError(f"{where}: options must be an object, got {options!r}")
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        raise ContractError(
            f"{where}: unknown option {', '.join(map(repr, unknown))}; known: {', '.join(OPTIONS)}"
        )
    checked: dict[str, Json] = {
        "sandbox": [],
        "pausePoints": list(DEFAULT_PAUSE_POINTS),
        "valueCauses": "harness",
    } | dict.fromkeys(FLAG_OPTIONS, False)
    for name, value in options.items():
        if name in LIST_OPTIONS:
            allowed = LIST_OPTIONS[name]
            if not isinstance(value, list) or not set(value) <= set(allowed):
                raise ContractError(
                    f"{where}: options.{name} must list values among "
                    f"{', '.join(allowed)}, got {value!r}"
                )
        elif name == "valueCauses":
            if value not in VALUE_CAUSES:
                raise ContractError(
                    f"{where}: options.valueCauses must be one of {', '.join(VALUE_CAUSES)}, "
                    f"got {value!r}"
                )
        elif not isinstance(value, bool):
            raise ContractError(f"{where}: options.{name} must be true or false, got {value!r}")
        checked[name] = value
    return checked
