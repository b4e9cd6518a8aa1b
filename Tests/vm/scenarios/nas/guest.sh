# A NAS share: NFS 4.2 served by the guest's own kernel (nfsd, over loopback) from a tmpfs, and
# mounted by its NFS client. NFS has no RENAME_NOREPLACE but has hard links: saves go into place
# with link + unlink. On it: saves, names kept, four jobs, --direct, SIGKILL and repair, verify.
. /scenarios/common.sh
tar -xf /dev/vdb -C /
for module in nfsd nfsv4; do modprobe $module; done
ifconfig lo 127.0.0.1 up
# libtirpc reads the transports from here.
cat >/etc/netconfig <<'NETCONFIG'
udp        tpi_clts      v     inet     udp     -       -
tcp        tpi_cots_ord  v     inet     tcp     -       -
udp6       tpi_clts      v     inet6    udp     -       -
tcp6       tpi_cots_ord  v     inet6    tcp     -       -
local      tpi_cots_ord  -     loopback -       -       -
NETCONFIG
mkdir -p /proc/fs/nfsd /var/lib/nfs /export /mnt/nas
mount -t nfsd nfsd /proc/fs/nfsd
mount -t tmpfs -o size=256m tmpfs /export
touch /var/lib/nfs/etab /var/lib/nfs/rmtab
echo "/export 127.0.0.1(rw,sync,no_subtree_check,no_root_squash,fsid=0)" >/etc/exports
{
    exportfs -ra
    rpc.mountd -N 3 --no-udp
    # A new server refuses to open files for its grace period (90 s unless told): 10 s, the least.
    rpc.nfsd --debug -N 3 -U -p 2049 --grace-time 10 --lease-time 10 4
    echo "versions: $(cat /proc/fs/nfsd/versions) threads: $(cat /proc/fs/nfsd/threads)"
    cat /proc/fs/nfsd/portlist
} >"$OUT/server.log" 2>&1
mount.nfs 127.0.0.1:/ /mnt/nas -o vers=4.2,retry=0 >"$OUT/mount.log" 2>&1 || { echo "cannot mount the share" >"$OUT/mount.err"; exit 1; }
grep " /mnt/nas " /proc/mounts >"$OUT/mounts"
touch /mnt/nas/.grace && rm /mnt/nas/.grace  # waits out the grace period

db=$OUT/catalog.sqlite3
CAMROLL_TRACE=1 step snap camroll snap -d pattern -r 320x240 -n 20 -o '/mnt/nas/{seq}.jpg' --db "$db" --no-progress
step again camroll snap -d pattern -r 320x240 -q 50 -n 20 -o '/mnt/nas/{seq}.jpg' --db "$db" --no-progress
step jobs camroll snap -d pattern -r 320x240 -n 400 --jobs 4 -o '/mnt/nas/jobs/{seq}.jpg' --db "$db" --no-progress
step direct camroll snap -d pattern -r 640x480 -n 40 --direct --stamp -o '/mnt/nas/direct/{seq}.jpg' --db "$db" --no-progress
step overwrite camroll snap -d pattern -r 320x240 -q 60 -n 5 --overwrite -o '/mnt/nas/{seq:2}.jpg' --db "$db" --no-progress
# Killed mid-run: repair records the files renamed into place and removes the temporary one.
start killed camroll snap -d pattern -r 320x240 -n 1000000 -o '/mnt/nas/killed/{seq}.jpg' --db "$db" --no-progress
wait_for_files /mnt/nas/killed 100
kill -KILL "$(pid_of killed)"
finish killed
step repair camroll verify --repair --db "$db"
step verify camroll verify --db "$db" --json
find /mnt/nas -type f -name '*.jpg' | wc -l >"$OUT/files"
find /mnt/nas -type f ! -name '*.jpg' >"$OUT/others"
ls -la /mnt/nas | head -5 >"$OUT/listing"
umount /mnt/nas
