import CamrollKit
import Foundation

// Before anything else, and before any thread exists: no SIGINT or SIGTERM can be lost.
SignalWatcher.start()
Trace.mark("loaded, runtime started")
let status = CommandLineTool.main(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment)
Trace.report()
exit(status.rawValue)
