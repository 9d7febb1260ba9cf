"""Shared machinery: the engine contract, the generic PettingZoo adapter, options, layouts, drawing."""
