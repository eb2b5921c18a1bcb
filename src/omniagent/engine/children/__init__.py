"""Child sessions: the tree (spawn, instruct, stop, settle). What a child reports to its parent and the limits of
child sessions live with the runs (`run/reports.py`, `run/limits.py`), whose transactions and admission use them."""
