"""The file tools (read, write, edit, search) and race-free file access beneath the workspace."""
