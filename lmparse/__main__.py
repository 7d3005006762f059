"""``python -m lmparse``: the ``lmparse`` command."""

import sys

from .cli import main

sys.exit(main())
