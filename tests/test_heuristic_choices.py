"""Every heuristic bot chooses as it did when the corpus was recorded (tests/heuristic_choices.py): a faster bot
must be the same bot."""

import pytest
from heuristic_choices import CONFIGS, replay


@pytest.mark.parametrize("name", list(CONFIGS))
def test_heuristic_chooses_as_recorded(name):
    decisions, differ = 0, []
    for options, seed, i, old, choice in replay(name):
        decisions += 1
        if choice != old:
            differ.append(f"{options} game {seed} decision {i}: recorded {old}, now {choice}")
    assert decisions > 5000
    assert not differ, f"{len(differ)} of {decisions} choices differ, first: {differ[:3]}"
