@testable import CamrollKit
import Foundation
import Testing

/// `snap --every`: the schedule as a pure type, then real runs on the pattern: the photos'
/// catalog times on the period's grid, skipped slots counted, retention with real files and
/// rows, hooks with real programs, a real SIGTERM, systemd's notifications on a real socket.
@Suite struct ScheduleTests {
    let second = 1_000_000

    @Test func alignedSlotsFallOnWholeMultiplesOfThePeriodOnTheLocalClock() {
        // 12:00:20 UTC, a clock two hours east of UTC: --every 1m starts at the next :00.
        let now = 1_800_000_020 * second
        var schedule = Schedule(periodMicroseconds: 60 * second, aligned: true, now: now, utcOffsetSeconds: 7200)
        var back = false
        #expect(schedule.step(now: now, steppedBack: &back) == .wait(until: now + 40 * second))
        #expect(schedule.step(now: now + 40 * second, steppedBack: &back) == .take(slot: schedule.lastSlot ?? -1, skipped: 0))
        #expect((schedule.due(schedule.lastSlot!) / second + 7200) % 60 == 0)
        // A 1h period on a clock 5h30 east: on the local hour, not UTC's.
        let india = Schedule(periodMicroseconds: 3600 * second, aligned: true, now: now, utcOffsetSeconds: 19_800)
        #expect((india.due(1) / second + 19_800) % 3600 == 0)
    }

    @Test func aScheduleNotAlignedStartsNowAndNeverDrifts() {
        let start = 1_000 * second
        let period = 200_000
        var schedule = Schedule(periodMicroseconds: period, aligned: false, now: start)
        var back = false
        #expect(schedule.step(now: start, steppedBack: &back) == .take(slot: 0, skipped: 0))
        // However late within its grace each slot is taken, the next is due on the grid.
        for k in 1...600 {
            let late = (k * 7_919) % (period / 2)
            #expect(schedule.step(now: start + k * period - 1, steppedBack: &back) == .wait(until: start + k * period))
            #expect(schedule.step(now: start + k * period + late, steppedBack: &back) == .take(slot: k, skipped: 0))
        }
        #expect(schedule.due(599) == start + 599 * period)
    }

    @Test func anOverrunSkipsTheSlotsItMissedAndTheNextIsOnTime() {
        let period = 100_000
        var schedule = Schedule(periodMicroseconds: period, aligned: false, now: 0)
        var back = false
        _ = schedule.step(now: 0, steppedBack: &back)
        // Slot 0's photo took 250 ms: slots 1 and 2 are missed, slot 2 is past its grace (50 ms).
        #expect(schedule.step(now: 260_000, steppedBack: &back) == .wait(until: 300_000))
        #expect(schedule.step(now: 300_000, steppedBack: &back) == .take(slot: 3, skipped: 2))
        // Within the grace: taken late rather than skipped.
        #expect(schedule.step(now: 440_000, steppedBack: &back) == .take(slot: 4, skipped: 0))
    }

    @Test func aClockStepBackFollowsTheClockAndAJumpForwardSkipsWithoutABurst() {
        let period = second
        var schedule = Schedule(periodMicroseconds: period, aligned: false, now: 10_000 * second)
        var back = false
        _ = schedule.step(now: 10_000 * second, steppedBack: &back)
        // An hour back: the next slot is the next second on the clock, not the old time.
        let earlier = 6_400 * second + 300_000
        let step = schedule.step(now: earlier, steppedBack: &back)
        #expect(back)
        #expect(step == .wait(until: 6_401 * second))
        back = false
        #expect(schedule.step(now: 6_401 * second, steppedBack: &back) == .take(slot: -3_599, skipped: 0))
        // A day forward (a resume): one photo now-ish, the slots passed counted, not taken.
        let later = (6_401 + 86_400) * second + 100
        #expect(schedule.step(now: later, steppedBack: &back) == .take(slot: 86_400 - 3_599, skipped: 86_399))
        #expect(!back)
    }

