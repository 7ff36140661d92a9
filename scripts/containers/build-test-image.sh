#!/usr/bin/env bash
# Builds the image Deft's container tests run on, with no registry: a Debian root file system from
# the mirror apt already uses (debootstrap minbase + python3 + git), imported into the runtime, and
# a layer holding a small git repository at /testbed (as SWE-bench's images hold theirs).
#
#   scripts/containers/build-test-image.sh docker|podman   prints the image name on stdout
#
# The root file system is slow to make (~70 s, ~380 MB), so it is cached outside the checkout by a
# key of everything that goes into it (suite, mirror, package list), in DEFT_TEST_IMAGE_CACHE
# (default /var/cache/deft-test-images): a machine builds it once. The import and the layer are
# cheap (seconds) and are redone only when the runtime does not hold the image yet. With docker,
# DOCKER_HOST names the daemon (a private one from scripts/containers/dockerd.sh).
# Needs root (debootstrap). Everything but the image name goes to stderr.
set -euo pipefail

die() { echo "build-test-image: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: $0 docker|podman"
runtime=$1
case "$runtime" in
docker) rt=(docker) ;;
# crun cannot run on a cgroups-v1 hybrid layout; podman's default rlimits exceed the hard ones.
podman) rt=(podman --runtime runc) ;;
*) die "unknown runtime '$runtime': use docker or podman" ;;
esac
[ "$(id -u)" -eq 0 ] || die "needs root (debootstrap)"
command -v "$runtime" >/dev/null || die "$runtime is not installed (apt-get install docker.io or podman runc)"

HERE=$(cd "$(dirname "$0")" && pwd)
CACHE=${DEFT_TEST_IMAGE_CACHE:-/var/cache/deft-test-images}
SUITE=bookworm
PACKAGES=python3,git

# The mirror apt already uses: deb822 sources first (URIs:), then the one-line format.
mirror=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -n 1 || true)
if [ -z "$mirror" ]; then
  mirror=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list |
    grep -v security | awk '{for (i = 2; i <= NF; i++) if ($i ~ /^https?:/) { print $i; exit }}' | head -n 1 || true)
fi
[ -n "$mirror" ] || die "no Debian mirror found in apt's sources (/etc/apt/sources.list*)"

key=$(printf '%s\n' "$SUITE" "$mirror" "$PACKAGES" minbase 1 | sha256sum | cut -c1-16)
layer_key=$(cat "$HERE/testbed/"* "$HERE/build-test-image.sh" | sha256sum | cut -c1-12)
base="deft-test-base:$key"
image="deft-test:$key-$layer_key"

mkdir -p "$CACHE"
rootfs_tar="$CACHE/rootfs-$key.tar"
# One builder at a time per machine: a second waits, then finds the tar made.
exec 9>"$CACHE/.lock-$key"
flock 9
if [ ! -s "$rootfs_tar" ]; then
  command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
  work=$(mktemp -d "$CACHE/build-$key.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  echo "build-test-image: debootstrap $SUITE from $mirror (once per machine, about a minute)" >&2
  debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$work/root" "$mirror" >"$work/log" 2>&1 ||
    die "debootstrap failed: $(tail -n 5 "$work/log")"
  rm -rf "$work/root/var/cache/apt/archives/"*.deb "$work/root/var/lib/apt/lists/"*
  tar -C "$work/root" -cf "$work/rootfs.tar" .
  mv "$work/rootfs.tar" "$rootfs_tar"
  rm -rf "$work"
  trap - EXIT
fi

if ! "${rt[@]}" image inspect "$base" >/dev/null 2>&1; then
  echo "build-test-image: importing $base" >&2
  "${rt[@]}" import -c 'CMD ["/bin/bash"]' "$rootfs_tar" "$base" >&2 || die "$runtime import failed"
fi
flock -u 9

if ! "${rt[@]}" image inspect "$image" >/dev/null 2>&1; then
  ctx=$(mktemp -d)
  trap 'rm -rf "$ctx"' EXIT
  mkdir "$ctx/testbed"
  cp "$HERE/testbed/"* "$ctx/testbed/"
  # A committed repository, made here: the layer only copies it, so the build needs no RUN (and no
  # network, which a daemon without a bridge would not give it).
  git -C "$ctx/testbed" init -q -b main
  git -C "$ctx/testbed" -c user.name=deft -c user.email=deft@example.invalid add -A
  git -C "$ctx/testbed" -c user.name=deft -c user.email=deft@example.invalid \
    -c commit.gpgsign=false commit -q -m "testbed"
  printf 'FROM %s\nCOPY testbed /testbed\nWORKDIR /testbed\n' "$base" >"$ctx/Dockerfile"
  echo "build-test-image: building $image" >&2
  "${rt[@]}" build -q --network none -t "$image" "$ctx" >&2 || die "$runtime build failed"
  rm -rf "$ctx"
  trap - EXIT
fi
echo "$image"
