"""`omniagent serve`: the anyagent sidecar wire on stdin/stdout, over the Python `Runtime`."""
