# What goes wrong with a real camera, made to go wrong with vivid's own controls.
. /scenarios/common.sh
db="$OUT/catalog.sqlite3"

# Permission: the node as a distribution sets it up (root:video 0660), used by a user not in 'video'.
chown root:video /dev/video0 && chmod 660 /dev/video0
step perm-check su alice -s /bin/sh -c "camroll check -d /dev/video0"
step perm-snap su alice -s /bin/sh -c "camroll snap -d 0 -o /tmp/alice/{seq}.jpg --db /tmp/alice.db"
chmod 666 /dev/video0

# Busy: a second camroll while the first streams.
start first camroll snap -d 0 -r 320x180 --frames 100000 --interval 50ms -o "$OUT/first/{seq}.jpg" --db "$OUT/first.sqlite3"
pid_of first >"$OUT/first.pid"
wait_for_files "$OUT/first" 1
step busy camroll snap -d 0 -r 320x180 -o "$OUT/second/{seq}.jpg" --db "$db"
kill -INT "$(pid_of first)"
finish first

# Dropped buffers: half of them; the run still gets its frames.
v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=50
step drops camroll snap -d 0 -r 320x180 --skip 0 --frames 10 -o "$OUT/drops/{seq}.jpg" --db "$db"
# All of them: no frame ever comes; --timeout gives up with a diagnosis.
v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=100
step timeout camroll snap -d 0 -r 320x180 --timeout 2s -o "$OUT/timeout/{seq}.jpg" --db "$db"
# Ctrl-C while waiting for a frame that does not come.
start waiting camroll snap -d 0 -r 320x180 --timeout 60s -o "$OUT/waiting/{seq}.jpg" --db "$db"
sleep 3
kill -INT "$(pid_of waiting)"
finish waiting
v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=0

# Injected errors.
v4l2-ctl -d /dev/video0 -c inject_vidioc_streamon_error=1
step streamon camroll snap -d 0 -r 320x180 -o "$OUT/streamon/{seq}.jpg" --db "$db"
v4l2-ctl -d /dev/video0 -c inject_vidioc_reqbufs_error=1
step reqbufs camroll snap -d 0 -r 320x180 -o "$OUT/reqbufs/{seq}.jpg" --db "$db"
step after camroll snap -d 0 -r 320x180 -o "$OUT/after/{seq}.jpg" --db "$db"

# A failed QBUF in the middle of a run: one buffer fewer, the run goes on.
start qbuf camroll snap -d 0 -r 320x180 --skip 0 --frames 10 --interval 100ms -o "$OUT/qbuf/{seq}.jpg" --db "$db"
wait_for_files "$OUT/qbuf" 2
v4l2-ctl -d /dev/video0 -c inject_vidioc_qbuf_error=1
finish qbuf

# A fatal streaming error in the middle of a run.
start fatal camroll snap -d 0 -r 320x180 --frames 1000 --interval 100ms -o "$OUT/fatal/{seq}.jpg" --db "$OUT/fatal.sqlite3"
wait_for_files "$OUT/fatal" 3
v4l2-ctl -d /dev/video0 -c inject_fatal_streaming_error=1
finish fatal
