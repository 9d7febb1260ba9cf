"""Play time, numpy only (what the light install ``pip install -e .`` runs): policy files and their inference
(:mod:`.policy`), the agent loader (:mod:`.agents`), search (:mod:`.search`), opponents (:mod:`.opponents`), the
single-seat Gymnasium env (:mod:`.single_seat`), a game in the terminal (:mod:`.terminal`), atomic writes
(:mod:`.files`). Nothing here imports torch."""
