"""The exec tool and the sandbox (bubblewrap) its commands run in."""
