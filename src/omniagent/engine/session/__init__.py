"""Session lifecycle: create, list, get, patch, remove, fork, rewind."""
