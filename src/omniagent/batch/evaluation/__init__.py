"""What a batch job measures: its metrics over the trials' results (`metrics.py`, pure) and `job.json`, the job's
result written at its end (`job.py`). Not the running of trials (scheduler.py, execute.py) nor the progress view."""
