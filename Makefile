# camroll — build, demo, tests, benchmark. Every target installs the Debian packages it needs
# when they are missing (as root, or through sudo).

BUILD_PACKAGES := pkg-config libstdc++-12-dev libturbojpeg0-dev libjpeg62-turbo-dev libsqlite3-dev libxxhash-dev libv4l-dev libexif-dev libspng-dev \
                  libcurl4-openssl-dev
TEST_PACKAGES  := xxhash sqlite3 util-linux libjpeg-turbo-progs zsh fish libimage-exiftool-perl libcurl4 libchafa0 librsvg2-2 libpangocairo-1.0-0 fonts-dejavu-core fonts-wqy-microhei fonts-noto-color-emoji tmux exfatprogs exfat-fuse xfsprogs btrfs-progs python3-fusepy
# (The window scenario's GTK, X server, xdotool and xwd, and the systemd scenario's systemd, run
# in the guest from the host's root.)
VM_PACKAGES    := qemu-system-x86 busybox-static cpio kmod v4l-utils python3 xz-utils dmsetup f3 e2fsprogs dosfstools exfatprogs f2fs-tools nfs-kernel-server \
                  libgtk-4-1 xvfb x11-utils xdotool x11-apps fonts-dejavu-core systemd
WINDOW_PACKAGES := libgtk-4-1 xvfb xauth x11-utils xdotool imagemagick weston libx11-dev jq xxhash libjpeg-turbo-progs fonts-dejavu-core
BENCH_PACKAGES := fswebcam ffmpeg libjpeg-turbo-progs
STORAGE_BENCH_PACKAGES := f3 fio e2fsprogs
STARTUP_BENCH_PACKAGES := qemu-user

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_DIR ?= $(CURDIR)/demo

.PHONY: all build release static demo test check unit-test hostile window-test readme-examples check-docs vm-test vm-asan vm-tsan vm-bench vm-bench-window interrupt sweep race asan fuzz bench bench-banner bench-encode bench-window bench-catalog bench-storage bench-save bench-startup bench-resize deps test-deps vm-deps \
	install uninstall deb clean

all: build

# Installs whatever of the listed packages is not installed yet; apt-get update once, first.
define ensure_packages
	@missing=$$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done); \
	if [ -n "$$missing" ]; then \
		echo "Installing: $$missing"; \
		$(SUDO) apt-get update -qq && \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi
endef

deps:
	$(call ensure_packages,$(BUILD_PACKAGES))

test-deps: deps
	$(call ensure_packages,$(TEST_PACKAGES))

vm-deps: test-deps
	$(call ensure_packages,$(VM_PACKAGES))

# Every build here, as `make install`'s: no `$$ORIGIN` in the binary's search path (which SwiftPM
# adds, so that the loader would look for every library beside the binary first, where anyone
# who can write there could plant one); the Swift runtime's directory stays, the dynamic build
# needs it. Tests/hostile/runpath.py checks the binaries (make hostile).
SWIFT_BUILD_FLAGS := --disable-local-rpath

build: deps
	swift build $(SWIFT_BUILD_FLAGS)

release: deps
	swift build -c release $(SWIFT_BUILD_FLAGS)

# What `make install` and `make deb` ship: the Swift runtime and its C++ library linked in, so
# that the binary runs on a machine without a Swift toolchain; the C libraries stay Debian's
# shared ones, bound at start and looked for only where the system keeps them. The flags, and
# why, are packaging/static-link-flags's; Tests/vm/vmtest.py builds the VM's binary with them too.
STATIC_DIR := .build/static
STATIC_BIN := $(STATIC_DIR)/release/camroll
static: deps
	$(call ensure_packages,dpkg-dev)
	flags=$$(packaging/static-link-flags) && cflags=$$(packaging/static-link-flags --c-flags) && \
		CAMROLL_C_FLAGS="$$cflags" swift build -c release $$flags --scratch-path $(STATIC_DIR)

