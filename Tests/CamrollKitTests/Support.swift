@testable import CamrollKit
import Foundation
import Testing

/// A fresh directory under /tmp (or `parent`), removed when the test's value goes away.
final class TemporaryDirectory {
    let path: String

    init(in parent: String = NSTemporaryDirectory()) throws {
        path = (parent.hasSuffix("/") ? parent : parent + "/") + "camroll-test-" + UUID().uuidString.lowercased()
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func file(_ name: String) -> String { path + "/" + name }

    func files(in subdirectory: String, suffix: String = "") -> [String] {
        let directory = file(subdirectory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { directory + "/" + $0 }
    }
}

/// Runs the built `camroll` binary, as a user would.
struct CamrollBinary {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Next to the test bundle in .build/<config>/, or $CAMROLL_BIN.
    static var path: String {
        if let override = ProcessInfo.processInfo.environment["CAMROLL_BIN"] { return override }
        let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var directory = runner.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent("camroll").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        return packageRoot.appendingPathComponent(".build/debug/camroll").path
    }

    static func process(_ arguments: [String], environment: [String: String] = [:], prefix: [String] = []) -> Process {
        programProcess(prefix + [path] + arguments, environment: environment)
    }

    static func programProcess(_ command: [String], environment: [String: String] = [:]) -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var env = ProcessInfo.processInfo.environment
        env["NO_COLOR"] = "1"
        for (key, value) in environment { env[key] = value }
        process.environment = env
        return process
    }

    @discardableResult
    static func run(_ arguments: [String], environment: [String: String] = [:], prefix: [String] = []) throws -> Result {
        try runProgram(prefix + [path] + arguments, environment: environment)
    }

    /// Runs any program (script(1), prlimit, …) and collects what it printed.
    static func runProgram(_ command: [String], environment: [String: String] = [:]) throws -> Result {
        let process = programProcess(command, environment: environment)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes before waiting, so a chatty child never blocks on a full pipe.
        let group = DispatchGroup()
        nonisolated(unsafe) var outData = Data(), errData = Data()
        DispatchQueue.global().async(group: group) { outData = out.fileHandleForReading.readDataToEndOfFile() }
        DispatchQueue.global().async(group: group) { errData = err.fileHandleForReading.readDataToEndOfFile() }
        group.wait()
        process.waitUntilExit()
        return Result(
            status: process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus,
            stdout: String(decoding: outData, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self))
    }
}

/// Reads a catalog the way a user with sqlite3 would.
struct CatalogReader {
    let database: Database

    init(_ path: String) throws { database = try Database(path: path, readOnly: true) }

    func int(_ sql: String) throws -> Int { try database.scalarInt(sql) ?? -1 }
    func text(_ sql: String) throws -> String? { try database.scalarText(sql) }

    func rows(_ sql: String, columns: Int32) throws -> [[String?]] {
        let statement = try database.prepare(sql)
        var rows: [[String?]] = []
        while try statement.step() { rows.append((0..<columns).map { statement.text($0) }) }
        return rows
    }
}

func fileBytes(_ path: String) throws -> [UInt8] {
    [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
}

/// `xxhsum -H2 FILE…` → [path: hex], the independent check of camroll's digests.
func xxhsum(_ paths: [String]) throws -> [String: String] {
    var result: [String: String] = [:]
    for chunk in stride(from: 0, to: paths.count, by: 500) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/xxhsum")
        process.arguments = ["-H2"] + paths[chunk..<min(paths.count, chunk + 500)]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let parts = line.split(separator: " ", maxSplits: 1)
            guard parts.count == 2 else { continue }
            result[parts[1].trimmingCharacters(in: .whitespaces)] = String(parts[0])
        }
    }
    return result
}

/// A valid 16x8 JPEG whose frame header then claims another size.
func jpegClaiming(width: Int, height: Int) throws -> [UInt8] {
    let frame = Frame(format: .yuyv, width: 16, height: 8, bytesPerLine: 32, bytes: [UInt8](repeating: 128, count: 256),
                      sequence: 0, capturedAt: Date())
    var jpeg = try JPEGEncoder().encode(frame, quality: 50).bytes
    guard let sof = (0..<(jpeg.count - 1)).first(where: { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC0 }) else { return jpeg }
    jpeg[sof + 5] = UInt8(height >> 8); jpeg[sof + 6] = UInt8(height & 0xFF)
    jpeg[sof + 7] = UInt8(width >> 8); jpeg[sof + 8] = UInt8(width & 0xFF)
    return jpeg
}
