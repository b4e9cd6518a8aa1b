import CamrollKit
import Foundation

exit(CommandLineTool.main(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment).rawValue)
