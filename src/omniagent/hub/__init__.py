"""The hub: sessions of any agent owned by a long-lived process, reached by many clients at once.

`Hub` opens sessions through the `Runtime` and keeps each one (`HubSession`) with a bounded log of its events, so a
client can leave and come back: `attach` replays what the client missed, then follows live. The faces on top
(`faces/hub` over HTTP and WebSocket, `faces/acp` and `faces/sidecar` on stdio) only translate.
"""