# The main job: a camera if there is one, the built-in test pattern if not; 5 saves into
# ./demo, recorded in ./demo/catalog.sqlite3.
demo: release
	$(call ensure_packages,sqlite3)
	@device=$$(ls /dev/video* >/dev/null 2>&1 && echo "" || echo "-d pattern"); \
	.build/release/camroll snap $$device -n 5 --stamp -o '$(DEMO_DIR)/{date}_{time}_{seq}.jpg' --db '$(DEMO_DIR)/catalog.sqlite3'
	@sqlite3 -header -column '$(DEMO_DIR)/catalog.sqlite3' \
		"SELECT s.seq, s.path, s.bytes, s.xxh128, s.duration_us FROM saves s JOIN captures c ON c.id = s.capture_id WHERE c.run_id = (SELECT max(id) FROM runs)" 2>/dev/null || true

# The tests to run before a commit, within 15 minutes on a fresh 2-core machine, the builds
# included: the Swift test suites, pick's window under Xvfb and Wayland, the real-kernel suite
# in qemu, and a sample of interruptions with repair (12 rounds of the campaign `make check`
# runs 56 of).
test: unit-test
	$(MAKE) window-test
	$(MAKE) interrupt ROUNDS=12
	$(MAKE) vm-test

# Everything CI runs (.ci/run): the Swift test suites, pick's window, interruptions with repair,
# a sweep of random options, the hostile files, text, directories and signals, the threaded work under ThreadSanitizer, the suites again under
# AddressSanitizer, every fuzz target for a minute, the real-kernel suite in qemu and its camera
# scenarios again under AddressSanitizer and under ThreadSanitizer, then README's examples on
# the pattern source and the docs' links.
check: unit-test
	$(MAKE) window-test
	$(MAKE) interrupt ROUNDS=56
	$(MAKE) sweep SWEEP_RUNS=2000
	$(MAKE) hostile
	$(MAKE) race
	$(MAKE) asan
	$(MAKE) fuzz FUZZ_SECONDS=60
	$(MAKE) vm-test
	$(MAKE) vm-asan
	$(MAKE) vm-tsan
	$(MAKE) readme-examples
	$(MAKE) check-docs

unit-test: test-deps
	swift test $(SWIFT_BUILD_FLAGS)

# pick's window under Xvfb (and once on Wayland, under weston's headless backend), driven with
# xdotool: the preview, shutter, retake, timer, mirror, progress, cancel and close, the result
# on stdout; and GTK hidden, for the one-line error.
window-test: build
	$(call ensure_packages,$(WINDOW_PACKAGES))
	python3 Tests/window/window.py .build/debug/camroll

# The README's examples (the ```sh blocks marked <!-- example -->), run on the test pattern in a
# temporary directory with a temporary catalog: each must exit as it says.
readme-examples: build
	Tests/readme/run-examples --quiet

# Every link in README and docs/ leads to a file or a heading that exists, and every command
# and option camroll's help prints is in one of those pages.
check-docs: build
	Tests/readme/check-docs

# Random SIGINT/SIGTERM/SIGKILL/double-SIGINT/start-up/delete interruptions, then verify --repair:
# every disagreement between catalog and disk counted before and after (all 0 after).
ROUNDS ?= 500
interrupt: build
	python3 Tests/interrupt/interrupt.py --rounds $(ROUNDS)

# Hostile files, text, directories and signals against the built binary (a couple of minutes;
# `make check` runs it): no $$ORIGIN and no planted library loaded (the release build too, where
# there is one), picture bombs under 300/600/1200 MB of address space and none (never a trap;
# peak RSS each; the release build too, where there is one), terminal escapes in every printing command (on a pty), directories swapped
# for links mid-run and mid-delete at a random moment (SWAP_ROUNDS), and signals at random
# moments from exec on (SIGNAL_RUNS in each band). The campaigns of issue 49, once:
# `make hostile SWAP_ROUNDS=200 SIGNAL_RUNS=500`.
SWAP_ROUNDS ?= 24
SIGNAL_RUNS ?= 100
hostile: build test-deps
	python3 Tests/hostile/runpath.py .build/debug/camroll $$(test -x .build/release/camroll && echo .build/release/camroll)
	python3 Tests/hostile/allocation.py .build/debug/camroll
	! test -x .build/release/camroll || python3 Tests/hostile/allocation.py .build/release/camroll
	python3 Tests/hostile/terminal_escapes.py .build/debug/camroll
	python3 Tests/hostile/directory_swaps.py .build/debug/camroll --rounds $(SWAP_ROUNDS)
	python3 Tests/hostile/early_signals.py .build/debug/camroll --runs $(SIGNAL_RUNS)

