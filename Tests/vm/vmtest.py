#!/usr/bin/env python3
"""The real-kernel test suite: camroll inside qemu, against the kernel's own vivid camera.

    Tests/vm/vmtest.py [SCENARIO ...]      run the named scenarios (default: all), in order

Each scenario is a folder in Tests/vm/scenarios/ holding `guest.sh` (run as root inside the VM;
whatever it writes under $OUT comes back), optionally `cmdline` (extra kernel command line,
e.g. vivid's module options), optionally `programs` (host programs the guest needs beyond the
usual ones, one per line: they and their libraries go in a tar on a second virtio disk, which
the guest unpacks: ffmpeg alone needs ~245 libraries, too many for the initramfs), and `check`
(run on the host with the returned folder; exit 0 means pass). A scenario with a `host-root` file
gets the host's root file system, read-only, over 9p (tag `hostroot`; common.sh's `host_root`
makes it a place to chroot into): the programs one a line in that file (Xvfb, GTK's programs) run
there as the host has them, with every library and data file they read; each is looked for on
the host before the boot. A scenario with a `benchmark`
file reports rather than tests: it runs only when named (`make vm-bench`). A scenario passes when the guest ran to the end within the timeout and `check`
passed. The kernel package is downloaded and unpacked once (Tests/vm/cache); the initramfs is
rebuilt every run around the current camroll.
"""
import ast
import glob
import lzma
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(HERE, "cache")
SCENARIOS = os.path.join(HERE, "scenarios")
TIMEOUT = int(os.environ.get("CAMROLL_VM_TIMEOUT", "240"))
# CAMROLL_VM_SANITIZER=address or thread: camroll built under AddressSanitizer or
# ThreadSanitizer (with the Swift runtime as shared libraries, which the initramfs then
# carries), its reports written to the scenario's output; a scenario with a report fails.
# `make vm-asan` and `make vm-tsan` set it.
SANITIZER = os.environ.get("CAMROLL_VM_SANITIZER", "")
OUT = os.path.join(HERE, "out" + (f"-{SANITIZER}" if SANITIZER else ""))
# What each sanitizer needs: more build flags, the options every guest process gets (read by
# guest-init.sh, each writing its reports into $OUT), more qemu arguments.
SANITIZERS = {
    # The C shims checked for undefined behaviour too: ASan's runtime carries UBSan's handlers,
    # as in `make asan`.
    "address": {"build": ["-Xcc", "-fsanitize=undefined"],
                "options": ["ASAN_OPTIONS=detect_leaks=0:log_path=/out/sanitizer-report",
                            "UBSAN_OPTIONS=log_path=/out/sanitizer-report"],
                "qemu": []},
    # ThreadSanitizer's runtime is built with AVX, which TCG's default CPU model lacks (every
    # process died of SIGILL as it started).
    "thread": {"build": [],
               "options": ["TSAN_OPTIONS=log_path=/out/sanitizer-report"],
               "qemu": ["-cpu", "max"]},
}
# CAMROLL_VM_BASELINE=REV (a git revision, or a camroll binary): that camroll goes into the guest too, as
# camroll-baseline, and the first-JPEG benchmark times it beside the current one. Boots differ by
# more than most changes do (see docs/benchmarks.md), so a change is measured against its baseline in one boot.
BASELINE = os.environ.get("CAMROLL_VM_BASELINE", "")
if SANITIZER and SANITIZER not in SANITIZERS:
    sys.exit(f"vm: CAMROLL_VM_SANITIZER={SANITIZER}: not one of {', '.join(SANITIZERS)}")

# vivid and what it needs, the virtio disk results come back on, the host's randomness (see boot),
# and what the scenarios use
# (fake-card: a loop device, device-mapper, ext4 and the crc32c it asks the crypto API for;
# sdcard: FAT and exFAT with the code pages they name files in; nas: the NFS server and client;
# power-cut: F2FS, the flash file system some cards are formatted with, and the crc32 it asks for;
# window: 9p over virtio, for the host's root; systemd: an overlay of it).
MODULES = ["vivid", "virtio_pci", "virtio_blk", "virtio_rng", "v4l2loopback", "loop", "dm_mod", "dm_flakey", "ext4", "crc32c_generic",
           "vfat", "exfat", "nls_cp437", "nls_utf8", "nls_ascii", "nfsd", "nfsv4", "f2fs", "crc32_generic",
           "9p", "9pnet_virtio", "overlay"]
