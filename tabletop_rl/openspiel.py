"""``import tabletop_rl.openspiel`` registers every game with OpenSpiel (extra ``openspiel``): this name is
``tabletop_rl.training.openspiel`` itself, where the adapter lives (docs/interop.md, "OpenSpiel")."""

import sys

from .training import openspiel

sys.modules[__name__] = openspiel
