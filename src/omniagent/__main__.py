"""`python -m omniagent` runs the command line."""

from omniagent.cli import main

raise SystemExit(main())
