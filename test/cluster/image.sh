#!/usr/bin/env bash
# Writes a one-layer OCI image layout as a tar, for `ctr images import` or a push to a registry.
#   image.sh OUT.tar NAME ENTRYPOINT SRC[=DEST]...
# Each SRC file is copied to DEST in the image (to its own path when DEST is omitted), so a
# dynamically linked binary goes in with the libraries `ldd` lists. NAME (e.g.
# docker.io/grafana/k6:2.2.0) is the name containerd gives the image on import. No Docker, no
# shell in the image: only the files given. IMAGE_LABEL=key=value adds a label to the image config
# (a different image ID for the same files).
set -euo pipefail

out=$1 name=$2 entrypoint=$3
shift 3
die() { printf '[image] error: %s\n' "$*" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
mkdir -p "$root" "$work/layout/blobs/sha256"
for spec in "$@"; do
  src="${spec%%=*}"
  dest="$src"
  [[ "$spec" == *=* ]] && dest="${spec#*=}"
  [[ -f "$src" ]] || die "$src is not a file"
  mkdir -p "$root$(dirname "$dest")"
  cp -L "$src" "$root$dest"
done
# Reproducible layer: fixed owner, mode-preserving, sorted, fixed mtime.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime='2026-01-01 00:00:00Z' -C "$root" -cf "$work/layer.tar" .
blob() { # FILE -> prints "sha256:<hex> <size>" and stores the blob
  local hex size
  hex="$(sha256sum "$1" | cut -d' ' -f1)"
  size="$(stat -c %s "$1")"
  cp "$1" "$work/layout/blobs/sha256/$hex"
  echo "sha256:$hex $size"
}
read -r layer_digest layer_size < <(blob "$work/layer.tar")
label="${IMAGE_LABEL:-org.opencontainers.image.title=${name}}"
jq -cn --arg diff "$layer_digest" --arg ep "$entrypoint" --arg lk "${label%%=*}" --arg lv "${label#*=}" '{
  architecture: "amd64", os: "linux",
  config: {Entrypoint: [$ep], Env: ["PATH=/usr/local/bin:/usr/bin:/bin"], WorkingDir: "/", Labels: {($lk): $lv}},
  rootfs: {type: "layers", diff_ids: [$diff]}}' >"$work/config.json"
read -r config_digest config_size < <(blob "$work/config.json")
jq -cn --arg cd "$config_digest" --argjson cs "$config_size" --arg ld "$layer_digest" --argjson ls "$layer_size" '{
  schemaVersion: 2, mediaType: "application/vnd.oci.image.manifest.v1+json",
  config: {mediaType: "application/vnd.oci.image.config.v1+json", digest: $cd, size: $cs},
  layers: [{mediaType: "application/vnd.oci.image.layer.v1.tar", digest: $ld, size: $ls}]}' >"$work/manifest.json"
read -r manifest_digest manifest_size < <(blob "$work/manifest.json")
jq -cn --arg md "$manifest_digest" --argjson ms "$manifest_size" --arg name "$name" --arg tag "${name##*:}" '{
  schemaVersion: 2,
  manifests: [{mediaType: "application/vnd.oci.image.manifest.v1+json", digest: $md, size: $ms,
    platform: {architecture: "amd64", os: "linux"},
    annotations: {"io.containerd.image.name": $name, "org.opencontainers.image.ref.name": $tag}}]}' >"$work/layout/index.json"
echo '{"imageLayoutVersion":"1.0.0"}' >"$work/layout/oci-layout"
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$work/layout" -cf "$out.tmp" .
mv -f "$out.tmp" "$out"
