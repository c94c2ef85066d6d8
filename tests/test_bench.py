"""The benchmark's verdict on its targets: an interval of the median, never one lucky round."""

from __future__ import annotations

import importlib.util
import math
import random
import statistics
from pathlib import Path
from types import ModuleType

import pytest

BENCH = Path(__file__).resolve().parent.parent / "bench" / "bench_conformance.py"


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    """``bench/bench_conformance.py`` as a module (``bench/`` is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_conformance", BENCH)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_interval_is_made_of_order_statistics(bench: ModuleType) -> None:
    # 41 values: the 14th and 28th smallest, covering 97% (Binomial(41, ½) ≤ 13: 1.4%).
    low, high, covered = bench.median_interval([float(v) for v in range(41, 0, -1)])
    assert (low, high) == (14.0, 28.0)
    assert covered == pytest.approx(0.9725, abs=1e-4)
    # 9 values: the 2nd and 8th (Binomial(9, ½) ≤ 1: 2%).
    low, high, covered = bench.median_interval([float(v) for v in range(1, 10)])
    assert (low, high) == (2.0, 8.0)
    assert covered == pytest.approx(1 - 2 * 10 / 512)


def test_too_few_values_say_how_little_they_cover(bench: ModuleType) -> None:
    low, high, covered = bench.median_interval([3.0, 1.0, 2.0, 5.0, 4.0])
    assert (low, high) == (1.0, 5.0)
    assert covered == pytest.approx(1 - 2 / 32)
    assert bench.median_interval([7.0])[2] == 0.0
    with pytest.raises(ValueError, match="no values"):
        bench.median_interval([])


def test_the_interval_holds_the_median_as_often_as_it_says(bench: ModuleType) -> None:
    draws = random.Random(20261205)
    true_median = math.log(2)  # of an exponential distribution of rate 1: a skewed one
    trials, held = 4000, 0
    for _ in range(trials):
        values = [draws.expovariate(1.0) for _ in range(41)]
        low, high, _ = bench.median_interval(values)
        held += low <= true_median <= high
        assert low <= statistics.median(values) <= high
    assert 0.95 <= held / trials <= 0.99


def test_six_rounds_are_the_fewest_that_decide(bench: ModuleType) -> None:
    five = bench.median_interval([3.1, 3.2, 3.3, 3.4, 3.5])
    six = bench.median_interval([3.1, 3.2, 3.3, 3.4, 3.5, 3.6])
    assert bench.verdict(five, 4.0) == "undecided (too few rounds)"
    assert six[:2] == (3.1, 3.6)
    assert six[2] == pytest.approx(1 - 2 / 64)
    assert bench.verdict(six, 4.0) == "met"
    assert bench.verdict(bench.median_interval([4.1, 4.2, 4.3, 4.4, 4.5, 4.6]), 4.0) == "missed"


@pytest.mark.parametrize(
    ("interval", "expected"),
    [((3.7, 3.95, 0.97), "met"), ((3.9, 4.1, 0.97), "undecided"), ((4.01, 4.3, 0.97), "missed"),
     ((3.7, 4.0, 0.97), "met"), ((3.8, 3.8, 0.0), "undecided (too few rounds)"),
     ((3.5, 3.9, 0.9375), "undecided (too few rounds)")],
)  # fmt: skip
def test_a_target_is_met_only_by_the_whole_interval(
    bench: ModuleType, interval: tuple[float, float, float], expected: str
) -> None:
    assert bench.verdict(interval, 4.0) == expected


def test_a_paused_round_is_the_empty_and_the_default_run(bench: ModuleType) -> None:
    # Back to back every kind runs; after a pause only the pair the target is about, so the
    # default run meets a disk no other suite run has just churned.
    assert bench.round_kinds(0.0) == ("empty", "stdio", "one-process", "in-process")
    assert bench.round_kinds(75.0) == ("empty", "stdio")


@pytest.mark.parametrize("given", ["-5", "nan", "inf"])
def test_a_pause_that_is_no_number_of_seconds_is_one_line_naming_it(
    bench: ModuleType,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    given: str,
) -> None:
    monkeypatch.setattr("sys.argv", ["bench_conformance.py", "--pause", given])
    with pytest.raises(SystemExit) as exit_:
        bench.main()
    assert exit_.value.code == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.endswith(f"error: --pause {given}: a number of seconds, 0 or more")


def _fake_runs(bench: ModuleType, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Runs that take no time (the empty one 0.5 s, the others 2 s), a sleep that only lets
    the hypervisor take 5 CPU s, and the kinds run, in order."""
    ran: list[str] = []
    steal = [0.0]

    def one_run(
        kind: str, profile: str, base: str | None, *, per_case: bool = False
    ) -> tuple[float, dict[str, float]]:
        ran.append(kind)
        return (0.5 if kind == "empty" else 2.0), ({"CASE-001": 0.01} if per_case else {})

    def sleep(seconds: float) -> None:
        steal[0] += 5.0

    monkeypatch.setattr(bench, "one_run", one_run)
    monkeypatch.setattr(bench, "stolen", lambda: steal[0])
    monkeypatch.setattr(bench.time, "sleep", sleep)
    return ran


def test_a_paused_benchmark_times_the_pair_alone_and_not_its_pauses(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _fake_runs(bench, monkeypatch)
    bench.measure(6, "default", None, 75.0)
    table = capsys.readouterr().out
    assert set(ran) == {"empty", "stdio"}  # warm-up, 6 rounds, and the per-case run
    assert "the hypervisor took 0.0 CPU s" in table  # what it took during pauses is not counted
    assert "75 s of pause before each round (not timed)" in table
    assert "| stdio | 2.00 | 2.00 | 2.00 | 4.00× |" in table
    assert "in-process" not in table


def test_a_benchmark_without_pause_runs_every_kind_in_turn(
    bench: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ran = _fake_runs(bench, monkeypatch)
    bench.measure(6, "default", None)
    table = capsys.readouterr().out
    assert ran[4:8] == ["empty", "stdio", "one-process", "in-process"]
    assert ran[8:12] == ["stdio", "one-process", "in-process", "empty"]
    assert "| stdio ÷ in-process | | | | 1.00× |" in table
    assert "pause" not in table
