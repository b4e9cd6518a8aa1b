"""Keeps freed memory in the guest while a benchmark runs, where the machine would give it back.

A virtual machine with free page reporting (virtio-balloon; "Free page reporting enabled" in
dmesg) hands pages the guest frees back to its host, which discards them; the guest's next use of
such a page costs a fault in the host and a zeroed page. A tool that writes 1 GB into a tmpfs
emptied a moment ago then runs at 2 GB/s if the pages it gets were not reported yet and 0.5 GB/s
if they were — a 4× swing, measured with the same command in a row, that decides which of two
tools looks faster. Where the kernel lets root hold reporting back for pages freed in the last
`min_free_ms`, this sets it to a minute for the benchmark's duration and puts the old value back;
otherwise it says that the figures carry that noise.
"""
import contextlib
import os

PARAMETER = "/sys/module/page_reporting/parameters/min_free_ms"


@contextlib.contextmanager
def steady_memory(hold_ms=60_000):
    if not os.path.exists(PARAMETER):
        yield
        return
    try:
        with open(PARAMETER) as f:
            previous = f.read().strip()
        with open(PARAMETER, "w") as f:
            f.write(str(hold_ms))
    except OSError as error:
        print(f"note: this machine reports freed memory to its host and {PARAMETER} cannot be set "
              f"({error.strerror}): rates in memory can swing 4× between runs")
        yield
        return
    print(f"note: freed memory is kept from the host for {hold_ms // 1000} s during the benchmark "
          f"({PARAMETER}, {previous} before; put back after)")
    try:
        yield
    finally:
        with open(PARAMETER, "w") as f:
            f.write(previous)
