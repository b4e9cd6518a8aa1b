@testable import CamrollKit
import Foundation
import Testing

/// Real signals sent to a real `camroll snap` process, at random moments of a long run.
@Suite(.serialized) struct CancellationTests {
    /// Starts `snap -n 1000000 --json`, waits for its `start` event, then `delay` more.
    func startLongRun(in dir: TemporaryDirectory, extra: [String] = [], prefix: [String] = []) throws -> (Process, Pipe, Pipe) {
        let process = CamrollBinary.process(
            options(["snap", "-d", "pattern", "-r", "320x240", "-n", "1000000", "--json", "-o", dir.file("out/{seq}.jpg"),
                     "--db", dir.file("c.sqlite3")], then: extra), prefix: prefix)
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // The first line on stdout is the start event: the run row exists, saving begins.
        var firstLine = Data()
        while let byte = try out.fileHandleForReading.read(upToCount: 1), !byte.isEmpty, byte != Data("\n".utf8) {
            firstLine.append(byte)
        }
        #expect(String(decoding: firstLine, as: UTF8.self).contains("\"event\":\"start\""))
        return (process, out, err)
    }

    func finish(_ process: Process, _ out: Pipe, _ err: Pipe) -> (Int32, String, String) {
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
        return (status, String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self))
    }

    /// Files under final names are exactly the `saved` rows, with their bytes; no temp files.
    func expectDiskMatchesCatalog(_ dir: TemporaryDirectory, status: String) throws -> Int {
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("PRAGMA integrity_check") == "ok")
        #expect(try catalog.text("SELECT status FROM runs") == status)
        let rows = try catalog.rows("SELECT path, bytes FROM saves WHERE status = 'saved' ORDER BY seq", columns: 2)
        let onDisk = (try? FileManager.default.contentsOfDirectory(atPath: dir.file("out"))) ?? []
        #expect(onDisk.allSatisfy { $0.hasSuffix(".jpg") && !$0.hasPrefix(".") }, "stray files: \(onDisk.filter { !$0.hasSuffix(".jpg") })")
        #expect(Set(onDisk.map { dir.file("out/" + $0) }) == Set(rows.compactMap { $0[0] }))
        for row in rows.suffix(3) {
            let size = try FileManager.default.attributesOfItem(atPath: row[0]!)[.size] as? Int
            #expect(size.map(String.init) == row[1])
        }
        return rows.count
    }

    @Test(arguments: 1...20)
    func sigintAtARandomMomentLeavesCatalogAndDiskInAgreement(attempt: Int) throws {
        let dir = try TemporaryDirectory()
        let (process, out, err) = try startLongRun(in: dir)
        usleep(UInt32.random(in: 0...400_000))
        kill(process.processIdentifier, SIGINT)
        let (status, stdout, _) = finish(process, out, err)
        #expect(status == 130)
        let saved = try expectDiskMatchesCatalog(dir, status: "cancelled")
        #expect(stdout.contains("\"status\":\"cancelled\"") && stdout.contains("\"saves\":\(saved)"))
    }

    @Test func sigtermExits143AndRecordsTheRunAsCancelled() throws {
        let dir = try TemporaryDirectory()
        let (process, out, err) = try startLongRun(in: dir)
        usleep(200_000)
        kill(process.processIdentifier, SIGTERM)
        let (status, _, _) = finish(process, out, err)
        #expect(status == 143)
        _ = try expectDiskMatchesCatalog(dir, status: "cancelled")
    }

    @Test func humanSummarySaysCancelledAfterKOfN() throws {
        let dir = try TemporaryDirectory()
        let process = CamrollBinary.process(
            ["-d", "pattern", "-r", "320x240", "-n", "1000000", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3")])
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Once saving has begun (a first file exists), however long start-up took.
        let deadline = Date().addingTimeInterval(10)
        while dir.files(in: "out").isEmpty && Date() < deadline { usleep(10_000) }
        usleep(200_000)
        kill(process.processIdentifier, SIGINT)
        let (status, stdout, _) = finish(process, out, err)
        #expect(status == 130)
        let saved = try expectDiskMatchesCatalog(dir, status: "cancelled")
        #expect(saved > 0 && stdout.contains("cancelled after \(saved)/1000000 files"), "\(stdout)")
    }

    /// A second signal skips the rest of the current write, but every file already under its
    /// final name has its row and the run is closed (once 22 of 59 runs needed repair).
    @Test(arguments: [false, true], 1...5)
    func aSecondSigintExitsAtOnceWithEveryRenamedFileRecorded(overwrite: Bool, attempt: Int) throws {
        let dir = try TemporaryDirectory()
        // --fsync makes each save slow, so the second signal lands while the first is handled.
        let (process, out, err) = try startLongRun(in: dir, extra: ["--fsync"] + (overwrite ? ["--overwrite"] : []))
        usleep(UInt32.random(in: 50_000...300_000))
        kill(process.processIdentifier, SIGINT)
        usleep(UInt32.random(in: 0...2_000))
        kill(process.processIdentifier, SIGINT)
        let (status, _, _) = finish(process, out, err)
        #expect(status == 130)
        _ = try expectDiskMatchesCatalog(dir, status: "cancelled")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: dir.file("out"))) ?? []
        let decoder = try JPEGDecoder()
        for name in names { _ = try decoder.decodeRGB(fileBytes(dir.file("out/" + name))) }
    }

    /// Started with SIGHUP ignored, as `nohup` starts it, camroll outlives a hang-up; started with
    /// SIGINT ignored too, as a script's `camroll … &` is, its `kill -INT` still stops the run.
    @Test func nohupsHangUpIsIgnoredAndAScriptsSigintStillCancels() throws {
        let dir = try TemporaryDirectory()
        let (process, out, err) = try startLongRun(
            in: dir, prefix: ["/bin/sh", "-c", "trap '' INT HUP; exec \"$0\" \"$@\""])
        kill(process.processIdentifier, SIGHUP)
        usleep(500_000)
        #expect(process.isRunning, "SIGHUP ended a run started with it ignored")
        kill(process.processIdentifier, SIGINT)
        let (status, _, stderr) = finish(process, out, err)
        #expect(status == 130, "\(stderr)")
        #expect(try expectDiskMatchesCatalog(dir, status: "cancelled") > 0)
    }

    /// A signal at any moment of start-up, even before the catalog exists, is honoured: the
    /// process ends 130 or 143 and never goes on saving (once 8 of 500 were lost).
    @Test func signalsDuringStartUpAreNeverLost() throws {
        for attempt in 0..<40 {
            let dir = try TemporaryDirectory()
            let process = CamrollBinary.process(
                ["-d", "pattern", "-r", "64x48", "-n", "100000", "--quiet", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3")])
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32(attempt % 20) * 2_000)
            let signal = attempt % 2 == 0 ? SIGINT : SIGTERM
            kill(process.processIdentifier, signal)
            let deadline = Date().addingTimeInterval(10)
            while process.isRunning && Date() < deadline { usleep(5_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
            let status = process.terminationReason == .exit ? process.terminationStatus : 128 + process.terminationStatus
            #expect(status == 128 + signal, "attempt \(attempt): signal \(signal) after \(attempt % 20 * 2) ms gave \(status)")
            if FileManager.default.fileExists(atPath: dir.file("c.sqlite3")) {
                let catalog = try CatalogReader(dir.file("c.sqlite3"))
                #expect(try catalog.int("SELECT count(*) FROM runs WHERE status NOT IN ('cancelled')") == 0)
            }
        }
    }
}