# Host programs copied into the guest with their libraries.
GUEST_PROGRAMS = ["/usr/bin/v4l2-ctl"]
# Libraries camroll loads with dlopen (ldd cannot see them), copied with their own libraries.
GUEST_DLOPENED = ["/usr/lib/x86_64-linux-gnu/libchafa.so.0", "/usr/lib/x86_64-linux-gnu/libv4l2.so.0",
                  "/usr/lib/x86_64-linux-gnu/libv4lconvert.so.0", "/usr/lib/x86_64-linux-gnu/libspng.so.0"]


def log(message):
    print(f"vm: {message}", flush=True)


def run(command, **kwargs):
    return subprocess.run(command, check=True, **kwargs)


def kernel_package():
    """The versioned image package linux-image-amd64 depends on (linux-image-6.1.0-57-amd64)."""
    for attempt in range(2):
        out = subprocess.run(["apt-cache", "depends", "linux-image-amd64"], capture_output=True, text=True).stdout
        match = re.search(r"Depends: (linux-image-[0-9][^\s]*-amd64)", out)
        if match:
            return match.group(1)
        if attempt == 0:  # no package lists yet on this machine
            subprocess.run(["apt-get", "update", "-qq"], check=False)
    sys.exit("vm: cannot find the kernel package linux-image-amd64 depends on")


