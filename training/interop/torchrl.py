"""Every game as a TorchRL env (extra ``torchrl``; docs/interop.md#torchrl): TorchRL's own ``PettingZooWrapper``
around :func:`tabletop_rl.make`, set up the one way turn-based games need."""

from __future__ import annotations

import warnings
from typing import Any

from ...envs import make
from ...envs.core.extras import needs_extra

try:
    from torchrl.envs import PettingZooWrapper
    from torchrl.envs.utils import MarlGroupMapType
except ImportError as error:
    raise needs_extra("tabletop_rl.training.interop.torchrl", "torchrl", error) from None


def torchrl_env(game: str, seed: int | None = None, shared_policy: bool = False, **options: Any) -> PettingZooWrapper:
    """``game`` with ``options`` as a TorchRL env: ``use_mask=True`` (an AEC env must say which seat is on move),
    ``return_state=True`` (the global state, for centralized critics). One group per seat (``player_0``, …), or
    with ``shared_policy=True`` all seats stacked in one group ``agents`` for one network."""
    group_map = MarlGroupMapType.ALL_IN_ONE_GROUP if shared_policy else None
    with warnings.catch_warnings():  # it names the PettingZoo it is tested with (1.24.3); ours is newer and works
        warnings.filterwarnings("ignore", "PettingZoo in TorchRL is tested")
        return PettingZooWrapper(env=make(game, **options), use_mask=True, return_state=True, seed=seed,
                                 group_map=group_map)
