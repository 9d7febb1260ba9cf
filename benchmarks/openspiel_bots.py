"""OpenSpiel's search bots against ours, on paired deals (docs/interop.md, "OpenSpiel": the measured table).

    python benchmarks/openspiel_bots.py lost_cities --bot ismcts --simulations 1000 --opponent heuristic --deals 20
    python benchmarks/openspiel_bots.py torres --params action_deck=master --bot mcts --opponent heuristic

A two-player game: OpenSpiel's Python ``ISMCTSBot`` or ``MCTSBot`` (random roll-outs, uct_c 2: the settings of
OpenSpiel's examples/mcts.py) in one seat, one of our agents (``heuristic``, ``search``, any ``load_agent`` spec)
in the other. Each deal is played twice, seats swapped, with the same chance outcomes (the chance nodes draw from
one generator per deal, and a pile's contents change only by its own draws, so both games deal the same cards).
Prints the bot's win rate, its score margin per game (bot minus opponent) and the CPU time per decision of both.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from tabletop_rl.training import cli


def main(argv: list[str] | None = None) -> int:
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("game", help="a two-player game, e.g. lost_cities")
    parser.add_argument("--params", default="", help="OpenSpiel parameters, e.g. action_deck=master")
    parser.add_argument("--bot", choices=("ismcts", "mcts"), default="ismcts")
    parser.add_argument("--simulations", type=cli.count, default=1000, help="the bot's simulations per decision")
    parser.add_argument("--opponent", default="heuristic", help="our agent (a load_agent spec)")
    parser.add_argument("--deals", type=cli.count, default=10, help="deals, each played twice (seats swapped)")
    parser.add_argument("--seed", type=cli.seed, default=0)
    args = parser.parse_args(argv)

    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts

    import tabletop_rl
    from tabletop_rl.envs.core.agents import attach_view
    from tabletop_rl.training.interop import openspiel
    from tabletop_rl.training.runtime.agents import load_agent

    if args.game not in tabletop_rl.list_games():
        parser.error(f"unknown game {args.game!r}; expected one of {', '.join(tabletop_rl.list_games())}")
    spec = openspiel.parameter_specification(args.game)
    text = f"tabletop_{args.game}({args.params})"
    for key, value in pyspiel.game_parameters_from_string(text).items():  # OpenSpiel would print its own error
        if key != "name" and (key not in spec or type(value) is not type(spec[key])):
            parser.error(f"--params {key}={value}: expected one of " + ", ".join(
                f"{k}=<{type(v).__name__}>" for k, v in spec.items()))
    try:
        game = pyspiel.load_game(text)
        if game.num_players() != 2:
            raise ValueError(f"{args.game} has {game.num_players()} players here; this benchmark pits two")
        opponent = load_agent(args.opponent, game.engine, seed=args.seed)
    except (ValueError, pyspiel.SpielError) as error:
        parser.error(str(error))
    perfect = game.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION
    if (args.bot == "mcts") != perfect:
        parser.error(f"--bot {args.bot} needs a game of {'perfect' if args.bot == 'mcts' else 'imperfect'} "
                     f"information; use --bot {'ismcts' if args.bot == 'mcts' else 'mcts'}")

    wins, margins, times = [], [], {"bot": [], "opponent": []}
    live = [game.new_initial_state()]  # the game being played, for our agent's view (search samples from it)
    for deal in range(args.deals):
        for bot_seat in (0, 1):
            random_state = np.random.RandomState(args.seed + deal)
            evaluator = mcts.RandomRolloutEvaluator(1, random_state)
            bot = mcts.MCTSBot(game, 2, args.simulations, evaluator, random_state=random_state) if perfect \
                else ismcts.ISMCTSBot(game, evaluator, 2, args.simulations, random_state=random_state)
            chance = np.random.default_rng([args.seed, deal])
            state = live[0] = game.new_initial_state()
            attached = False
            while not state.is_terminal():
                if state.is_chance_node():
                    outcomes, probabilities = zip(*state.chance_outcomes(), strict=True)
                    state.apply_action(int(chance.choice(outcomes, p=probabilities)))
                    continue
                if not attached:  # once dealt: the view needs an engine state
                    attach_view(opponent, lambda: live[0].engine, 1 - bot_seat)
                    attached = True
                engine, seat = state.engine, state.current_player()
                start = time.process_time()
                if seat == bot_seat:
                    action = bot.step(state)
                else:
                    action = opponent.act(engine.observation(seat), engine.action_mask())
                times["bot" if seat == bot_seat else "opponent"].append(time.process_time() - start)
                state.apply_action(int(action))
            scores = state.engine.scores()
            wins.append(state.returns()[bot_seat])
            margins.append(scores[bot_seat] - scores[1 - bot_seat])
            print(f"deal {deal} bot seat {bot_seat}: returns {state.returns()}, scores {scores}", flush=True)
    wins, margins = np.array(wins), np.array(margins)
    half = 1.96 * margins.std(ddof=1) / np.sqrt(len(margins)) if len(margins) > 1 else float("nan")
    print(f"{args.bot} ({args.simulations} simulations) vs {args.opponent} on {game}: {len(wins)} games, "
          f"wins {np.mean(wins > 0):.1%}, draws {np.mean(wins == 0):.1%}, margin {margins.mean():+.1f} "
          f"[{margins.mean() - half:+.1f}, {margins.mean() + half:+.1f}] per game; CPU per decision: bot "
          f"{1000 * np.mean(times['bot']):.0f} ms, {args.opponent} {1000 * np.mean(times['opponent']):.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