    @Test func retentionDropsTheOldestAndKeepsTheNewestWhatever() {
        let photos = (1...10).map { RetentionPolicy.Photo(id: $0, bytes: 100, savedAt: $0 * second) }
        #expect(RetentionPolicy(keepLast: 3).expiring(photos) == 7)
        #expect(RetentionPolicy(keepLast: 30).expiring(photos) == 0)
        // Within 4 s of the newest (10 s): 6…10 are kept.
        #expect(RetentionPolicy(keepForMicroseconds: 4 * second).expiring(photos) == 5)
        #expect(RetentionPolicy(keepBytes: 250).expiring(photos) == 8)
        // Any combination: the strictest wins.
        #expect(RetentionPolicy(keepLast: 8, keepForMicroseconds: 4 * second, keepBytes: 900).expiring(photos) == 5)
        // The photo just taken stays, even where it alone is over the bound.
        #expect(RetentionPolicy(keepBytes: 10).expiring(photos) == 9)
        #expect(RetentionPolicy(keepLast: 1).expiring([photos[0]]) == 0)
    }

    @Test func untilTakesATimeOfDayAsItsNextComingAndADateAsGiven() throws {
        let now = 1_800_000_000 * second  // 2027-01-15T08:00:00Z
        let utcDate = try ValueParser.wallClock("2027-01-15T09:30Z", option: "--until", now: now)
        #expect(utcDate == now + 5_400 * second)
        let timeOfDay = try ValueParser.wallClock("08:00:00Z", option: "--until", now: now + second)
        #expect(timeOfDay == now + 86_400 * second)
        #expect(try ValueParser.duration("7d", option: "--keep-for") == 7 * 86_400 * second)
        #expect(try ValueParser.duration("1.5d", option: "--keep-for") == 129_600 * second)
        for bad in ["25:00", "12", "2027-13-01", "noon", "12:00:00:00", ""] {
            #expect(throws: CamrollError.self) { _ = try ValueParser.wallClock(bad, option: "--until", now: now) }
        }
    }

    @Test func hookArgumentsAreReplacedOneByOneNeverSplit() {
        let path = "/tmp/a b/$(touch x) 'q\".jpg"
        let arguments = Hook.arguments(["upload", "--file={path}", "{seq}", "{time}"], path: path, seq: 7,
                                       time: Date(timeIntervalSince1970: 1_800_000_000))
        #expect(arguments == ["upload", "--file=" + path, "7", "2027-01-15T08:00:00.000Z"])
    }
}

