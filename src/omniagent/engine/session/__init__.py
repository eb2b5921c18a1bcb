"""Session lifecycle: create, list, get, patch, remove, fork, rewind, and the transcript helpers."""
