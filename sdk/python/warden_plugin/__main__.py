"""`python -m warden_plugin wit`: prints the folder holding the contract's WIT
(for componentize-py's `-d`). `python -m warden_plugin path`: the folder to pass to
componentize-py's `-p` so that the component finds this package."""

import os
import sys


def main() -> int:
    here = os.path.dirname(os.path.abspath(__file__))
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "wit":
        print(os.path.join(here, "wit"))
    elif command == "path":
        print(os.path.dirname(here))
    else:
        print("usage: python -m warden_plugin wit|path", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
