"""The hub's web page: every session of the hub in a browser, served by `omniagent hub` (docs/hub.md, "The web
page"). `door.py` lets a browser in (the login cookie), `routes.py` serves the page's files and its login, `results.py`
a batch job's report; the page itself is `static/` (plain ES modules, no build step) and speaks the sidecar wire over
`/sidecar`."""
