"""``python -m conformance.serve``: a Python harness behind the stdio protocol (see
``conformance.harness.serve``)."""

import sys

from conformance.harness.serve import main

if __name__ == "__main__":
    sys.exit(main())
