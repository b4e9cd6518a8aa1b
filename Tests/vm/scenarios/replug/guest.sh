# A service run through an unplug: vivid's 'disconnect' control takes the camera away during an
# `--every 1s` run; while it is away another camera (a second vivid instance, another bus) sits
# at /dev/video0 and must not be taken; then the same camera comes back under the same name.
. /scenarios/common.sh
start run camroll snap -d /dev/video0 -r 320x180 --every 1s --align none --for 30s \
    -o "$OUT/run/{seq}.jpg" --db "$OUT/catalog.sqlite3"
# Whatever happens, the guest ends within the harness's time (the check then says what hung).
( sleep 55; kill -9 "$(pid_of run)" 2>/dev/null ) &
wait_for_files "$OUT/run" 3
v4l2-ctl -d /dev/video0 -c disconnect=1
date +%s >"$OUT/unplugged_at"
# rmmod succeeds once camroll has let go of the vanished camera.
unload() { for _ in $(seq 1 100); do rmmod vivid 2>/dev/null && return 0; sleep 0.1; done; return 1; }
unload && echo "unloaded after unplug" >>"$OUT/steps"
lsmod >>"$OUT/steps"
# Another camera at /dev/video0: instance 0 has only a radio node, instance 1's capture node is video0.
modprobe vivid n_devs=2 node_types=0x10,0x1 num_inputs=1,1 input_types=0x0,0x0
v4l2-ctl -d /dev/video0 --info >"$OUT/other.info" 2>&1
sleep 5
unload && echo "unloaded the other camera" >>"$OUT/steps"
sleep 4
modprobe vivid n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0
date +%s >"$OUT/replugged_at"
finish run
