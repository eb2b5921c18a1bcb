"""Agent Skills: the files on disk, each session's catalog, and what the model sees of them."""