# The whole binary run with random options and values, mostly valid, some hostile: no trap,
# hang, failure without a message or error with status 0 (a new seed each time; the seed is
# printed, and `Tests/sweep/sweep.py BINARY --seed S` repeats a sweep).
SWEEP_RUNS ?= 5000
sweep: build
	python3 Tests/sweep/sweep.py .build/debug/camroll --runs $(SWEEP_RUNS)

# Parallel writers, signals, fills, verify, a URL and pick's preview, with interruption and
# sweep rounds, in a build under ThreadSanitizer: any race it reports fails.
race: test-deps
	swift build --sanitize=thread --scratch-path .build/tsan
	python3 Tests/race/race.py .build/tsan/debug/camroll

# The Swift suites again, camroll and the tests built under AddressSanitizer (and the C shims
# under UndefinedBehaviorSanitizer too): any report fails.
asan: test-deps
	Tests/asan/run

# libFuzzer over the MJPEG/JPEG/template/argument/value parsers, FUZZ_SECONDS a target.
FUZZ_SECONDS ?= 600
fuzz: deps
	Fuzz/run $(FUZZ_SECONDS)

vm-test: vm-deps
	Tests/vm/run-suite

# The camera scenarios again with camroll built under AddressSanitizer: the V4L2 paths (driver
# buffers, YUYV strips, MJPEG frames, libv4l2's conversions, pick's preview) checked for memory
# errors, which the host's suites cannot reach. (The storage scenarios' code runs under
# AddressSanitizer in `make asan`; `make vm-asan VM_ASAN_SCENARIOS=` runs them all.)
VM_ASAN_SCENARIOS ?= camera cancel disconnect discovery faults golden mjpeg pick smoke warm-up
vm-asan: vm-deps
	CAMROLL_VM_SANITIZER=address Tests/vm/run-suite $(VM_ASAN_SCENARIOS)

# The camera scenarios, and four writers on NFS, with camroll built under ThreadSanitizer:
# pick's capture beside its drawing, a run cancelled or its camera pulled out while the
# catalog's thread records, on the real driver. (Not warm-up: it checks what a camera shows at a
# moment, and the slower build reaches that moment later; not the other storage scenarios,
# which come to or past the VM's time limit under it; `make race` runs their writers' code.)
VM_TSAN_SCENARIOS ?= camera cancel disconnect discovery faults golden mjpeg nas pick smoke
vm-tsan: vm-deps
	CAMROLL_VM_SANITIZER=thread Tests/vm/run-suite $(VM_TSAN_SCENARIOS)

# Time to the first JPEG in one VM boot, beside fswebcam, ffmpeg and a raw v4l2-ctl grab.
# BASELINE=REV (a git revision, or a camroll binary): that camroll is timed too, beside this one,
# in the same boot (make vm-bench BASELINE=HEAD~1).
vm-bench: vm-deps
	$(call ensure_packages,$(BENCH_PACKAGES))
	CAMROLL_VM_BASELINE='$(BASELINE)' Tests/vm/run-suite first-jpeg

# pick's window on vivid in one VM boot: launch to the first frame on screen beside ffplay -f v4l2
# on the same camera, and the preview's rate and CPU for YUYV and for an MJPEG camera.
vm-bench-window: vm-deps
	$(call ensure_packages,ffmpeg)
	Tests/vm/run-suite window-bench

