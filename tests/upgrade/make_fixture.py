#!/usr/bin/env python3
"""Cuts the upgrade fixture of a release: a store written by that release's `trove`, on SQLite and on PostgreSQL,
and what its API answered.

Run once per release, with the binary built from the release's tag (see tests/upgrade/README.md):

    git worktree add /tmp/trove-vX.Y.Z vX.Y.Z && (cd /tmp/trove-vX.Y.Z && cargo build -p trove)
    tests/upgrade/make_fixture.py --trove /tmp/.../debug/trove --out tests/upgrade/fixtures/vX.Y.Z

For each backend it makes an empty store, seeds the demo inventory, and through the HTTP API adds what a
household has after some use: places, items with a photo and a manual, an edit (history), a member who signs in
with a password, a loan, a maintenance schedule, a value set by hand, a project proposed and accepted. It then
records every read of `reads` below (JSON answers as they are; files by SHA-256), stops the server and keeps the
store: `sqlite/trove.sqlite3` (one file, by SQLite's backup API) or `postgres/dump.sql` (`pg_dump --inserts`), with
the media files beside it. `tests/it/upgrade.rs` loads each, runs today's migrations and asks the same reads.

Needs only Python's standard library, `pg_dump` and a PostgreSQL at DATABASE_ADMIN_URL (default
postgres://postgres@127.0.0.1:5432/postgres).
"""

import argparse
import hashlib
import json
import os
import shutil
import socket
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
import zlib

PDF = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
MEMBER = {"name": "Robin", "password": "upgrade fixture password 1"}


