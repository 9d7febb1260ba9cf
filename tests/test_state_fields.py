"""Each game's ``State.fields`` and ``State.derived`` (``envs/core/game.py``) name exactly the attributes its
states have, so that ``clone`` and ``to_json`` leave nothing out (docs/engine_contract.md, "Declared fields")."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tabletop_rl.envs import list_games
from tabletop_rl.envs.core.game import Fields, State
from tabletop_rl.envs.core.registry import game_class

BASE = {"game", "rng", "_legal"}  # set by the base class itself


def declared(cls: type[State]) -> list[str]:
    return [*cls.fields.names, *cls.derived.names, *cls.views]


def mismatch(state: State) -> tuple[set[str], set[str]]:
    """(attributes the state has but does not declare, declared names it does not have)."""
    have, names = set(vars(state)) - BASE, set(declared(type(state)))
    return have - names, names - have


@pytest.mark.parametrize("name", list_games())
def test_every_attribute_of_a_state_is_declared_once(name):
    game = game_class(name)()
    names = declared(game.state_class)
    assert len(set(names)) == len(names), f"{name}: a name is declared twice"
    for seed in range(2):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state(seed)
        step = 0
        while True:
            if step % 5 == 0 or state.is_terminal():
                for copy in (state, state.clone(), State.from_json(state.to_json())):
                    assert mismatch(copy) == (set(), set()), f"{name}, seed {seed}, step {step}"
            if state.is_terminal():
                break
            legal = state.legal_actions()
            state.apply_action(legal[int(rng.integers(len(legal)))])
            step += 1


def test_an_undeclared_attribute_is_found():
    state = game_class("lost_cities")().new_initial_state(0)
    state.scratch = []
    del state.drawn
    assert mismatch(state) == ({"scratch"}, {"drawn"})


def test_a_name_that_is_no_attribute_name_is_refused():
    with pytest.raises(ValueError, match=r"^Fields: 'bid-value' is not an attribute name$"):
        Fields(values="turn", copied="bid-value")


def test_a_state_json_of_another_engine_version_is_refused_in_one_line():
    state = game_class("torres")(action_deck="personal").new_initial_state(1)
    data = json.loads(state.to_json())
    del data["state"]["returned_top"], data["state"]["returned_bottom"]  # a state written before they existed
    with pytest.raises(ValueError, match=r"^this Torres state JSON lacks the field\(s\) returned_top, "
                                         r"returned_bottom: it was written by another version"):
        State.from_json(json.dumps(data))
