"""The sandbox's network in allowlist mode: the rules (allowlist.py), the proxy that serves every connection under
them (proxy.py) and the bridge inside the sandbox that hands it each one (bridge.py), and the address rules the proxy
shares with the engine's `fetch` (addresses.py)."""
