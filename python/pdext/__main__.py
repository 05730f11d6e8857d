"""python -m pdext ...: the pdext command (see _command.py)."""

import sys

from ._command import main

sys.exit(main())
