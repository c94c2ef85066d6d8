"""``python -m peers``: see ``peers.run``."""

import sys

from peers.run import main

if __name__ == "__main__":
    sys.exit(main())
