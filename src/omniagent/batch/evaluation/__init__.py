"""What a batch job measures: its metrics over the trials' results (`metrics.py`, pure), `job.json`, the job's
result written at its end (`job.py`), the `result.json` files in Harbor's shape, a trial's (`trial_result.py`) and
the job's (`job_result.py`), and `report.html`, the same and every trial as a page (`report.py`, with the mean
reward's interval from `confidence.py`). Not the running of trials (scheduler.py, execute.py) nor the progress
view."""
