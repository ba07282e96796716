"""A Hugging Face hub stand-in on the loopback interface, serving a folder laid out as hub repos.

Layout: ``<root>/<models|datasets>/<org>/<name>/<commit sha>/<files>`` plus, next to the commit
folders, ``refs.json`` mapping branch names to commits (``{"main": "<sha>"}``). The server answers the
requests ``huggingface_hub`` (``snapshot_download``, ``hf_hub_download``, ``HfFileSystem``) and
``datasets.load_dataset`` make: repo info per revision, file trees, paths-info and ``resolve`` URLs,
with the commit and ETag headers the clients check. Point ``HF_ENDPOINT`` at ``server.url``.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlparse

KINDS = {"models": "models", "datasets": "datasets"}


class HubFolder:
    def __init__(self, root: Path):
        self.root = Path(root)
        self.requests: list[str] = []

    def repo(self, kind: str, repo_id: str) -> Path:
        return self.root / kind / repo_id

    def commit(self, kind: str, repo_id: str, revision: str | None) -> str | None:
        repo = self.repo(kind, repo_id)
        if not repo.is_dir():
            return None
        revision = unquote(revision or "main")
        refs = json.loads((repo / "refs.json").read_text())
        if revision in refs:
            return refs[revision]
        return revision if (repo / revision).is_dir() else None

    def files(self, kind: str, repo_id: str, commit: str) -> list[Path]:
        base = self.repo(kind, repo_id) / commit
        return sorted(p for p in base.rglob("*") if p.is_file())


def _etag(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _entry(path: Path, base: Path) -> dict:
    if path.is_dir():
        return {
            "type": "directory",
            "oid": "0" * 40,
            "size": 0,
            "path": str(path.relative_to(base)),
        }
    digest = _etag(path)
    return {
        "type": "file",
        "oid": digest[:40],
        "size": path.stat().st_size,
        "path": str(path.relative_to(base)),
        "lfs": {"oid": digest, "size": path.stat().st_size, "pointerSize": 130},
    }


def make_handler(hub: HubFolder):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def _send(self, status: int, body: bytes = b"", headers: dict | None = None, head=False):
            self.send_response(status)
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head:
                self.wfile.write(body)

        def _json(self, payload, status=200, head=False):
            self._send(
                status, json.dumps(payload).encode(), {"Content-Type": "application/json"}, head
            )

        def _not_found(self, head=False):
            self._send(
                404,
                b'{"error": "Repository not found"}',
                {"X-Error-Code": "RepoNotFound", "Content-Type": "application/json"},
                head,
            )

        def do_HEAD(self):
            self._route(head=True)

        def do_GET(self):
            self._route(head=False)

        def do_POST(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length).decode() if length else ""
            self._route(head=False, body=body)

        def _route(self, head: bool, body: str = ""):
            url = urlparse(self.path)
            path = unquote(url.path)
            hub.requests.append(f"{self.command} {self.path}")
            # repo info: /api/{models|datasets}/{org}/{name}[/revision/{rev}]
            match = re.fullmatch(r"/api/(models|datasets)/([^/]+/[^/]+)(?:/revision/(.+))?", path)
            if match:
                return self._info(match[1], match[2], match[3], head)
            match = re.fullmatch(
                r"/api/(models|datasets)/([^/]+/[^/]+)/tree/([^/]+)(?:/(.*))?", path
            )
            if match:
                query = parse_qs(url.query)
                return self._tree(match[1], match[2], match[3], match[4] or "", query)
            match = re.fullmatch(r"/api/(models|datasets)/([^/]+/[^/]+)/paths-info/(.+)", path)
            if match:
                return self._paths_info(match[1], match[2], match[3], body)
            match = re.fullmatch(r"/(datasets/)?([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path)
            if match:
                kind = "datasets" if match[1] else "models"
                return self._resolve(kind, match[2], match[3], match[4], head)
            return self._not_found(head)

        def _info(self, kind, repo_id, revision, head):
            commit = hub.commit(kind, repo_id, revision)
            if commit is None:
                return self._not_found(head)
            base = hub.repo(kind, repo_id) / commit
            siblings = [
                {"rfilename": str(p.relative_to(base))} for p in hub.files(kind, repo_id, commit)
            ]
            payload = {
                "id": repo_id,
                "_id": hashlib.sha1(repo_id.encode()).hexdigest()[:24],
                "sha": commit,
                "private": False,
                "gated": False,
                "disabled": False,
                "siblings": siblings,
                "tags": [],
                "lastModified": "2024-01-01T00:00:00.000Z",
            }
            if kind == "datasets":
                payload["cardData"] = {}
            return self._json(payload, head=head)

        def _tree(self, kind, repo_id, revision, folder, query):
            commit = hub.commit(kind, repo_id, revision)
            if commit is None:
                return self._not_found()
            base = hub.repo(kind, repo_id) / commit
            start = base / folder if folder else base
            if not start.exists():
                return self._send(
                    404, b'{"error": "Entry not found"}', {"X-Error-Code": "EntryNotFound"}
                )
            recursive = query.get("recursive", ["false"])[0].lower() == "true"
            children = sorted(start.rglob("*") if recursive else start.iterdir())
            return self._json([_entry(p, base) for p in children])

        def _paths_info(self, kind, repo_id, revision, body):
            commit = hub.commit(kind, repo_id, revision)
            if commit is None:
                return self._not_found()
            base = hub.repo(kind, repo_id) / commit
            fields = parse_qs(body) if body and not body.lstrip().startswith("{") else {}
            paths = fields.get("paths", [])
            if body.lstrip().startswith("{"):
                paths = json.loads(body).get("paths", [])
            found = [_entry(base / p, base) for p in paths if (base / p).exists()]
            return self._json(found)

        def _resolve(self, kind, repo_id, revision, filename, head):
            commit = hub.commit(kind, repo_id, revision)
            if commit is None:
                return self._not_found(head)
            path = hub.repo(kind, repo_id) / commit / filename
            if not path.is_file():
                return self._send(
                    404, b"", {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit}, head
                )
            data = path.read_bytes()
            etag = f'"{_etag(path)}"'
            headers = {
                "X-Repo-Commit": commit,
                "ETag": etag,
                "X-Linked-Etag": etag,
                "X-Linked-Size": str(len(data)),
                "Content-Type": "application/octet-stream",
                "Accept-Ranges": "bytes",
            }
            self.send_response(200)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if not head:
                self.wfile.write(data)

    return Handler


class HubServer:
    """``with HubServer(root) as hub: ... hub.url ...``: serves ``root`` on 127.0.0.1."""

    def __init__(self, root: Path):
        self.folder = HubFolder(root)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(self.folder))
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def add_revision(root: Path, kind: str, repo_id: str, commit: str, files: dict, branch="main"):
    """Write ``files`` ({relative path: bytes or source Path}) as commit ``commit`` of a repo and
    point ``branch`` at it."""
    repo = Path(root) / kind / repo_id
    base = repo / commit
    for name, content in files.items():
        target = base / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else Path(content).read_bytes())
    refs_file = repo / "refs.json"
    refs = json.loads(refs_file.read_text()) if refs_file.exists() else {}
    if branch:
        refs[branch] = commit
    refs_file.write_text(json.dumps(refs))
    return base
