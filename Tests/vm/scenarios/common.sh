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
