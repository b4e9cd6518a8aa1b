import CLinux
import CamrollKit
import Glibc

// The catalog thread frees and allocates again ~100 KB at each commit; glibc would hand that
// back to the kernel every time (madvise: hundreds of calls in a 2000-save run, each a TLB
// shootdown that interrupts the thread writing the files). Up to 64 MB is kept for reuse.
clinux_keep_freed_memory(64 << 20)
// A mapped file that can no longer be had (SQLite's WAL index on a full btrfs): room kept for
// the catalog given back for it, or a one-line error and exit 74, not a crash.
MappedFileErrors.install()
// Before anything else, and before any thread exists: no SIGINT or SIGTERM can be lost.
SignalWatcher.start()
Trace.mark("loaded, runtime started")
let status = CommandLineTool.main(argumentCount: CommandLine.argc, CommandLine.unsafeArgv, environment: ProcessEnvironment.variables())
Trace.report()
exit(status.rawValue)
