"""Several requests in one round trip (SPEC {proto.batch}): what may be batched, and the refs
that name an earlier answer of the same batch.

Shared by the side that sends a batch (the stdio transport, and the one-at-a-time fallback
every transport has) and the side that serves one (``conformance.serve``), so both resolve
``{"answer": k}`` alike. The Node kit does the same in JavaScript.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from conformance.harness.contract import Json, JsonObject

BATCHABLE: Final = ("make_error", "error_chain")
"""The methods a batch may hold: they take a ref, and nothing in them pauses or races."""
MAX_BATCH: Final = 250
"""The most requests the suite sends in one batch: the call timeout bounds each batch."""


class Unresolved(Exception):
    """A request names an earlier answer of its batch that holds no handle."""


def is_answer_ref(value: object) -> bool:
    """Whether ``value`` is ``{"answer": k}``: the handle answered by request ``k``."""
    if not isinstance(value, dict) or len(value) != 1:
        return False
    index = value.get("answer")
    return isinstance(index, int) and not isinstance(index, bool)


def resolve(method: str, params: JsonObject, results: Sequence[Json]) -> JsonObject:
    """``params`` with its ref ``{"answer": k}`` (if any) replaced by ``{"handle": h}``.

    ``results`` are the results of the batch's earlier requests, in order. Only the ref a
    method takes is looked at (``spec.cause`` of ``make_error``, ``ref`` of ``error_chain``):
    a value cause that happens to look like ``{"answer": 0}`` is a value, never resolved.
    """
    if method == "make_error":
        spec = params.get("spec")
        if isinstance(spec, dict) and is_answer_ref(spec.get("cause")):
            return {**params, "spec": {**spec, "cause": _handle_ref(spec["cause"], results)}}
    elif method == "error_chain" and is_answer_ref(params.get("ref")):
        return {**params, "ref": _handle_ref(params["ref"], results)}
    return params


def rebase(method: str, params: JsonObject, results: Sequence[Json], start: int) -> JsonObject:
    """``params`` for a batch that begins at request ``start`` of a longer sequence: a ref to
    a request before it is resolved from ``results``, one inside it renumbered."""
    ref = _ref_of(method, params)
    if ref is None:
        return params
    index = ref["answer"]
    if index < start:
        return resolve(method, params, results)
    moved = {"answer": index - start}
    if method == "make_error":
        return {**params, "spec": {**params["spec"], "cause": moved}}
    return {**params, "ref": moved}


def _ref_of(method: str, params: JsonObject) -> JsonObject | None:
    if method == "make_error":
        spec = params.get("spec")
        cause = spec.get("cause") if isinstance(spec, dict) else None
        return cause if is_answer_ref(cause) else None
    ref = params.get("ref")
    return ref if method == "error_chain" and is_answer_ref(ref) else None


def _handle_ref(ref: Json, results: Sequence[Json]) -> JsonObject:
    assert isinstance(ref, dict)
    index = ref["answer"]
    assert isinstance(index, int)
    answer = results[index] if 0 <= index < len(results) else None
    handle = answer.get("handle") if isinstance(answer, dict) else None
    if not isinstance(handle, str):
        raise Unresolved(f"request {index} of the batch answered no handle")
    return {"handle": handle}
