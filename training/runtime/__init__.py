"""Play time, numpy only (what the light install ``pip install -e .`` runs), and no command-line code: policy files
and their inference (:mod:`.policy`), where policies are found (:mod:`.policy_paths`), the agent loader
(:mod:`.agents`, with the options of agent specs in :mod:`.spec_options`), search (:mod:`.search`,
:mod:`.ismcts`), opponents (:mod:`.opponents`), one game of the learner against them (:mod:`.table`), the
single-seat Gymnasium env (:mod:`.single_seat`) and the batched vector env (:mod:`.vector_env`), worker processes
(:mod:`.processes`) and commands printed for the user to copy (:mod:`.printed_commands`). Nothing here imports
torch."""
