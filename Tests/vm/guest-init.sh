#!/bin/busybox sh
# /init of the test VM: mount the basics, load the drivers (no udev here), run one scenario,
# send its $OUT back as a tar stream on the virtio disk, power off.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin:/usr/bin:/usr/sbin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts && mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /out
modprobe virtio_pci
modprobe virtio_blk
modprobe virtio_rng
# shellcheck disable=SC2086 # the options are words on purpose
modprobe vivid ${vivid_opts:-n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0}
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -e /dev/video0 ] && [ -e /dev/vda ] && break; sleep 0.2; done

export OUT=/out
# A sanitizer build (make vm-asan, make vm-tsan): its options, one a line, for every process of
# the scenario.
if [ -f /etc/sanitizer-options ]; then
    while read -r option; do export "$option"; done </etc/sanitizer-options
fi
echo "camroll-vm: scenario ${scenario}"
cd /tmp
sh "/scenarios/${scenario}/guest.sh" >/out/guest.log 2>&1
echo $? >/out/status
echo "camroll-vm: guest.sh exited $(cat /out/status)"
tar -cf /dev/vda -C /out .
sync
echo "camroll-vm: done"
poweroff -f