bench: test-deps
	python3 Benchmarks/bench.py

# camroll's JPEG encoding against tjbench on the same picture, quality and subsampling: YUYV
# (the pattern) and RGB (a PNG), 640x480 and 1920x1080, pinned pairs on one CPU.
bench-encode: release
	$(call ensure_packages,libjpeg-turbo-progs imagemagick util-linux)
	python3 Benchmarks/encode.py .build/release/camroll

# The --timestamp/--title banner's time beside the encoding's, at 640x480, 1280x720, 1920x1080.
bench-banner: release
	python3 Benchmarks/banner.py .build/release/camroll

# pick's window in one Xvfb run: preview rate and CPU at 1280x720, launch to the first frame on
# screen beside ffplay, RSS after 1 and BENCH_WINDOW_MINUTES minutes of preview.
BENCH_WINDOW_MINUTES ?= 10
bench-window: release
	$(call ensure_packages,$(WINDOW_PACKAGES) ffmpeg)
	python3 Benchmarks/window.py .build/release/camroll --minutes $(BENCH_WINDOW_MINUTES)

# Catalogs of 1 M and 10 M saves (built through SQLite by Benchmarks/big_catalog.py, about
# 15 s a million) beside an empty one: a new run's saves/s, each command's time on one run, the
# bytes a save costs, the query plans. BENCH_CATALOG_SIZES=1000000 for the smaller alone.
BENCH_CATALOG_SIZES ?= 1000000,10000000
bench-catalog: release
	python3 Benchmarks/catalog_scale.py .build/release/camroll --sizes $(BENCH_CATALOG_SIZES)

# The code a one-photo snap runs for the first time, counted under qemu-user: the blocks TCG
# translates, per library (steady to ~2%, unlike wall times here), and the phases' times.
bench-startup: deps
	$(call ensure_packages,$(STARTUP_BENCH_PACKAGES))
	python3 Benchmarks/startup.py

# camroll's resizing beside ImageMagick's (-filter Lanczos -resize): SSIM against a float
# Lanczos-3 reference (numpy, linear light and sRGB codes) and time, on a zone plate and two of
# scikit-image's photos (installed with pip when missing). BENCH_RESIZE_RUNS runs a row.
BENCH_RESIZE_RUNS ?= 7
bench-resize: release
	$(call ensure_packages,imagemagick libjpeg-turbo-progs python3-pip)
	python3 -c 'import skimage, PIL' 2>/dev/null || python3 -m pip install scikit-image 2>/dev/null || \
		DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq python3-skimage python3-pil >/dev/null
	python3 Benchmarks/resize.py --camroll .build/release/camroll --runs $(BENCH_RESIZE_RUNS)

# camroll --fill/verify against f3write/f3read, --jobs N against fio, on a tmpfs and an ext4
# image on a loop device (mounting needs root).
bench-storage: deps
	$(call ensure_packages,$(STORAGE_BENCH_PACKAGES))
	python3 Benchmarks/storage.py

# The save's own cost: camroll against the least C that saves atomically the same way (O_TMPFILE,
# then linkat), 23 KB and 2.3 MB files, --jobs 1/2/4, tmpfs and ext4 through the page cache and
# with O_DIRECT; then where a save's CPU goes (perf). Root, for the mounts.
bench-save: release
	$(call ensure_packages,e2fsprogs libjpeg-turbo-progs linux-perf)
	python3 Benchmarks/save_floor.py .build/release/camroll --profile

