#!/usr/bin/env bash
# Tests the image packaging/build.sh made. Containers cannot start on our machines (crun's setrlimit is refused in
# this sandbox), so the image's filesystem is mounted (`buildah from` + `buildah mount`) and its entrypoint run in a
# chroot of it as the image's user, with the image's environment (its TROVE_BIND moved to a free loopback port).
# Checked from outside, as a client would:
#   - GET /health/ready answers 200 (the database on /data, the media store on /data), and the image's own
#     HEALTHCHECK command, run in the chroot, exits 0;
#   - the store is made in /data by the image's user, never root;
#   - a sign-in: an owner invited by `trove invite` in the chroot joins (POST /api/invitations/accept) and signs in
#     with the password (POST /api/session);
#   - an upload: a photo kept on an item (POST /api/items/{id}/media: decoded, re-encoded, thumbnailed in the image);
#   - an HTTPS call's certificate check: `trove model check` against a local TLS fake of the Model API whose
#     certificate is signed by a test CA: refused for its unknown issuer with the image's CA bundle, and reaching
#     the fake (its 401 for the key) once the test CA is what SSL_CERT_FILE names.
#
#   packaging/test-image.sh [IMAGE]     # default localhost/trove:latest
#
# Needs: buildah, chroot (coreutils), root, curl, openssl, python3.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=bench/lib.sh
. "$here/../bench/lib.sh"
image="${1:-localhost/trove:latest}"
work="$(mktemp -d "${TMPDIR:-/tmp}/trove-image-test-XXXXXX")"
ctr="" server="" fake=""
cleanup() {
  for pid in $server $fake; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
  if [ -n "$ctr" ]; then buildah rm "$ctr" >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "test-image: FAILED: $*" >&2; [ -f "$work/server.log" ] && tail -n 30 "$work/server.log" >&2; exit 1; }

ctr="$(buildah from "$image")"
rootfs="$(buildah mount "$ctr")"
user="$(buildah inspect --type image --format '{{.Docker.Config.User}}' "$image")"
mapfile -t image_env < <(buildah inspect --type image --format '{{range .Docker.Config.Env}}{{println .}}{{end}}' "$image" | sed '/^$/d')
mapfile -t entrypoint < <(buildah inspect --type image --format '{{range .Docker.Config.Entrypoint}}{{println .}}{{end}}' "$image" | sed '/^$/d')
mapfile -t cmd < <(buildah inspect --type image --format '{{range .Docker.Config.Cmd}}{{println .}}{{end}}' "$image" | sed '/^$/d')
mapfile -t healthcheck < <(buildah inspect --type image --format '{{range .Docker.Config.Healthcheck.Test}}{{println .}}{{end}}' "$image" | sed '/^$/d')
[ "$user" = "10001:10001" ] || fail "the image runs as $user, not the non-root trove user"
[ "${healthcheck[0]:-}" = "CMD" ] || fail "the image has no HEALTHCHECK: ${healthcheck[*]:-none}"

port="$(free_port)"
chroot="$(command -v chroot)"
# Runs a command in the image's filesystem as its user, with its environment and the free port.
in_image() {
  env -i "${image_env[@]}" TROVE_BIND="127.0.0.1:$port" "${extra_env[@]}" "$chroot" --userspec="$user" "$rootfs" "$@"
}
extra_env=()
in_image "${entrypoint[@]}" "${cmd[@]}" >"$work/server.log" 2>&1 &
server=$!
wait_for_trove "http://127.0.0.1:$port" "$server" "$work/server.log" test-image

ready="$(curl -sS -w ' %{http_code}' "http://127.0.0.1:$port/health/ready")"
[[ "$ready" == *'"status":"ready"'*' 200' ]] || fail "/health/ready answered $ready"
in_image "${healthcheck[@]:1}" >/dev/null || fail "the image's HEALTHCHECK (${healthcheck[*]:1}) failed"
owner="$(stat -c %u "$rootfs/data/trove.sqlite3" 2>/dev/null || true)"
[ "$owner" = "${user%%:*}" ] || fail "the store in /data belongs to uid ${owner:-nobody}, not the image's user"
echo "test-image: /health/ready 200 and the HEALTHCHECK passes; the store is the image user's"

# A sign-in: an owner invited from the command line joins with a password, then signs in with it.
link="$(in_image /usr/local/bin/trove invite --role owner | grep -o 'http[^ ]*' | head -n1)"
code="${link##*/}"
[ -n "$code" ] || fail "trove invite printed no link"
status="$(curl -sS -o "$work/join.json" -w '%{http_code}' -H 'Content-Type: application/json' \
  -d "{\"code\":\"$code\",\"name\":\"image owner\",\"password\":\"a long enough password\"}" \
  "http://127.0.0.1:$port/api/invitations/accept")"
