"""``python -m reference run SCENARIO``: print a scenario's normalized transcript as JSON Lines.

SCENARIO is a pinned scenario's name (``python -m reference list`` shows them) or the path of a
scenario JSON file. The run happens in a temporary directory that is removed afterwards; paths
under it print as ``{{cwd}}`` and the session id as ``{{sessionId}}``: exactly what a model sees.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence

from reference.scenarios import (
    ScenarioError,
    load_scenario,
    normalize,
    play_scenario,
    scenario_names,
)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = argparse.ArgumentParser(prog="python -m reference", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="print a scenario's normalized transcript")
    run.add_argument("scenario", help="a pinned scenario name or a path to a scenario JSON file")
    commands.add_parser("list", help="list the pinned scenarios")
    args = parser.parse_args(argv)
    if args.command == "list":
        print("\n".join(scenario_names()))
        return 0
    try:
        scenario = load_scenario(args.scenario)
        with tempfile.TemporaryDirectory(prefix="harness-scenario-") as root:
            log = play_scenario(root, scenario)
            records = normalize(log.records(), root=root, session_id=log.id)
    except ScenarioError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    assert isinstance(records, list)
    for record in records:
        line = json.dumps(record, ensure_ascii=False)
        if not line.isascii():
            try:
                line.encode(sys.stdout.encoding or "utf-8")
            except UnicodeEncodeError:  # lone surrogates: JSON escapes carry them
                line = json.dumps(record, ensure_ascii=True)
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
