# camroll pick on vivid, played by pty-keys on a pseudo-terminal: preview, a control turned by
# keys, shutter and keep; cancel; SIGTERM; and the camera unplugged during the preview.
. /scenarios/common.sh
export TERM=xterm-256color
# The catalog is the scenario's unless the options name another (--db given twice is an error).
pick() {
    name=$1; shift; db=$OUT/catalog.sqlite3
    case " $* " in *" --db "*) db= ;; esac
    pty-keys 100 30 "$OUT/$name.screen" -- camroll pick -d 0 -r 640x480 ${db:+--db "$db"} "$@" >"$OUT/$name.out" 2>&1
}

# Right arrow twice: brightness 128 → 140 → 152 (a twentieth of 0–255 a step), read by
# v4l2-ctl while the preview runs; then the shutter, the review, enter.
pick keep -n 3 -o "$OUT/keep/{seq}.jpg" <<'KEYS'
wait space shutter
mark
send \e[C
wait brightness 140
send \e[C
wait brightness 152
shell v4l2-ctl -d /dev/video0 --get-ctrl brightness > /out/brightness-live.txt 2>&1
sleep 500
send \x20
wait taken
send \r
end
KEYS
v4l2-ctl -d /dev/video0 --set-ctrl brightness=128

pick cancel -o "$OUT/cancel/{seq}.jpg" <<'KEYS'
wait space shutter
send q
end
KEYS

pick term -o "$OUT/term/{seq}.jpg" <<'KEYS'
wait space shutter
signal 15
end
KEYS

# Ctrl-Z: the terminal given back, then taken again (pty-keys' program leads a session of its
# own, so the kernel drops its SIGTSTP and it goes on at once); then stopped for 3 s by SIGSTOP,
# as a suspended job is, while vivid streams on; continued, the preview goes on and a shot is kept
# (in a catalog of its own, keep's holding one run: the later --db wins).
pick suspend --db "$OUT/suspend.sqlite3" -o "$OUT/suspend/{seq}.jpg" <<'KEYS'
wait space shutter
send \x1a
sleep 300
signal 19
sleep 3000
signal 18
mark
wait space shutter
sleep 500
send \x20
wait taken
send \r
end
KEYS

# Last: vivid's disconnect control removes the device for the rest of the boot.
pick unplug -o "$OUT/unplug/{seq}.jpg" <<'KEYS'
wait space shutter
shell v4l2-ctl -d /dev/video0 -c disconnect=1
end
KEYS
