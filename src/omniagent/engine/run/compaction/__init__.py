"""Compaction: the rules (when and where to cut, as pure functions) and one compaction step of a run.

It is part of the runs: a compaction is a run of its own (`session.compact`, admitted by `run/inputs.py`, its rows in
`run/rows.py`) or a step of a turn before a round (`run/executor.py`), and the step works through the run's
`RunContext`, its retry loop and its request rendering (`run/conversation.py`, which projects a transcript by these
rules), so the two import each other's modules and neither sits below the other.
"""
