"""``python -m fairness_core audit ...``: see :mod:`fairness_core.cli`."""

import sys

from .cli import main

sys.exit(main())
