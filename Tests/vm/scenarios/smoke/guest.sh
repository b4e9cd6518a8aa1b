# The guest works at all: vivid is there, camroll runs (with its libraries) and saves. Then the
# run's charts: SVG needs nothing; PNG needs librsvg, which this guest does not have, so it is a
# one-line error (exit 69) and no file. Last, saves by a user other than root on this kernel
# (6.1: before 6.10 only CAP_DAC_READ_SEARCH links a file without a name by its descriptor),
# which camroll then links through /proc/self/fd.
. /scenarios/common.sh
set -x
v4l2-ctl -d /dev/video0 --info >"$OUT/info.txt"
camroll --version >"$OUT/version.txt"
step snap camroll snap -d pattern -r 320x240 -n 3 -o "$OUT/pattern/{seq}.jpg" --db "$OUT/catalog.sqlite3"
step plot-svg camroll stats --db "$OUT/catalog.sqlite3" --plot "$OUT/run.svg"
step plot-png camroll stats --db "$OUT/catalog.sqlite3" --plot "$OUT/run.png"
mkdir -p /tmp/user && mount -t tmpfs tmpfs /tmp/user && chmod 1777 /tmp/user
step user su alice -s /bin/sh -c \
    "CAMROLL_TRACE=1 camroll snap -d pattern -r 320x240 -n 3 -o '/tmp/user/out/{seq}.jpg' --db /tmp/user/c.sqlite3 --no-progress"
ls -a /tmp/user/out >"$OUT/user-ls.txt"
step user-verify camroll verify --db /tmp/user/c.sqlite3
