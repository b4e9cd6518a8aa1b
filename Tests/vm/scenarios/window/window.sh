# Inside the host's root (see guest.sh): an X server (Xvfb), then camroll pick --window on the two
# vivid cameras, driven with xdotool's keys as a user drives it, the window read back with xwd.
. /tmp/scenarios/common.sh
export DISPLAY=:1 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none XDG_RUNTIME_DIR=/run/user/0 CAMROLL_TRACE=1
db=$OUT/catalog.sqlite3
Xvfb :1 -screen 0 1280x800x24 -nolisten tcp >"$OUT/xvfb.log" 2>&1 &
for node in /dev/video0 /dev/video1; do
    echo "== $node" >>"$OUT/nodes.txt"
    v4l2-ctl -d $node --info >>"$OUT/nodes.txt" 2>&1
done
for _ in $(seq 1 100); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done

now() { cut -d' ' -f1 /proc/uptime; }
# note TEXT: in the timeline, and on the console (the harness shows its end when the VM times out).
note() { echo "$(now) $*" | tee -a "$OUT/timeline.txt" >/dev/console; }

# pick NAME ARGS…: camroll pick --window in the background (NAME.out, .err, .rc as `start`
# keeps them), its window found (at most 60 s) and given the keyboard.
pick() {
    name=$1; shift
    note "$name: start"
    start "$name" camroll pick --window --db "$db" -o "$OUT/$name/{seq}.jpg" "$@"
    win=
    for _ in $(seq 1 600); do
        win=$(xdotool search --onlyvisible --pid "$(pid_of "$name")" 2>/dev/null | head -n 1)
        [ -n "$win" ] && break
        sleep 0.1
    done
    [ -n "$win" ] || { note "$name: no window: $(tail -n 3 "$OUT/$name.err")"; kill "$(pid_of "$name")"; finish "$name"; return 1; }
    xdotool windowfocus --sync "$win"
    note "$name: window $win"
}
key() { xdotool key --window "$win" "$@"; note "key $*"; }
# shot NAME: the window's pixels in NAME.xwd (xwd: a plain dump, quick where ImageMagick's
# import took 4 s a screenshot under TCG).
shot() { xwd -silent -id "$win" -out "$OUT/$1.xwd"; note "shot $1"; }
# drawn: until the window shows vivid's picture, colourful where the window is grey (at most 30 s).
drawn() {
    for _ in $(seq 1 30); do
        xwd -silent -id "$win" -out /tmp/drawn.xwd
        level=$(python3 /tmp/scenarios/window/pixels.py saturation /tmp/drawn.xwd 16)
        awk "BEGIN { exit !($level > 0.1) }" && { note "drawn ($level)"; return 0; }
        sleep 0.5
    done
    note "not drawn ($level)"
}
# ended NAME: finish NAME, killed if it has not ended 30 s after its last key.
ended() {
    for _ in $(seq 1 300); do [ -d "/proc/$(pid_of "$1")" ] || break; sleep 0.1; done
    [ -d "/proc/$(pid_of "$1")" ] && { note "$1: still running, killed"; kill -9 "$(pid_of "$1")"; }
    finish "$1"
    note "$1: exit $(cat "$OUT/$1.rc")"
}
# cpu PID LABEL: its user+system clock ticks, with the time.
cpu() { echo "$2 $(now) $(cut -d' ' -f14,15 "/proc/$1/stat")" >>"$OUT/cpu.txt"; }

# 1. /dev/video0 at 1280x720. The Controls popover: Tab to it, Space opens it with the focus on
# its first slider (brightness), Page Up (+10), read back by v4l2-ctl while the window is open,
# Esc closes it. The shutter, Retake; 3 s of preview screenshotted as fast as xwd goes (the frame
# rate: the two shutters' frame numbers and times in the trace; and how often the window's
# picture changed); the shutter, Retake. The camera menu: Tab to it, Space opens it, End (its
# last entry, the second vivid), Enter: the preview goes on from /dev/video1 (the shutter takes
# a frame the preview showed), which is then the camera streaming (v4l2-ctl cannot stream it,
# and can stream /dev/video0 again). The shutter, Use Photo.
pick keep -d /dev/video0 -r 1280x720 || exit 1
drawn
v4l2-ctl -d /dev/video0 --get-ctrl brightness >"$OUT/brightness-before.txt" 2>&1
key Tab Tab Tab
sleep 0.5
key space
sleep 1
key Page_Up
sleep 1
v4l2-ctl -d /dev/video0 --get-ctrl brightness >"$OUT/brightness-live.txt" 2>&1
key Escape
sleep 0.5
key space
sleep 0.5
key r
cpu "$(pid_of keep)" start
begin=$(now)
i=0
while awk "BEGIN { exit !($(now) - $begin < 3) }"; do
    i=$((i + 1))
    shot "live$i"
done
key space
cpu "$(pid_of keep)" end
sleep 1
key r
sleep 0.5
key Tab
sleep 0.5
key space
sleep 1
key End Return
sleep 3
shot switch-after
v4l2-ctl -d /dev/video1 --stream-mmap --stream-count=1 --stream-to=/dev/null >"$OUT/stream-video1.txt" 2>&1
v4l2-ctl -d /dev/video0 --stream-mmap --stream-count=1 --stream-to=/dev/null >"$OUT/stream-video0.txt" 2>&1
echo $? >"$OUT/stream-video0.rc"
key space
sleep 1
key Return
ended keep
v4l2-ctl -d /dev/video0 --get-ctrl brightness >"$OUT/brightness-after.txt" 2>&1

# 2. Unplugged during the preview (vivid's disconnect control: /dev/video1 goes for the rest of
# the boot): the message in the window, which stays until closed; Esc; exit 74.
pick unplug -d /dev/video1 -r 1280x720 || exit 1
drawn
shot unplug-live
v4l2-ctl -d /dev/video1 -c disconnect=1
note "disconnected"
sleep 2
shot unplug-message
[ -d "/proc/$(pid_of unplug)" ] && echo yes >"$OUT/unplug-waited"
key Escape
ended unplug
true
