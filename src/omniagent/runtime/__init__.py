"""The runtime: finds the agent CLIs on this machine and drives each behind one event stream."""
