# pick's window on vivid, measured (make vm-bench-window): launch to the first frame on screen
# beside `ffplay -f v4l2` on the same camera, and the preview's rate and CPU for vivid's YUYV
# and for an MJPEG camera (v4l2loopback fed 1280x720 JPEGs at 30 a second). Under TCG these are
# emulation's figures: only the ratios within this boot mean much.
. /scenarios/common.sh
modprobe v4l2loopback devices=1 video_nr=10 exclusive_caps=1 card_label=mjpeg-camera
camroll snap -d pattern -r 1280x720 --no-exif -o /tmp/source.jpg --db /tmp/source.sqlite3 --quiet
mjpeg-feeder /dev/video10 1280 720 keep /tmp/source.jpg 2>"$OUT/feeder.err" &
wait_for_capture /dev/video10
host_root /host || { echo "cannot mount the host's root" >"$OUT/host-root.err"; exit 1; }
chroot /host /usr/bin/env -i PATH=/tmp/bin:/usr/bin:/bin HOME=/tmp OUT=/tmp/out \
    /bin/sh /tmp/scenarios/window-bench/bench.sh
