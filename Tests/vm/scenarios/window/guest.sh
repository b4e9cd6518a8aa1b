# pick's GTK window on vivid: the host's root (its GTK, Xvfb, xdotool, xwd) shared
# read-only and chrooted into, two vivid cameras, window.sh run there.
. /scenarios/common.sh
host_root /host || { echo "cannot mount the host's root" >"$OUT/host-root.err"; exit 1; }
chroot /host /usr/bin/env -i PATH=/tmp/bin:/usr/bin:/bin HOME=/tmp OUT=/tmp/out \
    /bin/sh /tmp/scenarios/window/window.sh