[ "$status" = 201 ] || fail "joining answered $status: $(cat "$work/join.json")"
status="$(curl -sS -o "$work/session.json" -D "$work/session.headers" -w '%{http_code}' -H 'Content-Type: application/json' \
  -d '{"name":"image owner","password":"a long enough password"}' "http://127.0.0.1:$port/api/session")"
[[ "$status" == 20[01] ]] && grep -qi '^set-cookie: ' "$work/session.headers" || fail "signing in answered $status"
echo "test-image: an owner joined and signed in with a password"

# An upload: a photo kept on an item, and its thumbnail made.
token="$(in_image /usr/local/bin/trove token new --member 'image test')"
python3 - "$work/photo.png" <<'PY'
import struct, sys, zlib
w, h = 64, 48
rows = b"".join(b"\0" + bytes(v for x in range(w) for v in (x * 4 % 256, y * 5 % 256, 128)) for y in range(h))
def chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)
png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
open(sys.argv[1], "wb").write(png)
PY
item="$(curl -fsS -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
  -d '{"name":"Image test","item_type":"tool","profile":"","condition":"good","intent":"keep"}' \
  "http://127.0.0.1:$port/api/items" | python3 -c 'import json, sys; print(json.load(sys.stdin)["id"])')"
status="$(curl -sS -o "$work/media.json" -w '%{http_code}' -H "Authorization: Bearer $token" \
  -F "file=@$work/photo.png;type=image/png" "http://127.0.0.1:$port/api/items/$item/media")"
[ "$status" = 201 ] || fail "the upload answered $status: $(cat "$work/media.json")"
media="$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' "$work/media.json")"
status="$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $token" "http://127.0.0.1:$port/api/media/$media/thumb")"
[ "$status" = 200 ] || fail "the thumbnail answered $status"
echo "test-image: a photo was uploaded and thumbnailed"

# An HTTPS call: a local TLS fake of the Model API, its certificate signed by a test CA.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj '/CN=Trove test CA' -keyout "$work/ca.key" -out "$work/ca.pem" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj '/CN=localhost' -keyout "$work/fake.key" -out "$work/fake.csr" 2>/dev/null
printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$work/fake.ext"
openssl x509 -req -in "$work/fake.csr" -CA "$work/ca.pem" -CAkey "$work/ca.key" -CAcreateserial -days 2 \
  -extfile "$work/fake.ext" -out "$work/fake.pem" 2>/dev/null
tls_port="$(free_port)"
python3 - "$tls_port" "$work/fake.pem" "$work/fake.key" >"$work/fake.log" 2>&1 <<'PY' &
import http.server, json, ssl, sys
class Fake(http.server.BaseHTTPRequestHandler):
    def answer(self):
        body = json.dumps({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    do_GET = do_POST = answer
server = http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Fake)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[2], sys.argv[3])
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PY
fake=$!
for _ in $(seq 1 50); do (exec 3<>"/dev/tcp/127.0.0.1/$tls_port") 2>/dev/null && break; sleep 0.1; done
extra_env=(MODEL_PROVIDER=openai "MODEL_API_URL=https://localhost:$tls_port/v1" MODEL_API_KEY=sk-image-test \
  "TROVE_BIND=127.0.0.1:$(free_port)")
untrusted="$(in_image /usr/local/bin/trove model check 2>&1 || true)"
grep -qiE 'certificate|UnknownIssuer' <<<"$untrusted" || fail "an unknown issuer was not refused: $untrusted"
grep -q 'invalid_api_key\|rejected the key' <<<"$untrusted" && fail "the fake was reached through an untrusted certificate"
echo "test-image: with the image's CA bundle: $(grep -oiE '[^:]*(certificate|UnknownIssuer)[^;]*' <<<"$untrusted" | head -n1)"
cp "$work/ca.pem" "$rootfs/tmp/test-ca.pem"
extra_env+=(SSL_CERT_FILE=/tmp/test-ca.pem)
trusted="$(in_image /usr/local/bin/trove model check 2>&1 || true)"
grep -q 'rejected the key' <<<"$trusted" || fail "the fake was not reached with its CA trusted: $trusted"
echo "test-image: HTTPS to the model provider checks its certificate (refused: unknown issuer; trusted CA: reached)"
echo "test-image: passed"
