# camroll — build, demo, tests, benchmark. Every target installs the Debian packages it needs
# when they are missing (as root, or through sudo).

BUILD_PACKAGES := pkg-config libturbojpeg0-dev libsqlite3-dev libxxhash-dev libv4l-dev
TEST_PACKAGES  := xxhash sqlite3 util-linux libjpeg-turbo-progs
VM_PACKAGES    := qemu-system-x86 busybox-static cpio kmod v4l-utils python3 xz-utils

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEMO_DIR ?= $(CURDIR)/demo

.PHONY: all build release demo test unit-test vm-test interrupt fuzz bench deps test-deps vm-deps clean

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

build: deps
	swift build

release: deps
	swift build -c release

# The main job: a camera if there is one, the built-in test pattern if not; 5 saves into
# ./demo, recorded in ./demo/catalog.sqlite3.
demo: release
	$(call ensure_packages,sqlite3)
	@device=$$(ls /dev/video* >/dev/null 2>&1 && echo "" || echo "-d pattern"); \
	.build/release/camroll snap $$device -n 5 --stamp -o '$(DEMO_DIR)/{date}_{time}_{seq}.jpg' --db '$(DEMO_DIR)/catalog.sqlite3'
	@sqlite3 -header -column '$(DEMO_DIR)/catalog.sqlite3' \
		"SELECT s.seq, s.path, s.bytes, s.xxh128, s.duration_us FROM saves s JOIN captures c ON c.id = s.capture_id WHERE c.run_id = (SELECT max(id) FROM runs)" 2>/dev/null || true

# Everything CI runs: the Swift test suites, interruptions with repair, every fuzz target for
# a minute, then the real-kernel suite in qemu.
test: unit-test
	$(MAKE) interrupt ROUNDS=56
	$(MAKE) fuzz FUZZ_SECONDS=60
	$(MAKE) vm-test

unit-test: test-deps
	swift test

# Random SIGINT/SIGTERM/SIGKILL/double-SIGINT/start-up/delete interruptions, then verify --repair:
# every disagreement between catalog and disk counted before and after (all 0 after).
ROUNDS ?= 500
interrupt: build
	python3 Tests/interrupt/interrupt.py --rounds $(ROUNDS)

# libFuzzer over the MJPEG/JPEG/template/argument/value parsers, FUZZ_SECONDS a target.
FUZZ_SECONDS ?= 600
fuzz: deps
	Fuzz/run $(FUZZ_SECONDS)

vm-test: vm-deps
	Tests/vm/run-suite

bench: test-deps
	python3 Benchmarks/bench.py

clean:
	rm -rf .build Benchmarks/out Tests/vm/out
