#!/usr/bin/env bash
# Builds v4l2loopback (an MJPEG-capable virtual camera: vivid has no compressed formats) from
# Debian's v4l2loopback-dkms source against the guest kernel's headers. Cached: does nothing when
# the module is already built for this kernel.
#   build-v4l2loopback.sh KERNEL_RELEASE OUTPUT_DIR
set -euo pipefail
release=$1
out=$2
[ -f "$out/v4l2loopback.ko" ] && exit 0

here=$(cd "$(dirname "$0")" && pwd)
work="$here/cache/v4l2loopback-src"
headers="/usr/src/linux-headers-$release"
install_headers() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "linux-headers-$release" >/dev/null
}
if [ ! -d "$headers" ]; then
    echo "vm: installing linux-headers-$release"
    install_headers || { apt-get update -qq && install_headers; }
fi
rm -rf "$work"
mkdir -p "$work"
(cd "$work" && { apt-get download v4l2loopback-dkms >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get download v4l2loopback-dkms >/dev/null 2>&1; }; })
dpkg-deb -x "$work"/v4l2loopback-dkms_*.deb "$work/pkg"
src=$(echo "$work"/pkg/usr/src/v4l2loopback-*)
echo "vm: building $(basename "$src") for $release"
make -s -C "$headers" M="$src" modules >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
mkdir -p "$out"
cp "$src/v4l2loopback.ko" "$out/"