# Install: PREFIX (default /usr/local) and DESTDIR as usual. The man page and the completions
# are generated by the binary from its own command table, so they match its parser.
PREFIX ?= /usr/local
BINDIR := $(PREFIX)/bin
MANDIR := $(PREFIX)/share/man/man1
BASHDIR := $(PREFIX)/share/bash-completion/completions
ZSHDIR := $(if $(filter /usr,$(PREFIX)),/usr/share/zsh/vendor-completions,$(PREFIX)/share/zsh/site-functions)
FISHDIR := $(PREFIX)/share/fish/vendor_completions.d
# udev reads rules from /usr/lib/udev/rules.d (packages) and /etc/udev/rules.d (local admin).
UDEVDIR := $(if $(filter /usr,$(PREFIX)),/usr/lib/udev/rules.d,/etc/udev/rules.d)
APPDIR := $(PREFIX)/share/applications
# systemd reads units from /usr/lib/systemd/system (packages) and /usr/local/lib/systemd/system.
UNITDIR := $(PREFIX)/lib/systemd/system
INSTALLED := $(BINDIR)/camroll $(MANDIR)/camroll.1.gz $(BASHDIR)/camroll $(ZSHDIR)/_camroll \
	$(FISHDIR)/camroll.fish $(UDEVDIR)/70-camroll.rules $(APPDIR)/camroll.desktop $(UNITDIR)/camroll@.service

# The binary stripped of its symbols and debugging sections (26.6 MB → about 15 MB): what a
# user runs needs neither, and the .deb ships it so.
STRIP ?= strip
install: static
	install -Dm755 $(STATIC_BIN) $(DESTDIR)$(BINDIR)/camroll
	$(STRIP) --strip-unneeded --remove-section=.comment --remove-section=.note $(DESTDIR)$(BINDIR)/camroll
	install -d $(DESTDIR)$(MANDIR) $(DESTDIR)$(BASHDIR) $(DESTDIR)$(ZSHDIR) $(DESTDIR)$(FISHDIR)
	$(STATIC_BIN) __generate man | gzip -9n > $(DESTDIR)$(MANDIR)/camroll.1.gz
	$(STATIC_BIN) __generate bash > $(DESTDIR)$(BASHDIR)/camroll
	$(STATIC_BIN) __generate zsh > $(DESTDIR)$(ZSHDIR)/_camroll
	$(STATIC_BIN) __generate fish > $(DESTDIR)$(FISHDIR)/camroll.fish
	chmod 644 $(DESTDIR)$(MANDIR)/camroll.1.gz $(DESTDIR)$(BASHDIR)/camroll $(DESTDIR)$(ZSHDIR)/_camroll $(DESTDIR)$(FISHDIR)/camroll.fish
	install -Dm644 udev/70-camroll.rules $(DESTDIR)$(UDEVDIR)/70-camroll.rules
	install -Dm644 packaging/camroll.desktop $(DESTDIR)$(APPDIR)/camroll.desktop
	install -d $(DESTDIR)$(UNITDIR)
	sed 's#/usr/bin/camroll#$(BINDIR)/camroll#' packaging/systemd/camroll@.service > $(DESTDIR)$(UNITDIR)/camroll@.service
	chmod 644 $(DESTDIR)$(UNITDIR)/camroll@.service
	@echo "installed camroll in $(DESTDIR)$(BINDIR). For camera access:"
	@echo "  sudo udevadm control --reload && sudo udevadm trigger --subsystem-match=video4linux"
	@echo "  sudo usermod -aG video \"\$$USER\"    # then log out and in again"

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))

# A Debian package with Debian's own tools: the tree `make install` stages under /usr,
# Depends found by dpkg-shlibdeps, maintainer scripts that reload udev, dpkg-deb --build.
VERSION := $(shell sed -n 's/.*version = "camroll \([0-9.]*\)".*/\1/p' Sources/CamrollKit/CLI/Help.swift)
ARCH := $(shell dpkg --print-architecture)
DEB := camroll_$(VERSION)_$(ARCH).deb
DEB_ROOT := .build/deb/root
deb: static
	$(call ensure_packages,dpkg-dev)
	rm -rf .build/deb && mkdir -p $(DEB_ROOT)
	$(MAKE) --no-print-directory install PREFIX=/usr DESTDIR=$(CURDIR)/$(DEB_ROOT) >/dev/null
	packaging/build-deb $(VERSION) $(ARCH) $(DEB_ROOT) $(DEB)

clean:
	rm -rf .build Benchmarks/out Tests/vm/out Tests/vm/out-*
