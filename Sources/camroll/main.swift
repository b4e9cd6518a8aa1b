import CamrollKit
import Foundation

// Before anything else, and before any thread exists: no SIGINT or SIGTERM can be lost.
SignalWatcher.start()
exit(CommandLineTool.main(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment).rawValue)