@Suite(.serialized) struct ServiceEndToEndTests {
    /// The captures' catalog times, as µs since the epoch, oldest first.
    func captureTimes(_ catalog: CatalogReader) throws -> [Int] {
        try catalog.rows("SELECT captured_at FROM captures ORDER BY id", columns: 1).map {
            Int(try #require($0[0].flatMap(Timestamp.seconds(ofISO8601:)), "captured_at \(String(describing: $0[0]))") * 1e6)
        }
    }

    @Test func everySlotIsOnTheGridAndTheCountIsTheDurationOverThePeriod() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run([
            "snap", "-d", "pattern", "-r", "320x240", "--every", "200ms", "--align", "none", "--for", "5s",
            "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("SELECT status FROM runs") == "completed")
        #expect(try catalog.int("SELECT every_us FROM runs") == 200_000)
        let times = try captureTimes(catalog)
        let skipped = try catalog.int("SELECT skipped_slots FROM runs")
        // 25 slots in 5 s: each one taken or counted as skipped.
        #expect(abs(times.count + skipped - 25) <= 1, "\(times.count) photos, \(skipped) skipped")
        #expect(dir.files(in: "out").count == times.count)
        // Each photo on its slot of the first one's grid (taken within half a period, as the
        // schedule allows): no drift however long the run.
        let first = try #require(times.first)
        var slots: [Int] = []
        for time in times {
            let offset = time - first
            let slot = Int((Double(offset) / 200_000).rounded())
            #expect(abs(offset - slot * 200_000) < 100_000, "photo at +\(offset) µs is off slot \(slot)")
            slots.append(slot)
        }
        // Slots taken once each, in order; the gaps are exactly the skipped slots recorded.
        #expect(slots == slots.sorted() && Set(slots).count == slots.count)
        let gaps = zip(slots.dropFirst(), slots).map { $0 - $1 - 1 }.reduce(0, +)
        let between = try catalog.int("SELECT coalesce(sum(count), 0) FROM run_events WHERE kind = 'skipped' AND detail NOT LIKE '%at the end'")
        let recorded = try catalog.int("SELECT coalesce(sum(count), 0) FROM run_events WHERE kind = 'skipped'")
        #expect(gaps == between && recorded == skipped, "\(gaps) gaps, \(between) recorded between photos, \(recorded) of \(skipped) in all")
        #expect(result.stderr.contains(" bytes, "), "one line per photo off a terminal: \(result.stderr)")
        #expect(result.stdout.hasPrefix("saved \(times.count) files, "), "an open-ended run has no total: \(result.stdout)")
    }

    @Test func slotsMissedByOverrunsAreSkippedCountedAndRecordedNeverCaughtUp() throws {
        let dir = try TemporaryDirectory()
        // A 2 ms period with a 1280x720 frame to encode and save each time: most slots are
        // overrun. Every slot of the second is either a photo or a skip, and none is taken twice.
        let result = try CamrollBinary.run([
            "snap", "-d", "pattern", "--every", "2ms", "--align", "none", "--for", "1s",
            "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        let photos = try catalog.int("SELECT count(*) FROM captures")
        let skipped = try catalog.int("SELECT skipped_slots FROM runs")
        #expect(skipped > 0 && photos > 0)
        let recorded = try catalog.int("SELECT sum(count) FROM run_events WHERE kind = 'skipped'")
        #expect(skipped == recorded)
        #expect(abs(photos + skipped - 500) <= 3, "\(photos) photos + \(skipped) skipped in 500 slots")
        #expect(try catalog.int("SELECT count(*) FROM run_events WHERE kind = 'skipped' AND detail LIKE '%overran%'") > 0)
        #expect(result.stderr.contains("slot(s) skipped before slot"))
    }

    @Test func keepLastLeavesTheNewestFilesAndRowsAndNothingItDidNotWrite() throws {
        let dir = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: dir.file("out"), withIntermediateDirectories: true)
        // Someone else's file in the same folder, named as camroll would name one.
        try Data("not camroll's".utf8).write(to: URL(fileURLWithPath: dir.file("out/01.jpg")))
        let arguments = [
            "snap", "-d", "pattern", "-r", "160x120", "--every", "20ms", "--align", "none", "--frames", "12",
            "--keep-last", "4", "--latest", dir.file("latest.jpg"), "-o", dir.file("out/{run}-{seq}.jpg"),
            "--db", dir.file("c.sqlite3"),
        ]
        for _ in 1...2 {
            let result = try CamrollBinary.run(arguments)
            #expect(result.status == 0, "\(result.stderr)")
        }
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        // Both runs share the template: 4 photos in all remain, the second run's newest.
        let kept = dir.files(in: "out").map { URL(fileURLWithPath: $0).lastPathComponent }
        #expect(kept == ["01.jpg", "2-09.jpg", "2-10.jpg", "2-11.jpg", "2-12.jpg"])
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == 4)
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'deleted'") == 20)
        #expect(try catalog.int("SELECT sum(count) FROM run_events WHERE kind = 'retention'") == 20)
        #expect(try String(contentsOfFile: dir.file("out/01.jpg"), encoding: .utf8) == "not camroll's")
        // The deleted photos' thumbnails are let go with them; the kept ones' stay.
        #expect(try catalog.int("SELECT count(*) FROM thumbnails") == 4)
        #expect(try fileBytes(dir.file("latest.jpg")) == fileBytes(dir.file("out/2-12.jpg")))
        let verify = try CamrollBinary.run(["verify", "--db", dir.file("c.sqlite3")])
        #expect(verify.status == 0, "\(verify.stdout)\(verify.stderr)")
    }

    /// What a photo retention deleted leaves in the catalog: its two rows, a few hundred bytes.
    /// A thumbnail kept in the capture's row left its page nearly empty when it went, never
    /// reused: 4.2 kB a photo for as long as the service ran.
    @Test func retentionKeepsTheCatalogsGrowthToItsRows() throws {
        let dir = try TemporaryDirectory()
        func catalogBytes(afterFrames frames: Int) throws -> Int {
            let db = dir.file("c\(frames).sqlite3")
            let result = try CamrollBinary.run([
                "snap", "-d", "pattern", "-r", "160x120", "--every", "5ms", "--align", "none", "--frames", String(frames),
                "--keep-last", "5", "-o", dir.file("out\(frames)/{seq}.jpg"), "--db", db, "--quiet",
            ])
            #expect(result.status == 0, "\(result.stderr)")
            let catalog = try CatalogReader(db)
            #expect(try catalog.int("SELECT count(*) FROM thumbnails") == 5)
            return try catalog.int("PRAGMA page_count") * catalog.int("PRAGMA page_size")
        }
        let perPhoto = try (catalogBytes(afterFrames: 400) - catalogBytes(afterFrames: 100)) / 300
        #expect(perPhoto < 1000, "the catalog grew by \(perPhoto) bytes a photo")
    }

    /// An old photo changed since it was saved is kept, and said once: it once stayed among the
    /// oldest and was refused again at every photo after (two synced commits, an event row and
    /// a log line a photo, for weeks).
    @Test func aChangedOldPhotoIsKeptAndSaidOnce() throws {
        let dir = try TemporaryDirectory()
        func run(_ frames: Int, keep: Int) throws -> CamrollBinary.Result {
            try CamrollBinary.run([
                "snap", "-d", "pattern", "-r", "160x120", "--every", "20ms", "--align", "none", "--frames", String(frames),
                "--keep-last", String(keep), "-o", dir.file("out/{run}-{seq}.jpg"), "--db", dir.file("c.sqlite3"),
            ])
        }
        #expect(try run(3, keep: 10).status == 0)
        let changed = try FileHandle(forWritingTo: URL(fileURLWithPath: dir.file("out/1-1.jpg")))
        changed.seekToEndOfFile()
        changed.write(Data([0]))
        try changed.close()
        let second = try run(6, keep: 2)
        #expect(second.status == 0, "\(second.stderr)")
        let said = (second.stdout + second.stderr).components(separatedBy: "no longer match").count - 1
        #expect(said == 1, "\(second.stdout)\(second.stderr)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM run_events WHERE kind = 'retention' AND detail LIKE '%no longer match%'") == 1)
        #expect(FileManager.default.fileExists(atPath: dir.file("out/1-1.jpg")))
        #expect(try catalog.text("SELECT status FROM saves WHERE path LIKE '%/1-1.jpg'") == "saved")
    }

    /// SIGKILL at random moments of `--keep-last 10` runs (one template: each run's retention
    /// takes the earlier runs' photos too), `verify --repair` after each: catalog and disk agree,
    /// and never more than 10 + 1 (the photo saved before its retention) files are left.
    @Test func retentionKilledAtRandomMomentsLeavesCatalogAndDiskInAgreement() throws {
        let dir = try TemporaryDirectory()
        let db = dir.file("c.sqlite3")
        for round in 1...12 {
            let process = CamrollBinary.process([
                "snap", "-d", "pattern", "-r", "160x120", "--every", "10ms", "--align", "none", "--keep-last", "10",
                "--quiet", "-o", dir.file("out/{run}-{seq}.jpg"), "--db", db,
            ])
            process.standardError = FileHandle.nullDevice
            try process.run()
            usleep(UInt32.random(in: 250_000...900_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let repair = try CamrollBinary.run(["verify", "--repair", "--db", db])
            #expect([0, 1].contains(repair.status), "round \(round): \(repair.stdout)\(repair.stderr)")
            let verify = try CamrollBinary.run(["verify", "--db", db])
            #expect(verify.status == 0, "round \(round): after repair, \(verify.stdout)\(verify.stderr)")
            let files = dir.files(in: "out")
            #expect(files.count <= 11, "round \(round): \(files.count) files")
            let catalog = try CatalogReader(db)
            #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files.count, "round \(round)")
            #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'deleting'") == 0, "round \(round)")
        }
        // The runs did save and delete: the rounds were not all killed before their first photo.
        let catalog = try CatalogReader(db)
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'deleted'") > 0)
    }

    @Test func keepBytesBoundsWhatTheRunLeaves() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run([
            "snap", "-d", "pattern", "-r", "320x240", "--every", "20ms", "--align", "none", "--frames", "15",
            "--keep-bytes", "40K", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let sizes = try dir.files(in: "out").map { try fileBytes($0).count }
        #expect(!sizes.isEmpty && sizes.count < 15)
        #expect(sizes.reduce(0, +) <= 40 * 1024)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == sizes.count)
    }

    @Test func aHookGetsAPathWithSpacesQuotesAndCommandSubstitutionAsOneArgument() throws {
        let dir = try TemporaryDirectory()
        let marker = dir.file("ran-by-a-shell")
        let template = dir.file("out/a b 'c\" $(touch \(marker)) {seq}.jpg")
        let log = dir.file("hook.log")
        let result = try CamrollBinary.run([
            "snap", "-d", "pattern", "-r", "160x120", "--every", "100ms", "--align", "none", "--frames", "3",
            "--exec", "/bin/sh", "-c", "printf '%s|%s|%s\\n' \"$#\" \"$1\" \"$2\" >> \"$0\"", log, "{path}", "{seq}", ";",
            "-o", template, "--db", dir.file("c.sqlite3"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        let lines = try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n")
        #expect(lines.count >= 2, "\(lines)")
        let first = try #require(lines.first)
        #expect(first == "2|\(dir.file("out/a b 'c\" $(touch \(marker)) 1.jpg"))|1")
        #expect(!FileManager.default.fileExists(atPath: marker))
    }

    @Test func aHookThatHangsIsKilledAtItsTimeoutAndTheRunGoesOn() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run([
            "snap", "-d", "pattern", "-r", "160x120", "--every", "100ms", "--align", "none", "--frames", "8",
            "--exec", "sleep", "30", ";", "--exec-timeout", "250ms", "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(dir.files(in: "out").count == 8)
        #expect(result.stderr.contains("sleep was killed after its timeout"), "\(result.stderr)")
        #expect(result.stderr.contains("still runs: skipped"))
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM run_events WHERE kind = 'hook'") >= 2)
        // A hook that fails is logged, never fatal.
        let failing = try CamrollBinary.run([
            "snap", "-d", "pattern", "-r", "160x120", "--every", "50ms", "--frames", "2", "--align", "none",
            "--exec", "false", ";", "-o", dir.file("f/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        #expect(failing.status == 0 && failing.stderr.contains("false exited with status 1"), "\(failing.stderr)")
    }

    @Test func sigtermEndsAnEndlessRunCleanlyWithItsPhotosRecorded() throws {
        let dir = try TemporaryDirectory()
        let process = CamrollBinary.process([
            "snap", "-d", "pattern", "-r", "160x120", "--every", "100ms", "--json",
            "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ])
        let events = Pipe()
        process.standardOutput = events
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Until three photos are out.
        var seen = Data()
        while seen.split(separator: UInt8(ascii: "\n")).filter({ String(decoding: $0, as: UTF8.self).contains("\"event\":\"photo\"") }).count < 3 {
            let chunk = events.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            seen.append(chunk)
        }
        kill(process.processIdentifier, SIGTERM)
        let rest = events.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 143)
        let summary = String(decoding: seen + rest, as: UTF8.self)
        #expect(summary.contains("\"event\":\"photo\""))
        #expect(summary.contains("\"event\":\"summary\""))
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.text("SELECT status FROM runs") == "cancelled")
        let files = dir.files(in: "out")
        #expect(files.count >= 3)
        #expect(files.first == dir.file("out/000001.jpg"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == files.count)
    }

    @Test func systemdIsToldReadyAfterTheFirstPhotoThenWatchdogThenStopping() throws {
        let dir = try TemporaryDirectory()
        let socketPath = dir.file("notify")
        let listener = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(listener >= 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            socketPath.utf8CString.withUnsafeBytes { raw.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0.prefix(raw.count))) }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        let result = try CamrollBinary.run([
            "snap", "-d", "pattern", "-r", "160x120", "--every", "100ms", "--align", "none", "--frames", "3",
            "-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3"),
        ], environment: ["NOTIFY_SOCKET": socketPath])
        #expect(result.status == 0, "\(result.stderr)")
        var messages: [String] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(listener, &buffer, buffer.count, Int32(MSG_DONTWAIT))
            if count <= 0 { break }
            messages.append(String(decoding: buffer[0..<count], as: UTF8.self))
        }
        let kinds = messages.map { $0.split(separator: "\n").first.map(String.init) ?? "" }
        // A watchdog ping as each slot begins; READY once the first photo is saved; STOPPING last.
        #expect(kinds.first == "WATCHDOG=1", "\(messages)")
        let ready = try #require(kinds.firstIndex(of: "READY=1"), "\(messages)")
        #expect(kinds.filter { $0 == "READY=1" }.count == 1)
        #expect(kinds.last == "STOPPING=1")
        #expect(kinds[(ready + 1)...].contains("WATCHDOG=1"))
        #expect(messages.allSatisfy { $0.contains("STATUS=") })
        #expect(messages.last?.contains("3 photo(s)") == true, "\(messages)")
    }

    @Test func aConfigFileGivesTheOptionsByTheirNamesAndAnUnknownOneIsNamedWithItsLine() throws {
        let dir = try TemporaryDirectory()
        let log = dir.file("hook.log")
        let profile = """
            # a profile
            device = pattern
            resolution 160x120
            every = 50ms
            align = none
            frames = 3
            keep-last = 2
            output = "\(dir.file("out/{seq}.jpg"))"
            db = \(dir.file("c.sqlite3"))
            exec = /bin/sh -c 'echo "$1" >> "$0"' \(log) {path}
            stamp = true
            fsync = false
            """
        try Data(profile.utf8).write(to: URL(fileURLWithPath: dir.file("cam.conf")))
        let result = try CamrollBinary.run(["snap", "--config", dir.file("cam.conf"), "--quiet"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(dir.files(in: "out") == [dir.file("out/2.jpg"), dir.file("out/3.jpg")])
        #expect(try String(contentsOfFile: log, encoding: .utf8).split(separator: "\n").count >= 2)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT synced FROM saves LIMIT 1") == 0)
        #expect(try catalog.int("SELECT every_us FROM runs") == 50_000)

        try Data("every = 1s\n\n# fine\nbogus = 3\n".utf8).write(to: URL(fileURLWithPath: dir.file("bad.conf")))
        let bad = try CamrollBinary.run(["snap", "--config", dir.file("bad.conf")])
        #expect(bad.status == 64)
        #expect(bad.stderr.hasPrefix("camroll: error: \(dir.file("bad.conf")), line 4: unknown option 'bogus'"), "\(bad.stderr)")
        // A value is checked as on the command line, with the same message.
        try Data("every = 0\n".utf8).write(to: URL(fileURLWithPath: dir.file("zero.conf")))
        let zero = try CamrollBinary.run(["snap", "--config", dir.file("zero.conf"), "-d", "pattern"])
        let direct = try CamrollBinary.run(["snap", "--every", "0", "-d", "pattern"])
        #expect(zero.status == 64 && zero.stderr == direct.stderr, "\(zero.stderr)")
    }

    @Test func badServiceInputIsOneLineAndExit64() throws {
        let dir = try TemporaryDirectory()
        let cases: [[String]] = [
            ["--every", "0"], ["--every", "-1s"], ["--every", "1x"], ["--for", "2s"], ["--for", "2s", "--frames", "3"],
            ["--every", "1s", "--keep-bytes", "10QB"], ["--every", "1s", "--until", "2020-01-01T00:00"],
            ["--every", "1s", "--interval", "1s"], ["--every", "1s", "--exec", "true"], ["--keep-last", "3"],
            ["--every", "1s", "--align", "later"], ["--every", "1s", "--until", "tea time"],
        ]
        for extra in cases {
            let result = try CamrollBinary.run(["snap", "-d", "pattern", "-o", dir.file("x.jpg"), "--db", dir.file("c.db")] + extra)
            #expect(result.status == 64, "\(extra): \(result.stderr)")
            #expect(result.stderr.hasPrefix("camroll: error: "), "\(extra): \(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count <= 2, "\(extra): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: dir.file("x.jpg")))
    }
}

@Suite struct ServiceUnitTests {
    static let analyze = ["/usr/bin/systemd-analyze", "/bin/systemd-analyze"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The template unit as `make install` writes it (its ExecStart pointing at the binary
    /// installed, here the one built), checked by systemd itself.
    @Test(.enabled(if: analyze != nil, "needs systemd-analyze (package systemd)"))
    func theTemplateUnitIsCleanForSystemdAnalyzeVerify() throws {
        let dir = try TemporaryDirectory()
        let unit = try String(contentsOfFile: repositoryFile("packaging/systemd/camroll@.service"), encoding: .utf8)
        #expect(unit.contains("ExecStart=/usr/bin/camroll snap --config /etc/camroll/%i.conf"))
        #expect(unit.contains("Type=notify") && unit.contains("SuccessExitStatus=130 143"))
        #expect(unit.contains("SupplementaryGroups=video") && unit.contains("ProtectSystem=strict") && unit.contains("NoNewPrivileges=yes"))
        let installed = unit.replacing("/usr/bin/camroll", with: CamrollBinary.path)
        try Data(installed.utf8).write(to: URL(fileURLWithPath: dir.file("camroll@feeder.service")))
        let result = try CamrollBinary.runProgram([try #require(Self.analyze), "verify", "--man=no", dir.file("camroll@feeder.service")])
        #expect(result.status == 0 && result.stdout.isEmpty && result.stderr.isEmpty, "\(result.stdout)\(result.stderr)")
        // The unit's one option is one camroll has.
        #expect(CommandTable.snap.option(named: "--config") != nil)
    }
}
