"""``python -m dlformat``: the same as the ``dlformat`` command."""

import sys

from .cli import main

sys.exit(main())
