# Helpers every scenario's guest.sh sources (the harness packs this folder into the guest).

# step NAME COMMAND…: runs it, keeping $OUT/NAME.out, NAME.err and the exit status in NAME.rc.
step() { name=$1; shift; "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"; echo $? >"$OUT/$name.rc"; }

# start NAME COMMAND…: the same, in the background; `finish NAME` waits and records the status.
start() { name=$1; shift; "$@" >"$OUT/$name.out" 2>"$OUT/$name.err" & eval "pid_$name=$!"; }
finish() { eval "wait \$pid_$1"; echo $? >"$OUT/$1.rc"; }
pid_of() { eval "echo \$pid_$1"; }

# wait_for_files DIR N: until DIR holds N files (at most 30 s): the run is saving.
wait_for_files() {
    for _ in $(seq 1 300); do [ "$(ls "$1" 2>/dev/null | wc -l)" -ge "$2" ] && return; sleep 0.1; done
}

# wait_for_capture DEVICE: until a v4l2loopback DEVICE offers capture (at most 5 s): its feeder
# has set the format.
wait_for_capture() {
    for _ in $(seq 1 50); do v4l2-ctl -d "$1" --all 2>/dev/null | grep -q "Video Capture" && return; sleep 0.1; done
}

# host_root DIR: the host's root file system (shared read-only with a scenario that has a
# `host-root` file) mounted at DIR and made a place to chroot into: its own /proc, /sys, /dev,
# /run and /tmp over the host's; this guest's camroll in DIR/tmp/bin, the scenarios in
# DIR/tmp/scenarios, and $OUT as DIR/tmp/out. Run there with `chroot DIR COMMAND…`
# (PATH=/tmp/bin:/usr/bin:/bin, OUT=/tmp/out).
host_root() {
    modprobe 9pnet_virtio && modprobe 9p || return 1
    mkdir -p "$1"
    mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot "$1" || return 1
    mount -t proc proc "$1/proc"
    mount -t sysfs sysfs "$1/sys"
    mount -t devtmpfs devtmpfs "$1/dev"
    mkdir -p "$1/dev/pts" "$1/dev/shm"
    mount -t devpts devpts "$1/dev/pts"
    mount -t tmpfs tmpfs "$1/dev/shm"
    mount -t tmpfs tmpfs "$1/run"
    mount -t tmpfs tmpfs "$1/tmp"
    mkdir -p "$1/tmp/bin" "$1/tmp/out" "$1/run/user/0"
    chmod 700 "$1/run/user/0"
    cp /usr/bin/camroll "$1/tmp/bin/"
    cp -r /scenarios "$1/tmp/scenarios"
    mount -o bind "$OUT" "$1/tmp/out"
}
