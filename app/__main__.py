"""`python -m app`: the GUI, or a CLI command when one is given."""

import sys

from app.cli import main

if __name__ == "__main__":
    sys.exit(main())
