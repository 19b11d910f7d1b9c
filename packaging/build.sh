#!/usr/bin/env bash
# Builds Trove's OCI image with buildah FROM SCRATCH (no base image, no registry): the release binary, the shared
# libraries it links (as `ldd` lists them, the loader included), CA certificates (HTTPS to the model provider and
# S3), /etc/passwd and /etc/group with the non-root user `trove` (10001), /tmp, and /data as the volume, owned by
# it. The image runs `trove serve` on 0.0.0.0:8080 as that user, with a HEALTHCHECK of `trove health`
# (GET /health/ready; there is no curl in it).
#
#   packaging/build.sh [IMAGE]       # default localhost/trove:latest; TROVE_BIN uses a binary already built
#
# Needs: buildah (Debian's package), strip (binutils), root (or `buildah unshare`), cargo unless TROVE_BIN is given.
set -euo pipefail
# The HEALTHCHECK is a Docker image field (OCI images have none).
export BUILDAH_FORMAT=docker

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/.." && pwd)"
image="${1:-localhost/trove:latest}"
if [ -z "${TROVE_BIN:-}" ]; then
  (cd "$root" && cargo build --quiet --release -p trove)
fi
bin="${TROVE_BIN:-${CARGO_TARGET_DIR:-$root/target}/release/trove}"
certs=/etc/ssl/certs/ca-certificates.crt
[ -s "$certs" ] || { echo "build: no CA certificates at $certs (apt-get install ca-certificates)" >&2; exit 1; }

ctr="$(buildah from scratch)"
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
rootfs="$(buildah mount "$ctr")"

# Without its debug line tables (a tenth of the size); the symbols stay, for backtraces.
mkdir -p "$rootfs/usr/local/bin"
strip --strip-debug -o "$rootfs/usr/local/bin/trove" "$bin"
chmod 0755 "$rootfs/usr/local/bin/trove"
# Every library the binary links, at the path the loader looks for it, and the loader itself.
ldd "$bin" | awk '/=> \// {print $3} /^\t\// {print $1}' | while read -r lib; do
  install -D -m 0755 "$(readlink -f "$lib")" "$rootfs$lib"
done
install -D -m 0644 "$certs" "$rootfs$certs"
mkdir -p "$rootfs/etc" "$rootfs/tmp" "$rootfs/data"
chmod 1777 "$rootfs/tmp"
printf 'root:x:0:0:root:/:/sbin/nologin\ntrove:x:10001:10001:Trove:/data:/sbin/nologin\n' >"$rootfs/etc/passwd"
printf 'root:x:0:\ntrove:x:10001:\n' >"$rootfs/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' >"$rootfs/etc/hosts"
printf 'hosts: files dns\n' >"$rootfs/etc/nsswitch.conf"
chown 10001:10001 "$rootfs/data"
chmod 0700 "$rootfs/data"
buildah umount "$ctr" >/dev/null

buildah config \
  --user 10001:10001 \
  --workingdir /data \
  --env TROVE_BIND=0.0.0.0:8080 \
  --env TROVE_DATA_DIR=/data \
  --env SSL_CERT_FILE="$certs" \
  --volume /data \
  --port 8080 \
  --entrypoint '["/usr/local/bin/trove"]' \
  --cmd serve \
  --healthcheck 'CMD /usr/local/bin/trove health' \
  --healthcheck-interval 30s --healthcheck-timeout 10s --healthcheck-start-period 20s --healthcheck-retries 3 \
  --label org.opencontainers.image.title=Trove \
  --label org.opencontainers.image.source=https://example.invalid/trove \
  "$ctr"
buildah commit --quiet --format docker --rm "$ctr" "$image" >/dev/null
trap - EXIT
echo "build: $image ($(buildah images --format '{{.Size}}' "$image"))"
