#!/usr/bin/env python3
"""No library is looked for beside the binary: the builds README tells people to make.

    runpath.py BINARY...

For each BINARY: `readelf -d` shows no `$ORIGIN` in its RUNPATH or RPATH; and, run from a
directory of its own (a copy of it, so that `$ORIGIN` would be that directory) holding a
libxxhash.so.0 whose constructor leaves a mark, `camroll --version` exits 0 and the planted
library's constructor never ran. (The release build once had RUNPATH
`/opt/swift/usr/lib/swift/linux:$ORIGIN`, and such a library ran its constructor.)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

PLANTED = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void planted(void) {
    const char *mark = getenv("PLANTED_MARK");
    if (mark) { int fd = open(mark, O_WRONLY | O_CREAT, 0600); if (fd >= 0) close(fd); }
}
"""


def check(binary, work):
    problems = []
    dynamic = subprocess.run(["readelf", "-d", binary], capture_output=True, text=True, check=True).stdout
    paths = re.findall(r"\((?:RUNPATH|RPATH)\)\s+Library r(?:un)?path: \[(.*)\]", dynamic)
    print(f"{binary}: RUNPATH/RPATH {paths or 'none'}")
    if any("$ORIGIN" in path for path in paths):
        problems.append(f"{binary}: $ORIGIN in its search path {paths}")
    directory = tempfile.mkdtemp(dir=work)
    copy = os.path.join(directory, "camroll")
    shutil.copy2(binary, copy)
    source = os.path.join(work, "planted.c")
    with open(source, "w") as file:
        file.write(PLANTED)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", os.path.join(directory, "libxxhash.so.0"), source], check=True)
    mark = os.path.join(work, "planted-ran")
    result = subprocess.run([copy, "--version"], capture_output=True, text=True, env=dict(os.environ, PLANTED_MARK=mark))
    if result.returncode != 0:
        problems.append(f"{binary}: --version beside a planted library exited {result.returncode}: {result.stderr.strip()[:200]}")
    if os.path.exists(mark):
        problems.append(f"{binary}: the libxxhash.so.0 planted beside it was loaded (its constructor ran)")
        os.unlink(mark)
    else:
        print(f"{binary}: a libxxhash.so.0 beside it was not loaded")
    return problems


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    problems = []
    with tempfile.TemporaryDirectory(prefix="camroll-runpath-") as work:
        for binary in sys.argv[1:]:
            problems += check(os.path.abspath(binary), work)
    for problem in problems:
        print("FAIL", problem)
    print(f"{len(problems)} failure(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
