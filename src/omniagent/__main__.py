"""`python -m omniagent` runs the command line."""

from omniagent.faces.cli.main import main

raise SystemExit(main())
