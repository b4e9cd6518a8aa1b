import CamrollKit
import Glibc

// Before anything else, and before any thread exists: no SIGINT or SIGTERM can be lost.
SignalWatcher.start()
Trace.mark("loaded, runtime started")
let status = CommandLineTool.main(arguments: CommandLine.arguments, environment: ProcessEnvironment.variables())
Trace.report()
exit(status.rawValue)
