import CLinux
import CamrollKit
import Glibc

// The catalog thread frees and allocates again ~100 KB at each commit; glibc would hand that
// back to the kernel every time (madvise: hundreds of calls in a 2000-save run, each a TLB
// shootdown that interrupts the thread writing the files). Up to 64 MB is kept for reuse.
clinux_keep_freed_memory(64 << 20)
// Before anything else, and before any thread exists: no SIGINT or SIGTERM can be lost.
SignalWatcher.start()
Trace.mark("loaded, runtime started")
let status: ExitCode
switch CommandLineTool.utf8Arguments(count: CommandLine.argc, CommandLine.unsafeArgv) {
case .success(let arguments):
    status = CommandLineTool.main(arguments: arguments, environment: ProcessEnvironment.variables())
case .failure(let error):
    Console().error(error.message, hint: error.hint)
    status = error.exitCode
}
Trace.report()
exit(status.rawValue)
