"""A case's hypothesis examples follow its seed alone, not where the suite or the harness lives.

Hypothesis mixes into its draws constants it reads from the source of modules it takes for
local. Seen on a real harness: the same seed gave the MCP reference filesystem server other
STM-001 sequences, and other behaviour verdicts, with the suite run from a checkout than from
its wheel (``conformance.strategies.own_draws``).
"""

from __future__ import annotations

import copy
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import configuration, given, settings
from hypothesis import strategies as st
from hypothesis.internal.conjecture import providers

from conformance.harvest import NoHarvest
from conformance.strategies import own_draws, register_profiles
from tests.suite import REPO, run_suite

LOCAL = [f"QQ{i:03d}LOCAL" for i in range(300)]
"""Constants of a module hypothesis takes for local: they fit the strategy drawn below."""


def _draws() -> list[str]:
    drawn: list[str] = []

    @settings(max_examples=200, database=None, derandomize=True, deadline=None)
    @given(st.text("QL0123456789ACO", min_size=1, max_size=20))
    def collect(value: str) -> None:
        drawn.append(value)

    collect()
    return drawn


def _module_of_constants(directory: Path, name: str) -> Path:
    module = directory / f"{name}.py"
    listed = "".join(f"    {value!r},\n" for value in LOCAL)
    module.write_text(f'"""Constants."""\n\nNAMES = (\n{listed})\n', encoding="utf-8")
    return module


def test_a_local_modules_constants_are_drawn_outside_a_case_and_never_inside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # what this test makes hypothesis learn is forgotten afterwards, and kept under tmp_path
    monkeypatch.setattr(providers, "_local_constants", copy.deepcopy(providers._local_constants))
    monkeypatch.setattr(configuration, "__hypothesis_home_directory", tmp_path / "hypothesis")
    original = providers._get_local_constants
    with own_draws():
        before = _draws()
    _module_of_constants(tmp_path, "harness_constants")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.import_module("harness_constants")
    try:
        outside = _draws()  # hypothesis' cache of permitted constants now holds the module's
        with own_draws():
            inside = _draws()
        after = _draws()
    finally:
        sys.modules.pop("harness_constants", None)
        providers.CONSTANTS_CACHE.cache.clear()
    # hypothesis draws them where the suite does not step in, before a case and after it
    assert set(outside) & set(LOCAL)
    assert after == outside
    assert inside == before
    assert providers._get_local_constants is original


def _run(
    work: Path, *args: str, local: Path
) -> tuple[subprocess.CompletedProcess[str], list[tuple[str, str]]]:
    """A run in process, and what hypothesis tried in it: (case, the example), in order.

    Hypothesis' observability (``HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_NOCOVER``) writes every
    example it tries to its storage directory, under the run's own cache directory here.
    """
    cache = work / f"cache-{len(list(work.iterdir()))}"
    env = {"PYTHONPATH": f"{REPO}{':'}{local}", "XDG_CACHE_HOME": str(cache),
           "HYPOTHESIS_EXPERIMENTAL_OBSERVABILITY_NOCOVER": "1"}  # fmt: skip
    # run_suite's --hypothesis-profile default holds whatever CI says (hypothesis' own "ci")
    done = run_suite("--conformance-in-process", "-p", "no:randomly", *args, cwd=work, env=env)
    tried: list[tuple[str, str]] = []
    for log in sorted(cache.rglob("observed/*testcases.jsonl")):
        for line in log.read_text(encoding="utf-8").splitlines():
            entry = json.loads(line)
            if entry.get("type") == "test_case":
                shown = re.sub(r" at 0x[0-9a-f]+", "", entry["representation"])
                tried.append((entry["property"], shown))
    return done, tried


def test_an_in_process_harness_of_its_own_module_draws_what_the_reference_draws(
    tmp_path: Path,
) -> None:
    # the reference, from a module of the implementer's (local to hypothesis) with constants
    module = _module_of_constants(tmp_path, "localharness")
    module.write_text(
        module.read_text(encoding="utf-8")
        + "\nfrom reference.adapter import ReferenceHarness\n\nharness = ReferenceHarness\n",
        encoding="utf-8",
    )
    work = tmp_path / "work"
    work.mkdir()
    tried: list[list[tuple[str, str]]] = []
    for harness in ("reference", "localharness:harness"):
        done, examples = _run(work, "--harness", harness, "-k", "PROP or STM", local=tmp_path)
        assert done.returncode == 0, done.stdout[-2000:]
        tried.append(examples)
    assert len(tried[0]) > 150
    assert tried[0] == tried[1]


def test_hypothesis_verbosity_keeps_the_suites_profile(tmp_path: Path) -> None:
    # hypothesis derives the verbose profile from the one active before the suite's exists
    work = tmp_path / "work"
    work.mkdir()
    done, tried = _run(work, "-k", "PROP", "--hypothesis-verbosity=verbose", local=tmp_path)
    assert done.returncode == 0, done.stdout[-2000:]  # no health check failing every property
    per_case = {case: sum(1 for c, _ in tried if c == case) for case, _ in tried}
    assert len(per_case) == 6
    # the default profile's 30 examples each (hypothesis' own would be 100), give or take the
    # few an example hypothesis reuses or discards
    assert all(25 <= n <= 40 for n in per_case.values()), per_case


def test_a_profile_of_the_users_own_is_left_as_it_is() -> None:
    # only the names hypothesis' plugin gives a derived profile are rebuilt on ours
    active = settings.get_current_profile_name()
    settings.register_profile("default-with-coverage", max_examples=7)
    settings.load_profile("default-with-coverage")
    try:
        register_profiles()
        assert settings.get_profile(settings.get_current_profile_name()).max_examples == 7
    finally:
        settings.load_profile(active)


def _harvests_during_collection(items: list[SimpleNamespace]) -> bool:
    """Whether hypothesis' own collection hook, run inside ``NoHarvest``'s, harvests."""
    harvested: list[bool] = []
    real = providers._get_local_constants

    def counting() -> object:
        harvested.append(True)
        return real()

    no_harvest = NoHarvest(lambda item: bool(getattr(item, "case", False)))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(providers, "_get_local_constants", counting)
        hook = no_harvest.pytest_collection_modifyitems(items)  # type: ignore[arg-type]
        next(hook)  # the other plugins' hooks run now; hypothesis' imports and calls this:
        getattr(providers, "_get_local_constants")()  # noqa: B009 - looked up as it does
        with pytest.raises(StopIteration):
            hook.send(None)
        assert providers._get_local_constants is counting  # put back as it was
    return bool(harvested)


@given(st.none())
def _a_property(value: None) -> None:
    """A hypothesis test (never run)."""


def _a_plain_test() -> None:
    """A plain test (never run)."""


def test_hypothesis_harvests_no_constants_where_only_cases_draw() -> None:
    # every case draws without local constants, so harvesting them as collection ends is waste
    case, plain = (
        SimpleNamespace(case=True, obj=_a_property),
        SimpleNamespace(case=True, obj=_a_plain_test),
    )
    users_own = SimpleNamespace(case=False, obj=_a_property)
    assert not _harvests_during_collection([case, plain])
    assert _harvests_during_collection([case, users_own])  # a property of the user's own
    assert _harvests_during_collection([SimpleNamespace(case=False, obj=_a_plain_test)])