def fetch_kernel():
    """Downloads and unpacks the kernel package once; returns (tree, kernel release, kernel file)."""
    package = kernel_package()
    tree = os.path.join(CACHE, package)
    if not os.path.isdir(os.path.join(tree, "lib", "modules")):
        os.makedirs(CACHE, exist_ok=True)
        log(f"downloading {package}")
        for old in glob.glob(os.path.join(CACHE, "*.deb")):
            os.remove(old)
        run(["apt-get", "download", package], cwd=CACHE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deb = glob.glob(os.path.join(CACHE, package + "_*.deb"))[0]
        shutil.rmtree(tree, ignore_errors=True)
        run(["dpkg-deb", "-x", deb, tree])
        os.remove(deb)
    release = os.listdir(os.path.join(tree, "lib", "modules"))[0]
    return tree, release, uncompressed_kernel(tree, release)


def uncompressed_kernel(tree, release):
    """The ELF inside vmlinuz: booted through its PVH note it saves seconds of decompression
    under TCG. Falls back to vmlinuz itself when no xz stream is found."""
    vmlinuz = os.path.join(tree, "boot", f"vmlinuz-{release}")
    elf = os.path.join(tree, "boot", f"vmlinux-{release}")
    if os.path.exists(elf):
        return elf
    data = open(vmlinuz, "rb").read()
    start = data.find(b"\xfd7zXZ\x00")
    if start >= 0:
        try:
            kernel = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(data[start:])
            if kernel[:4] == b"\x7fELF":
                open(elf, "wb").write(kernel)
                return elf
        except lzma.LZMAError:
            pass
    return vmlinuz


def module_closure(tree, release, names):
    """The .ko files for `names` and everything they depend on, from modules.dep."""
    base = os.path.join(tree, "lib", "modules", release)
    dep_file = os.path.join(base, "modules.dep")
    if not os.path.exists(dep_file):
        run(["depmod", "-b", tree, release])
    deps = {}
    for line in open(dep_file):
        path, _, rest = line.partition(":")
        deps[path] = rest.split()
    by_name = {os.path.basename(p).split(".ko")[0].replace("-", "_"): p for p in deps}
    extra = os.path.join(CACHE, "extra-modules", release)
    for ko in glob.glob(os.path.join(extra, "*.ko")):
        by_name[os.path.basename(ko)[:-3].replace("-", "_")] = ko
    wanted, stack = set(), [by_name[n] for n in names if n in by_name]
    while stack:
        path = stack.pop()
        if path in wanted:
            continue
        wanted.add(path)
        stack.extend(deps.get(path, []))
    return base, sorted(wanted)


def static_flags(package):
    """The flags of the Makefile's `static` (what `make install` and `make deb` ship) for the
    source tree at `package`, so that the VM runs and `make vm-bench` times the binary users get.
    A tree from before packaging/static-link-flags kept them in this file, as STATIC_FLAGS."""
    script = os.path.join(package, "packaging", "static-link-flags")
    if os.path.exists(script):
        return subprocess.run([script], capture_output=True, text=True, check=True).stdout.split()
    match = re.search(r"^STATIC_FLAGS = (\[.*?\])$", open(os.path.join(package, "Tests", "vm", "vmtest.py")).read(), re.M)
    if match is None:
        sys.exit(f"vm: no static build flags in {package}")
    return ast.literal_eval(match.group(1))


def build_camroll():
    """camroll, release, with the Swift runtime linked in so the guest needs only C libraries;
    under a sanitizer, with the runtime as shared libraries (the initramfs takes them by ldd)."""
    if SANITIZER:
        # Not with the runtime linked in: under AddressSanitizer that build takes the buffer
        # getcwd(NULL, 0) allocates for one ASan did not allocate, and aborts on its free.
        log(f"building camroll (release, {SANITIZER} sanitizer, shared Swift runtime)")
        scratch = os.path.join(ROOT, ".build", f"vm-{SANITIZER}")
        run(["swift", "build", "-c", "release", f"--sanitize={SANITIZER}", *SANITIZERS[SANITIZER]["build"],
             "--scratch-path", scratch, "--package-path", ROOT], stdout=subprocess.DEVNULL)
        return os.path.join(scratch, "release", "camroll")
    log("building camroll (release, static Swift stdlib)")
    return build_static(ROOT, os.path.join(ROOT, ".build", "vm"))


def build_baseline(revision):
    """camroll as it was at git `revision`, built as build_camroll builds it (from `git archive`:
    committed files only, with that revision's static build flags), for a benchmark to
    time a change against in the same boot; or, where `revision` names a file, that binary."""
    if os.path.isfile(revision):
        return revision
    log(f"building the baseline camroll at {revision}")
    source = os.path.join(ROOT, ".build", "vm-baseline-source")
    shutil.rmtree(source, ignore_errors=True)
    os.makedirs(source)
    archive = subprocess.run(["git", "-C", ROOT, "archive", revision], capture_output=True, check=False)
    if archive.returncode != 0:
        sys.exit(f"vm: CAMROLL_VM_BASELINE={revision}: {archive.stderr.decode(errors='replace').strip()}")
    subprocess.run(["tar", "-x", "-C", source], input=archive.stdout, check=True)
    return build_static(source, os.path.join(ROOT, ".build", "vm-baseline"))


def build_static(package, scratch):
    flags = static_flags(package)
    # The C targets' hardening flags, where the tree takes them (CAMROLL_C_FLAGS, Package.swift).
    script = os.path.join(package, "packaging", "static-link-flags")
    environment = dict(os.environ)
    if os.path.exists(script) and "--c-flags" in open(script).read():
        environment["CAMROLL_C_FLAGS"] = subprocess.run([script, "--c-flags"], capture_output=True, text=True,
                                                        check=True).stdout.strip()
    run(["swift", "build", "-c", "release", *flags, "--scratch-path", scratch,
         "--package-path", package], stdout=subprocess.DEVNULL, env=environment)
    binary = os.path.join(scratch, "release", "camroll")
    # What the flags promise, checked on what the linker made: libraries bound at start and
    # never looked for beside the binary; the C++ library linked in where the tree says so.
    dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    if re.search(r"\((RUNPATH|RPATH)\)", dynamic) or not re.search(r"\(FLAGS\).*BIND_NOW", dynamic):
        sys.exit(f"vm: {binary} has a library search path of its own or no BIND_NOW:\n{dynamic}")
    if any(flag.endswith("static-libstdc++") for flag in flags) and "libstdc++" in dynamic:
        sys.exit(f"vm: {binary} loads libstdc++ although its flags link it in:\n{dynamic}")
    # C built with _FORTIFY_SOURCE calls glibc's checked functions (__memcpy_chk, __snprintf_chk…).
    if "CAMROLL_C_FLAGS" in environment:
        imported = subprocess.run(["nm", "-D", "--undefined-only", binary], capture_output=True, text=True, check=True).stdout
        if not re.search(r"__\w+_chk\b", imported):
            sys.exit(f"vm: {binary} calls none of glibc's checked functions although its C is built with _FORTIFY_SOURCE")
    stripped = os.path.join(scratch, "camroll.stripped")
    run(["strip", "-o", stripped, binary])
    return stripped


def shared_libraries(program):
    result = subprocess.run(["ldd", program], capture_output=True, text=True)
    if result.returncode != 0 and "not a dynamic executable" in result.stdout + result.stderr:
        return []
    result.check_returncode()
    out = result.stdout
    libraries = []
    for line in out.splitlines():
        match = re.search(r"(/\S+)", line.split("=>")[-1])
        if match:
            libraries.append(match.group(1))
    return libraries


def copy_into(root, path, target=None):
    destination = os.path.join(root, (target or path).lstrip("/"))
    os.makedirs(os.path.dirname(destination), exist_ok=True)
    shutil.copy2(os.path.realpath(path), destination)


def build_tools():
    """Test tools that run in the guest: static, but for the first-JPEG benchmark's C floor,
    grab-jpeg, linked to libturbojpeg as camroll is to its JPEG library."""
    tools = []
    for name in ["mjpeg_feeder", "ramp_feeder", "timeit", "pty_keys"]:
        tool = os.path.join(OUT, name.replace("_", "-"))
        run(["cc", "-static", "-O2", "-o", tool, os.path.join(HERE, name + ".c")])
        tools.append(tool)
    tool = os.path.join(OUT, "grab-jpeg")
    run(["cc", "-O2", "-o", tool, os.path.join(HERE, "grab_jpeg.c"), "-lturbojpeg", "-lsqlite3", "-pthread"])
    tools.append(tool)
    return tools


def programs_disk(scenario, workdir):
    """The tar of a scenario's extra programs and their libraries, or None."""
    listing = os.path.join(SCENARIOS, scenario, "programs")
    if not os.path.exists(listing):
        return None
    root = os.path.join(workdir, "programs")
    shutil.rmtree(root, ignore_errors=True)
    for program in open(listing).read().split():
        path = shutil.which(program)
        if path is None:
            sys.exit(f"vm: {scenario} needs {program} on the host (apt install it)")
        copy_into(root, path)
        for library in shared_libraries(path):
            copy_into(root, library)
    disk = os.path.join(workdir, "programs.tar")
    run(["tar", "-cf", disk, "-C", root, "."])
    shutil.rmtree(root)
    return disk


def host_root_share(scenario):
    """qemu's arguments sharing the host's root read-only for a scenario with a `host-root` file
    (none for the others), after checking that the programs it lists are on the host."""
    listing = os.path.join(SCENARIOS, scenario, "host-root")
    if not os.path.exists(listing):
        return []
    for program in open(listing).read().split():
        if shutil.which(program) is None:
            sys.exit(f"vm: {scenario} needs {program} on the host (make vm-deps installs it)")
    # multidevs=remap: the inode numbers of files on other mounts of the host (its /work, /tmp…)
    # kept apart from the root's.
    return ["-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"]


def build_initramfs(tree, release, camroll, tools, baseline=None):
    root = os.path.join(OUT, "initramfs")
    shutil.rmtree(root, ignore_errors=True)
    for directory in ["bin", "sbin", "etc", "proc", "sys", "dev", "tmp", "out", "usr/bin", "lib64"]:
        os.makedirs(os.path.join(root, directory), exist_ok=True)
    copy_into(root, "/bin/busybox")
    copy_into(root, camroll, "/usr/bin/camroll")
    if baseline:
        copy_into(root, baseline, "/usr/bin/camroll-baseline")
    for tool in tools:
        copy_into(root, tool, "/usr/bin/" + os.path.basename(tool))
        for library in shared_libraries(tool):
            copy_into(root, library)
    for program in [camroll] + ([baseline] if baseline else []) + GUEST_PROGRAMS + GUEST_DLOPENED:
        if program not in (camroll, baseline):
            copy_into(root, program)
        for library in shared_libraries(program):
            copy_into(root, library)
    plugins = "/usr/lib/x86_64-linux-gnu/libv4l/plugins"
    for plugin in glob.glob(os.path.join(plugins, "*.so")):
        copy_into(root, plugin)
        for library in shared_libraries(plugin):
            copy_into(root, library)

    base, modules = module_closure(tree, release, MODULES)
    guest_base = os.path.join(root, "lib", "modules", release)
    for module in modules:
        source = module if os.path.isabs(module) else os.path.join(base, module)
        relative = os.path.relpath(source, base) if source.startswith(base) else os.path.join("extra", os.path.basename(source))
        destination = os.path.join(guest_base, relative)
        os.makedirs(os.path.dirname(destination), exist_ok=True)
        shutil.copy2(source, destination)
    for name in ["modules.order", "modules.builtin", "modules.builtin.modinfo"]:
        if os.path.exists(os.path.join(base, name)):
            shutil.copy2(os.path.join(base, name), guest_base)
    run(["depmod", "-b", root, release])

    shutil.copytree(SCENARIOS, os.path.join(root, "scenarios"))
    with open(os.path.join(root, "etc", "passwd"), "w") as f:
        f.write("root:x:0:0:root:/root:/bin/sh\nalice:x:1000:1000:alice:/tmp:/bin/sh\n")
    with open(os.path.join(root, "etc", "group"), "w") as f:
        f.write("root:x:0:\nvideo:x:44:\nalice:x:1000:\n")
    if SANITIZER:
        with open(os.path.join(root, "etc", "sanitizer-options"), "w") as f:
            f.write("".join(option + "\n" for option in SANITIZERS[SANITIZER]["options"]))
    init = os.path.join(root, "init")
    shutil.copy2(os.path.join(HERE, "guest-init.sh"), init)
    os.chmod(init, 0o755)

    image = os.path.join(OUT, "initramfs.cpio")
    with open(image, "wb") as f:
        files = subprocess.run(["find", "."], cwd=root, capture_output=True, check=True).stdout
        subprocess.run(["cpio", "-o", "-H", "newc", "--quiet"], cwd=root, input=files, stdout=f, check=True)
    return image


def kvm_usable():
    try:
        cpu = open("/proc/cpuinfo").read()
    except OSError:
        return False
    return os.path.exists("/dev/kvm") and re.search(r"\b(vmx|svm)\b", cpu) is not None


def tcg_cpus(scenario):
    """vCPUs under TCG: one, where the host's two cores also run qemu's own threads and the
    tests' timings are steadier so; a scenario's `tcg-cpus` file asks for more (the first-JPEG
    benchmark: two, as the machines camroll runs on have, since camroll opens its catalog and
    begins its run on one thread while another takes and encodes the first frame)."""
    wanted = os.path.join(SCENARIOS, scenario, "tcg-cpus")
    return int(open(wanted).read()) if os.path.exists(wanted) else 1


def boot(kernel, initramfs, scenario, extra_cmdline, workdir, timeout=TIMEOUT):
    """Boots one VM for one scenario; returns (finished, seconds)."""
    disk = os.path.join(workdir, "results.tar")
    with open(disk, "wb") as f:
        f.truncate(512 * 1024 * 1024)
    console = os.path.join(workdir, "console.log")
    cmdline = f"console=ttyS0 panic=-1 loglevel=4 scenario={scenario} {extra_cmdline}".strip()
    command = [
        "qemu-system-x86_64", "-machine", "q35", "-m", "1536", "-smp", "2", "-nographic", "-no-reboot",
        "-accel", "kvm" if kvm_usable() else "tcg",
        "-kernel", kernel, "-initrd", initramfs, "-append", cmdline,
        "-drive", f"file={disk},format=raw,if=virtio",
        "-serial", f"file:{console}", "-monitor", "none", "-display", "none",
        # An entropy source, as real machines have (a hardware RNG, or interrupts enough): without
        # one the kernel's random pool was ready only ~2.9 s into the boot, and every Swift
        # program's start (the runtime seeds its hashing from getrandom, which waits for the pool)
        # waited for it — the first camroll of a boot took 1.1 s longer than the next.
        "-device", "virtio-rng-pci",
    ]
    command += host_root_share(scenario)
    programs = programs_disk(scenario, workdir)
    if programs:
        command += ["-drive", f"file={programs},format=raw,if=virtio,readonly=on"]
    if not kvm_usable():
        command[command.index("-smp") + 1] = str(tcg_cpus(scenario))
    if SANITIZER:
        command += SANITIZERS[SANITIZER]["qemu"]
    begin = time.monotonic()
    try:
        subprocess.run(command, timeout=timeout, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    except subprocess.TimeoutExpired:
        return False, time.monotonic() - begin
    seconds = time.monotonic() - begin
    results = os.path.join(workdir, "guest")
    os.makedirs(results, exist_ok=True)
    finished = "camroll-vm: done" in open(console, errors="replace").read()
    if finished:
        subprocess.run(["tar", "-xf", disk, "-C", results], check=False, stderr=subprocess.DEVNULL)
    os.remove(disk)
    if programs:
        os.remove(programs)
    return finished, seconds


def symbolized(summary, binary):
    """A sanitizer's SUMMARY line from the guest, which has no symbolizer, with the function and
    source line of its camroll address found on the host in the unstripped build."""
    match = re.search(r"\(/usr/bin/camroll\+(0x[0-9a-f]+)\)", summary)
    symbolizer = shutil.which("llvm-symbolizer")
    if match is None or symbolizer is None:
        return summary
    found = subprocess.run([symbolizer, f"--obj={binary}", "--inlining=false", match.group(1)],
                           capture_output=True, text=True).stdout.split("\n")
    if len(found) < 2 or found[0] in ("", "??"):
        return summary
    function = subprocess.run(["swift", "demangle", "--simplified", "--compact", found[0]],
                              capture_output=True, text=True).stdout.strip() or found[0]
    return f"{summary}\n    in {function} ({found[1].replace(ROOT + '/', '')})"


def main():
    names = sys.argv[1:] or sorted(
        n for n in os.listdir(SCENARIOS)
        if os.path.isdir(os.path.join(SCENARIOS, n)) and not os.path.exists(os.path.join(SCENARIOS, n, "benchmark")))
    for name in names:
        if not os.path.isfile(os.path.join(SCENARIOS, name, "guest.sh")):
            sys.exit(f"vm: no scenario '{name}' (see {SCENARIOS})")
    if shutil.which("qemu-system-x86_64") is None:
        sys.exit("vm: qemu-system-x86_64 is not installed (make vm-deps)")
    total_begin = time.monotonic()
    tree, release, kernel = fetch_kernel()
    os.makedirs(OUT, exist_ok=True)
    run(["bash", os.path.join(HERE, "build-v4l2loopback.sh"), release, os.path.join(CACHE, "extra-modules", release)])
    camroll = build_camroll()
    baseline = build_baseline(BASELINE) if BASELINE else None
    initramfs = build_initramfs(tree, release, camroll, build_tools(), baseline)
    log(f"kernel {release} ({os.path.basename(kernel)}), initramfs {os.path.getsize(initramfs) // 1_000_000} MB, "
        f"accel {'kvm' if kvm_usable() else 'tcg'}")

    passed, failed = [], []
    vm_seconds = 0.0
    for name in names:
        workdir = os.path.join(OUT, name)
        shutil.rmtree(workdir, ignore_errors=True)
        os.makedirs(workdir)
        cmdline_file = os.path.join(SCENARIOS, name, "cmdline")
        extra = open(cmdline_file).read().strip() if os.path.exists(cmdline_file) else ""
        benchmark = os.path.exists(os.path.join(SCENARIOS, name, "benchmark"))
        finished, seconds = boot(kernel, initramfs, name, extra, workdir, timeout=max(TIMEOUT, 1800) if benchmark else TIMEOUT)
        vm_seconds += seconds
        console = os.path.join(workdir, "console.log")
        reason = None
        if not finished:
            reason = "the VM did not finish in time" if seconds >= TIMEOUT else "the guest did not finish"
        else:
            check = os.path.join(SCENARIOS, name, "check")
            result = subprocess.run([check, os.path.join(workdir, "guest")], capture_output=True, text=True)
            with open(os.path.join(workdir, "check.log"), "w") as f:
                f.write(result.stdout + result.stderr)
            reports = sorted(glob.glob(os.path.join(workdir, "guest", "sanitizer-report*")))
            if result.returncode != 0:
                reason = "check failed:\n" + (result.stdout + result.stderr).strip()
            if reports:
                summaries = {symbolized(line.strip(), camroll) for path in reports for line in open(path, errors="replace")
                             if line.startswith("SUMMARY")}
                reason = (reason + "\n" if reason else "") + f"{len(reports)} sanitizer report(s) in " \
                    f"{os.path.join(workdir, 'guest')}:\n" + "\n".join(sorted(summaries))
            if reason is None and benchmark:
                print(result.stdout, end="", flush=True)
        if reason is None:
            passed.append(name)
            print(f"PASS {name} ({seconds:.1f} s)", flush=True)
        else:
            failed.append(name)
            print(f"FAIL {name} ({seconds:.1f} s): {reason}", flush=True)
            guest_log = os.path.join(workdir, "guest", "guest.log")
            for label, path in [("guest log", guest_log), ("console", console)]:
                if os.path.exists(path):
                    lines = open(path, errors="replace").read().splitlines()[-40:]
                    print(f"--- {label} (last {len(lines)} lines) ---\n" + "\n".join(lines), flush=True)
    print(f"vm: {len(names)} scenarios, VM time {vm_seconds:.1f} s, total {time.monotonic() - total_begin:.1f} s")
    print(f"{len(passed)} passed, {len(failed)} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
