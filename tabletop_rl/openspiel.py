"""``import tabletop_rl.openspiel`` registers every game with OpenSpiel (extra ``openspiel``): this name is
``tabletop_rl.training.interop.openspiel`` itself, where the adapter lives (docs/interop.md, "OpenSpiel")."""

import sys

from .training.interop import openspiel

sys.modules[__name__] = openspiel
