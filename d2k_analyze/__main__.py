"""``python -m d2k_analyze`` = the ``d2k-analyze`` command."""

import sys

from .cli import main

sys.exit(main())