def png(width, height):
    """A small RGB gradient PNG, made here so the fixture needs no picture library."""
    rows = b"".join(
        b"\x00" + bytes(v for x in range(width) for v in ((x * 255) // width, (y * 255) // height, 128))
        for y in range(height)
    )

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Trove:
    def __init__(self, binary, env):
        self.binary = binary
        self.env = env
        self.base = None
        self.token = None
        self.process = None

    def run(self, *args):
        out = subprocess.run([self.binary, *args], env=self.env, capture_output=True, text=True, check=False)
        if out.returncode != 0:
            sys.exit(f"trove {' '.join(args)} failed: {out.stderr}")
        return out.stdout

    def serve(self):
        port = free_port()
        self.env["TROVE_BIND"] = f"127.0.0.1:{port}"
        self.base = f"http://127.0.0.1:{port}"
        self.process = subprocess.Popen([self.binary, "serve"], env=self.env, stdout=subprocess.DEVNULL)
        for _ in range(300):
            try:
                urllib.request.urlopen(self.base + "/health", timeout=1)
                return
            except OSError:
                time.sleep(0.1)
        sys.exit("trove serve did not start")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=30)

    def request(self, method, path, body=None, content_type="application/json", token=True):
        data = json.dumps(body).encode() if content_type == "application/json" and body is not None else body
        req = urllib.request.Request(self.base + "/api" + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", content_type)
        if token:
            req.add_header("Authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return resp.status, resp.headers.get("Content-Type", ""), resp.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type", ""), e.read()

    def json(self, method, path, body=None, want=(200, 201)):
        status, _, raw = self.request(method, path, body)
        if status not in want:
            sys.exit(f"{method} {path}: {status} {raw[:500]!r}")
        return json.loads(raw) if raw else None

    def upload(self, item, name, content_type, data, kind, caption):
        boundary = uuid.uuid4().hex
        parts = []
        for field, value in (("kind", kind), ("caption", caption)):
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{field}"\r\n\r\n{value}\r\n'.encode())
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            f"Content-Type: {content_type}\r\n\r\n".encode()
            + data
            + b"\r\n"
        )
        body = b"".join(parts) + f"--{boundary}--\r\n".encode()
        status, _, raw = self.request(
            "POST", f"/items/{item}/media", body, content_type=f"multipart/form-data; boundary={boundary}"
        )
        if status != 201:
            sys.exit(f"upload: {status} {raw[:500]!r}")
        return json.loads(raw)


def populate(trove):
    """What a household has after some use. Returns the ids the reads name."""
    trove.run("demo")
    trove.token = trove.run("token", "new", "--household", "default", "--name", "upgrade fixture").strip().split()[-1]
    link = trove.run("invite", "--role", "member", "--household", "default")
    code = next(w for w in link.split() if "/join/" in w or "code=" in w).rstrip(".").split("/")[-1].split("=")[-1]
    trove.serve()
    status, _, raw = trove.request("POST", "/invitations/accept", dict(code=code, **MEMBER), token=False)
    if status != 201:
        sys.exit(f"accepting the invitation: {status} {raw!r}")

    shed = trove.json("POST", "/places", {"name": "Shed", "note": "behind the house"})
    shelf = trove.json("POST", "/places", {"name": "Top shelf", "parent_id": shed["id"]})
    drill = trove.json(
        "POST",
        "/items",
        {
            "name": "Cordless drill 18V",
            "item_type": "tool",
            "profile": "power_tool",
            "condition": "good",
            "intent": "keep",
            "place_id": shelf["id"],
            "serial": "DR-1802-7731",
            "tags": ["power", "workshop"],
            "notes": "Two batteries.",
            "purchase": {"date": "2024-03-09", "price": 12900, "currency": "EUR", "vendor": "Hardware store"},
            "warranty_until": "2027-03-09",
        },
    )
    screws = trove.json(
        "POST",
        "/items",
        {
            "name": "Wood screws 4x40",
            "item_type": "material",
            "profile": "generic",
            "condition": "new",
            "intent": "keep",
            "place_id": shed["id"],
            "quantity": 250,
            "min_quantity": 50,
        },
    )
    photo = trove.upload(drill["id"], "drill.png", "image/png", png(96, 64), "photo", "the drill")
    manual = trove.upload(drill["id"], "manual.pdf", "application/pdf", PDF, "manual", "user manual")
    trove.json("PATCH", f"/items/{drill['id']}", {"condition": "fair", "notes": "Two batteries; one is weak."})
    trove.json("PATCH", f"/items/{screws['id']}", {"quantity": 180})
    trove.json("PUT", f"/items/{drill['id']}/value", {"amount": 6000, "currency": "EUR"})
    members = trove.json("GET", "/members")
    robin = next(m for m in members["members"] if m["name"] == MEMBER["name"])
    trove.json("POST", f"/items/{drill['id']}/loans", {"to": {"member_id": robin["id"]}, "note": "for the fence"})
    trove.json("POST", f"/items/{screws['id']}/loans", {"to": {"name": "Sam next door"}, "units": 20})
    trove.json("POST", f"/items/{drill['id']}/schedules", {"title": "Charge the batteries", "every": {"months": 3}})
    proposed = trove.json("POST", "/projects/propose", {"brief": "something for the garden"})
    project = proposed["projects"][0]["id"]
    trove.json("POST", f"/projects/{project}/accept")
    return {"drill": drill["id"], "screws": screws["id"], "shed": shed["id"], "shelf": shelf["id"],
            "photo": photo["id"], "manual": manual["id"], "project": project}


def reads(ids):
    """Every read the upgrade test asks again: (path, how to record it)."""
    paths = [
        "/me", "/members", "/places", f"/places/{ids['shed']}", f"/places/{ids['shelf']}",
        f"/places/{ids['shed']}/history",
        "/items?limit=500&include_gone=true", "/items?sort=name&limit=500", "/item-types", "/templates",
        "/loans", "/schedules", "/projects", "/activity?limit=200", "/tokens", "/invitations", "/spend",
        "/report/value",
    ]
    for item in (ids["drill"], ids["screws"]):
        paths += [f"/items/{item}", f"/items/{item}/history", f"/items/{item}/media", f"/items/{item}/prices",
                  f"/items/{item}/schedules", f"/items/{item}/maintenance"]
    paths += [f"/projects/{ids['project']}", f"/projects/{ids['project']}/pack"]
    files = [f"/media/{ids['photo']}", f"/media/{ids['manual']}", "/export.csv"]
    return paths, files


def record(trove, ids):
    paths, files = reads(ids)
    answers = {}
    for path in paths:
        answers[path] = trove.json("GET", path)
    hashes, bodies = {}, {}
    for path in files:
        status, content_type, raw = trove.request("GET", path)
        if status != 200:
            sys.exit(f"GET {path}: {status}")
        hashes[path] = {"content_type": content_type, "sha256": hashlib.sha256(raw).hexdigest(), "bytes": len(raw)}
        bodies[path] = raw
    # The export is compared by its columns (a newer Trove may add some), so its text is kept too.
    csv_text = bodies["/export.csv"].decode()
    return {"token": trove.token, "member": MEMBER, "ids": ids, "json": answers, "files": hashes, "csv": csv_text}


def cut(binary, backend, out):
    work = tempfile.mkdtemp(prefix=f"trove-fixture-{backend}-")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TROVE_", "MODEL_", "DATABASE_"))}
    env["TROVE_DATA_DIR"] = work
    admin = os.environ.get("DATABASE_ADMIN_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    database = f"trove_fixture_{os.getpid()}"
    if backend == "postgres":
        subprocess.run(["psql", admin, "-qc", f"CREATE DATABASE {database}"], check=True)
        env["DATABASE_URL"] = admin.rsplit("/", 1)[0] + "/" + database
    trove = Trove(binary, env)
    ids = populate(trove)
    answers = record(trove, ids)
    trove.stop()

    target = os.path.join(out, backend)
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    if backend == "sqlite":
        source = sqlite3.connect(os.path.join(work, "trove.sqlite3"))
        copy = sqlite3.connect(os.path.join(target, "trove.sqlite3"))
        source.backup(copy)
        copy.execute("VACUUM")
        copy.close()
        source.close()
    else:
        with open(os.path.join(target, "dump.sql"), "w") as f:
            subprocess.run(
                ["pg_dump", "--inserts", "--no-owner", "--no-privileges", "--no-comments", env["DATABASE_URL"]],
                stdout=f, check=True,
            )
        subprocess.run(["psql", admin, "-qc", f"DROP DATABASE {database}"], check=True)
    shutil.copytree(os.path.join(work, "media"), os.path.join(target, "media"))
    with open(os.path.join(target, "reads.json"), "w") as f:
        json.dump(answers, f, indent=1, sort_keys=True)
        f.write("\n")
    shutil.rmtree(work)
    print(f"{backend}: {len(answers['json'])} reads, {len(answers['files'])} files -> {target}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trove", required=True, help="the release's trove binary")
    parser.add_argument("--out", required=True, help="tests/upgrade/fixtures/<release>")
    args = parser.parse_args()
    for backend in ("sqlite", "postgres"):
        cut(os.path.abspath(args.trove), backend, args.out)


if __name__ == "__main__":
    main()
