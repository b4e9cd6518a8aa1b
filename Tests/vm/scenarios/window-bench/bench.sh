# Inside the host's root (guest.sh): Xvfb, then each program launched on a screen of its own
# start, the screen polled with xwd until it shows the camera's colour bars.
export DISPLAY=:1 GSK_RENDERER=cairo NO_AT_BRIDGE=1 GTK_A11Y=none XDG_RUNTIME_DIR=/run/user/0
. /tmp/scenarios/common.sh
Xvfb :1 -screen 0 1280x800x24 -nolisten tcp >"$OUT/xvfb.log" 2>&1 &
for _ in $(seq 1 100); do xdpyinfo >/dev/null 2>&1 && break; sleep 0.1; done
now() { cut -d' ' -f1 /proc/uptime; }
pixels=/tmp/scenarios/window/pixels.py

# first_frame NAME COMMAND…: seconds from the launch to its window showing the colour bars (its
# saturation over 0.1, as the window scenario's `drawn`; polled as fast as xwd and the check go).
first_frame() {
    name=$1; shift
    started=$(now)
    "$@" >/dev/null 2>>"$OUT/$name.err" &
    pid=$!
    seen=
    # At most 40 s (a program that failed to start shows nothing).
    win= level=0
    while awk "BEGIN { exit !($(now) - $started < 40) }"; do
        [ -d "/proc/$pid" ] || break
        [ -n "$win" ] || win=$(xdotool search --onlyvisible --pid "$pid" 2>/dev/null | head -n 1)
        # (Not polled flat out: the poll shares the two vCPUs with the program it times.)
        [ -n "$win" ] || { sleep 0.2; continue; }
        xwd -silent -id "$win" -out /tmp/screen.xwd 2>/dev/null || continue
        level=$(python3 $pixels saturation /tmp/screen.xwd 16)
        if awk "BEGIN { exit !($level > 0.1) }"; then seen=$(now); break; fi
    done
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    if [ -n "$seen" ]; then
        echo "$name $(awk "BEGIN { print $seen - $started }")" >>"$OUT/first-frame.txt"
        echo "window-bench: $name drawn after $(awk "BEGIN { print $seen - $started }") s" >/dev/console
    else
        echo "window-bench: $name showed nothing (saturation $level): $(tail -n 2 "$OUT/$name.err")" >/dev/console
    fi
    sleep 1
}
for round in 1 2 3; do
    first_frame camroll camroll pick --window -d /dev/video0 -r 1280x720 -o /tmp/first.jpg --db /tmp/first.sqlite3
    first_frame ffplay ffplay -hide_banner -loglevel error -f v4l2 -input_format yuyv422 -video_size 1280x720 -i /dev/video0
done

# preview NAME DEVICE: 10 s of pick's preview between two shutters (frame numbers in the trace),
# camroll's CPU ticks over the same stretch.
preview() {
    CAMROLL_TRACE=1 camroll pick --window -d "$2" -r 1280x720 -o "/tmp/$1/{seq}.jpg" --db /tmp/preview.sqlite3 \
        >/dev/null 2>"$OUT/$1.err" &
    pid=$!
    win=
    for _ in $(seq 1 600); do
        win=$(xdotool search --onlyvisible --pid "$pid" 2>/dev/null | head -n 1)
        [ -n "$win" ] && break
        sleep 0.1
    done
    xdotool windowfocus --sync "$win"
    sleep 4
    xdotool key --window "$win" space
    sleep 1
    xdotool key --window "$win" r
    echo "$1 start $(now) $(cut -d' ' -f14,15 "/proc/$pid/stat")" >>"$OUT/cpu.txt"
    sleep 10
    echo "$1 end $(now) $(cut -d' ' -f14,15 "/proc/$pid/stat")" >>"$OUT/cpu.txt"
    xdotool key --window "$win" space
    sleep 2
    xdotool key --window "$win" Escape
    for _ in $(seq 1 300); do [ -d "/proc/$pid" ] || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    wait "$pid"
}
echo "window-bench: previews" >/dev/console
preview yuyv /dev/video0
preview mjpeg /dev/video10
getconf CLK_TCK >"$OUT/clk_tck"
