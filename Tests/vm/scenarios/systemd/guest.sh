# camroll@.service under a real systemd: the host's systemd (252, shared read-only over 9p with
# the rest of its root) as PID 1 of a PID namespace in the guest — as systemd-nspawn runs it —
# on an overlay of the host's root with this camroll installed where the .deb puts it, the
# unit as shipped, and a profile for vivid's camera. driver.sh, a unit of that systemd, starts
# camroll@vm, stops it, and writes what systemd and its journal say into $OUT.
. /scenarios/common.sh
modprobe 9pnet_virtio && modprobe 9p && modprobe overlay || { echo "9p or overlay missing" >"$OUT/setup.err"; exit 1; }
mkdir -p /lower /upper /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=262144 hostroot /lower || exit 1
mount -t tmpfs tmpfs /upper
mkdir -p /upper/data /upper/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/upper/data,workdir=/upper/work /newroot \
    || { echo "cannot mount the overlay" >"$OUT/setup.err"; exit 1; }
R=/newroot
for d in proc sys dev run tmp; do mkdir -p "$R/$d"; done
mount -t sysfs sysfs "$R/sys"
mount -t cgroup2 cgroup2 "$R/sys/fs/cgroup"
mount -t devtmpfs devtmpfs "$R/dev"
mount -t tmpfs tmpfs "$R/run"
mount -t tmpfs tmpfs "$R/tmp"
# What udev does for a camera on a desktop (no udev here): the video group may open it.
video=$(grep '^video:' "$R/etc/group" | cut -d: -f3)
chown "0:$video" "$R/dev/video0" && chmod 660 "$R/dev/video0" || echo "cannot give /dev/video0 to group video ($video)" >>"$OUT/steps"

# Installed as the .deb installs them.
cp /usr/bin/camroll "$R/usr/bin/camroll"
mkdir -p "$R/usr/lib/systemd/system" "$R/etc/camroll" "$R/vmout"
cp /scenarios/systemd/camroll@.service "$R/usr/lib/systemd/system/camroll@.service"
cat >"$R/etc/camroll/vm.conf" <<'CONF'
# vivid's camera, a photo a second, the newest five kept.
device = /dev/video0
resolution = 320x180
every = 1s
align = none
keep-last = 5
CONF
cp /scenarios/systemd/driver.sh "$R/usr/local/sbin/camroll-vm-driver"
chmod 755 "$R/usr/local/sbin/camroll-vm-driver"
cat >"$R/etc/systemd/system/camroll-vm.target" <<'UNIT'
[Unit]
Description=camroll's systemd scenario
Requires=camroll-vm-driver.service
After=camroll-vm-driver.service
AllowIsolate=yes
UNIT
cat >"$R/etc/systemd/system/camroll-vm-driver.service" <<'UNIT'
[Unit]
Description=camroll's systemd scenario: start camroll@vm, stop it, report
After=basic.target systemd-journald.service
Wants=systemd-journald.service

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/camroll-vm-driver /vmout
StandardOutput=file:/vmout/driver.log
StandardError=file:/vmout/driver.log
UNIT
# Observation only: how the main process ended, as systemd saw it, into the unit's journal (once
# stopped, the unit is unloaded and `systemctl show` no longer knows).
mkdir -p "$R/etc/systemd/system/camroll@vm.service.d"
cat >"$R/etc/systemd/system/camroll@vm.service.d/observe.conf" <<'UNIT'
[Service]
ExecStopPost=/bin/echo stop-post: result=${SERVICE_RESULT} code=${EXIT_CODE} status=${EXIT_STATUS}
UNIT
mount --bind "$OUT" "$R/vmout"
: >"$R/etc/machine-id"

# PID 1 of its own PID namespace (--kill-child: killing unshare ends the namespace); ends when
# driver.sh asks it to power off, or after 200 s, whatever happens.
chroot "$R" /usr/bin/env -i container=camroll-vm PATH=/usr/sbin:/usr/bin:/sbin:/bin \
    /usr/bin/unshare --pid --fork --kill-child --mount-proc /lib/systemd/systemd --system --unit=camroll-vm.target \
    --show-status=no >"$OUT/systemd.log" 2>&1 &
systemd=$!
( sleep 200; echo "systemd did not end within 200 s" >>"$OUT/steps"; kill -9 $systemd 2>/dev/null ) &
watchdog=$!
wait $systemd
echo $? >"$OUT/systemd.rc"
kill $watchdog 2>/dev/null
