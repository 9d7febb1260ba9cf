"""Evaluation, numpy only: seat-balanced tournaments (:mod:`.tournament`) and the statistics of every evaluation,
the training runs' too (:mod:`.stats`)."""
