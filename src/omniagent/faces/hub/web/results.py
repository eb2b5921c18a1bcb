"""A batch job's results through the hub (`omniagent hub --batch-dir OUT`): `OUT/report.html` and the files it links,
read-only, under `/batch/`.

Only regular files inside OUT are served: a path with an empty, `.` or `..` part, a hidden part (`.git`), a
backslash or a NUL is refused, and so is one that resolves (symbolic links followed) outside OUT. The report is the
one HTML page; every other file is served as text (JSON as JSON), so a file an agent wrote can never run as a page
of the hub's origin. Everything carries a sandboxing Content-Security-Policy.
"""

from __future__ import annotations

from pathlib import Path

from starlette.requests import Request
from starlette.responses import FileResponse, RedirectResponse, Response

from omniagent.faces.hub.streamable import refusal

REPORT = "report.html"
# The report is one self-contained page: inline CSS and SVG, no script. Sandboxed without scripts, it may keep the
# hub's origin (`allow-same-origin`), so its links to the trials' files carry the page's SameSite=Strict cookie.
REPORT_POLICY = (
    "sandbox allow-same-origin; default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none';"
    " form-action 'none'; frame-ancestors 'none'"
)
FILE_POLICY = "sandbox; default-src 'none'; frame-ancestors 'none'"


class BatchFiles:
    """The files of one batch job's output folder."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()

    def find(self, relative: str) -> Path | None:
        """The regular file `relative` (a URL path, `/`-separated) names inside the folder, or None."""
        parts = relative.split("/")
        if any(not part or part.startswith(".") or "\\" in part or "\0" in part for part in parts):
            return None
        try:
            found = self.root.joinpath(*parts).resolve(strict=True)
        except (OSError, RuntimeError):  # absent, unreadable, or a loop of links
            return None
        if not found.is_relative_to(self.root) or not found.is_file():
            return None
        return found

    async def serve(self, request: Request) -> Response:
        """`GET /batch/{path}`: the file, or 404 (the same for a file absent and a path refused)."""
        relative = request.path_params.get("path", "")
        if relative == "":
            return RedirectResponse(f"/batch/{REPORT}", status_code=307)
        found = self.find(relative)
        if found is None:
            return refusal(404, "no such file in the batch's results")
        if relative == REPORT:
            media, policy = "text/html; charset=utf-8", REPORT_POLICY
        else:
            media = "application/json" if found.suffix == ".json" else "text/plain; charset=utf-8"
            policy = FILE_POLICY
        headers = {
            "Content-Security-Policy": policy,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-cache",
        }
        return FileResponse(found, media_type=media, headers=headers)
