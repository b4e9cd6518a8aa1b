@testable import CamrollKit
import Foundation
import Testing

/// `camroll pick` in a real terminal: tmux runs it in a pane, keys are typed with send-keys and
/// the screen is read back with capture-pane. Each test has its own tmux server.
final class TmuxPane {
    let socket = "camroll-test-" + UUID().uuidString.prefix(8)
    let directory: TemporaryDirectory

    /// Runs `camroll pick` with `arguments` in a `width` x `height` pane, from a shell that
    /// records the terminal's settings before and after, and the exit status (last: a test that
    /// has seen the status reads the settings after). Its stdout goes to the file `stdout`, as a
    /// caller's `photo=$(camroll pick)` takes it: the pane shows what goes to the terminal.
    init(_ arguments: [String], width: Int = 100, height: Int = 30, directory: TemporaryDirectory) throws {
        self.directory = directory
        let quoted = ([CamrollBinary.path, "pick", "--terminal"] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
        let script = """
            cd '\(directory.path)'; stty -a > stty.before; \(quoted) > stdout; s=$?; stty -a > stty.after; \
            echo $s > status.tmp; mv status.tmp status; sleep 600
            """
        try tmux(["new-session", "-d", "-x", String(width), "-y", String(height), "sh", "-c", script])
    }

    /// An interactive shell (job control: Ctrl-Z, `fg`) in a `width` x `height` pane, in
    /// `directory`, for a test to type commands into.
    init(interactiveShellIn directory: TemporaryDirectory, width: Int = 100, height: Int = 30) throws {
        self.directory = directory
        try tmux(["new-session", "-d", "-x", String(width), "-y", String(height), "-c", directory.path,
                  "/bin/bash", "--norc", "--noprofile", "-i"])
    }

    deinit { _ = try? tmux(["kill-server"]) }

    /// Runs a tmux client (see Daemon: the server the first client starts keeps what it inherits).
    @discardableResult
    func tmux(_ arguments: [String]) throws -> String {
        let run = try Daemon.run(["/usr/bin/tmux", "-L", socket, "-f", "/dev/null"] + arguments, output: directory.file("tmux.out"))
        guard run.status == 0 else { throw CamrollError(.failure, "tmux \(arguments.first ?? ""): \(run.output)") }
        return run.output
    }

    /// A client attached to the session from a terminal of its own (a pty from script(1)), an
    /// xterm-256color, with tmux's `features` (`-T RGB`): as a user's outer terminal.
    func attachClient(features: [String]) throws -> pid_t {
        let attach = (["tmux", "-L", socket, "-f", "/dev/null"] + features + ["attach"]).joined(separator: " ")
        // script's input held open (an end of input would reach the pane's shell as ^D); the
        // sleep ends by itself once the test is long over.
        let pid = try Daemon.spawn(
            ["/bin/sh", "-c", "sleep 120 | /usr/bin/script -qfec 'stty cols 100 rows 30; TERM=xterm-256color \(attach)' /dev/null"],
            output: directory.file("client.out"))
        _ = try waitFor("the client attached") { _ in (try? tmux(["list-clients"]))?.isEmpty == false }
        return pid
    }

    func screen() throws -> String { try tmux(["capture-pane", "-p"]) }
    /// The screen with its colour sequences: a live picture is half blocks (▀) whose colours
    /// make the picture, so two frames differ only there.
    func coloredScreen() throws -> String { try tmux(["capture-pane", "-p", "-e"]) }
    func keys(_ keys: String...) throws { try tmux(["send-keys"] + keys) }
    func format(_ variable: String) throws -> String {
        try tmux(["display-message", "-p", "#{\(variable)}"]).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Polls the screen until `condition` holds (15 s at most).
    @discardableResult
    func waitFor(_ what: String, _ condition: (String) -> Bool) throws -> String {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline {
            let text = try screen()
            if condition(text) { return text }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let last = try screen()
        Issue.record("timed out waiting for \(what); the screen:\n\(last)")
        return last
    }

    @discardableResult
    func waitForLive() throws -> String { try waitFor("the live preview") { $0.contains("space shutter") && $0.contains("fps") } }

    /// The exit status of camroll, once it has exited.
    func status() throws -> Int32? {
        let path = directory.file("status")
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if let text = try? String(contentsOfFile: path, encoding: .utf8) {
                return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
            }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return nil
    }

    /// camroll's process id: the pane's shell's child.
    func camrollPID() throws -> Int32 {
        let shell = try format("pane_pid")
        let children = try CamrollBinary.runProgram(["/usr/bin/pgrep", "-P", shell, "-x", "camroll"]).stdout
        return try #require(Int32(children.split(separator: "\n").first ?? ""))
    }

    /// The picture's rows: the screen without its last (status) line and blank lines.
    static func pictureLines(_ screen: String) -> [Substring] {
        Array(screen.split(separator: "\n", omittingEmptySubsequences: false).dropLast(2)).filter {
            !$0.trimmingCharacters(in: .whitespaces).isEmpty
        }
    }
}

@Suite(.serialized) struct PickTests {
    static let pattern = ["-d", "pattern", "-r", "320x240"]

    func arguments(_ dir: TemporaryDirectory, _ extra: [String] = []) -> [String] {
        options(Self.pattern + ["-o", dir.file("out/{seq}.jpg"), "--db", dir.file("c.sqlite3")], then: extra)
    }

    @Test func thePreviewIsLiveAndTheShutterSavesTheFrameOnScreen() throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(arguments(dir), directory: dir)
        let first = try pane.waitForLive()
        #expect(first.contains("pattern  YUYV 320x240"))
        #expect(try pane.format("alternate_on") == "1")
        #expect(try pane.format("cursor_flag") == "0")
        #expect(TmuxPane.pictureLines(first).count >= 10)
        // The pattern's frame counter moves: a later capture of the picture differs.
        let earlier = try pane.coloredScreen()
        Thread.sleep(forTimeInterval: 0.5)
        let later = try pane.coloredScreen()
        #expect(TmuxPane.pictureLines(earlier).count >= 10)
        #expect(TmuxPane.pictureLines(earlier) != TmuxPane.pictureLines(later))

        try pane.keys("Space")
        let review = try pane.waitFor("the review") { $0.contains("taken") }
        let taken = try #require(Int(review.firstMatch(of: /frame (\d+) taken/)?.1 ?? ""))
        // Held: the picture no longer changes.
        let held = try pane.coloredScreen()
        Thread.sleep(forTimeInterval: 0.5)
        #expect(TmuxPane.pictureLines(try pane.coloredScreen()) == TmuxPane.pictureLines(held))
        try pane.keys("Enter")
        #expect(try pane.status() == 0)

        let files = dir.files(in: "out", suffix: ".jpg")
        #expect(files.count == 1)
        // The caller gets the path alone.
        #expect(try String(contentsOfFile: dir.file("stdout"), encoding: .utf8) == (files.first ?? "") + "\n")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == 1)
        #expect(try catalog.int("SELECT frame_sequence FROM captures") == taken)
        #expect(try catalog.text("SELECT status FROM runs") == "completed")
        #expect(try catalog.text("SELECT command FROM runs")?.contains("pick") == true)
        let (header, _) = try JPEGDecoder().decodeRGB(try fileBytes(try #require(files.first)))
        #expect(header == JPEGDecoder.Header(width: 320, height: 240))
        // The terminal is given back as it was.
        #expect(try String(contentsOfFile: dir.file("stty.before"), encoding: .utf8)
                == String(contentsOfFile: dir.file("stty.after"), encoding: .utf8))
        #expect(try pane.format("alternate_on") == "0")
        #expect(try pane.format("cursor_flag") == "1")
    }

    @Test func retakeSavesTheSecondShotNotTheFirst() throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(arguments(dir), directory: dir)
        try pane.waitForLive()
        try pane.keys("Space")
        let firstReview = try pane.waitFor("the first review") { $0.contains("taken") }
        let firstShot = try #require(Int(firstReview.firstMatch(of: /frame (\d+) taken/)?.1 ?? ""))
        try pane.keys("r")
        try pane.waitForLive()
        Thread.sleep(forTimeInterval: 0.3)
        try pane.keys("Space")
        let secondReview = try pane.waitFor("the second review") { $0.contains("taken") }
        let secondShot = try #require(Int(secondReview.firstMatch(of: /frame (\d+) taken/)?.1 ?? ""))
        #expect(secondShot > firstShot)
        try pane.keys("u")
        #expect(try pane.status() == 0)
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM captures") == 1)
        #expect(try catalog.int("SELECT frame_sequence FROM captures") == secondShot)
        #expect(dir.files(in: "out", suffix: ".jpg").count == 1)
    }

    @Test func aKeptShotIsSavedNTimesWithProgressAndRows() throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(arguments(dir, ["-n", "50", "--stamp"]), directory: dir)
        try pane.waitForLive()
        try pane.keys("Space")
        try pane.waitFor("the review") { $0.contains("taken") && $0.contains("50 saves") }
        try pane.keys("Enter")
        #expect(try pane.status() == 0)
        let screen = try pane.screen()
        #expect(screen.contains("saved 50 photos"))
        #expect(dir.files(in: "out", suffix: ".jpg").count == 50)
        let paths = try String(contentsOfFile: dir.file("stdout"), encoding: .utf8).split(separator: "\n").map(String.init)
        #expect(paths.sorted() == dir.files(in: "out", suffix: ".jpg") && paths.first?.hasSuffix("/01.jpg") == true, "\(paths)")
        let catalog = try CatalogReader(dir.file("c.sqlite3"))
        #expect(try catalog.int("SELECT count(*) FROM saves WHERE status = 'saved'") == 50)
        #expect(try catalog.int("SELECT count(DISTINCT xxh128) FROM saves") == 50)
    }

    @Test(arguments: [["q"], ["Escape"], ["C-c"], ["Space", "q"]])
    func cancellingSavesNothing(keys: [String]) throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(arguments(dir), directory: dir)
        try pane.waitForLive()
        for key in keys {
            try pane.keys(key)
            Thread.sleep(forTimeInterval: 0.3)
        }
        #expect(try pane.status() == 130)
        #expect(dir.files(in: "out", suffix: ".jpg").isEmpty)
        #expect(try String(contentsOfFile: dir.file("stdout"), encoding: .utf8).isEmpty)
        if FileManager.default.fileExists(atPath: dir.file("c.sqlite3")) {
            let catalog = try CatalogReader(dir.file("c.sqlite3"))
            #expect(try catalog.int("SELECT count(*) FROM runs") == 0)
            #expect(try catalog.int("SELECT count(*) FROM saves") == 0)
        }
        #expect(try pane.screen().contains("cancelled: nothing saved"))
        #expect(try String(contentsOfFile: dir.file("stty.before"), encoding: .utf8)
                == String(contentsOfFile: dir.file("stty.after"), encoding: .utf8))
    }

    /// Once, or twice at once (the second exits straight from the signal thread, which must
    /// give the terminal back itself).
    @Test(arguments: [(SIGTERM, Int32(143), 1), (SIGHUP, Int32(129), 1), (SIGTERM, Int32(143), 2)])
    func aSignalGivesTheTerminalBack(signal: Int32, status: Int32, times: Int) throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(arguments(dir), directory: dir)
        try pane.waitForLive()
        #expect(try pane.format("cursor_flag") == "0")
        let pid = try pane.camrollPID()
        for _ in 0..<times { kill(pid, signal) }
        #expect(try pane.status() == status)
        #expect(try String(contentsOfFile: dir.file("stty.before"), encoding: .utf8)
                == String(contentsOfFile: dir.file("stty.after"), encoding: .utf8))
        #expect(try pane.format("cursor_flag") == "1")
        #expect(try pane.format("alternate_on") == "0")
        #expect(dir.files(in: "out", suffix: ".jpg").isEmpty)
    }

    /// In tmux (COLORTERM unset, as tmux leaves it; NO_COLOR, which the tests' tmux inherits,
    /// unset too) the preview is in 24-bit colour where the
    /// terminal tmux draws on takes it (its RGB feature), in 256 colours where it does not.
    @Test(arguments: [true, false])
    func inTmuxTheOuterTerminalsColoursAreUsed(rgb: Bool) throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(interactiveShellIn: dir)
        let client = try pane.attachClient(features: rgb ? ["-T", "RGB"] : [])
        defer { kill(client, SIGTERM) }
        let command = ([CamrollBinary.path, "pick", "--terminal"] + arguments(dir)).map { "'" + $0 + "'" }.joined(separator: " ")
        try pane.keys("unset COLORTERM NO_COLOR; " + command, "Enter")
        try pane.waitForLive()
        let screen = try pane.coloredScreen()
        let features = try pane.tmux(["list-clients", "-F", "#{client_termfeatures}"])
        #expect(screen.contains("[38;2;") == rgb && screen.contains("[38;5;") == !rgb, "rgb \(rgb): \(features) \(screen.prefix(300))")
        try pane.keys("q")
    }

    /// Sixels asked for where the terminal does not draw them (tmux built without them, as
    /// Debian's is) would leave the preview blank: colour blocks instead, and a warning.
    @Test func sixelsWhereTheyAreNotDrawnFallBackToBlocks() throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(interactiveShellIn: dir)
        let client = try pane.attachClient(features: [])
        defer { kill(client, SIGTERM) }
        let command = ([CamrollBinary.path, "pick", "--terminal", "--preview-mode", "sixel"] + arguments(dir))
            .map { "'" + $0 + "'" }.joined(separator: " ")
        try pane.keys(command, "Enter")
        let live = try pane.waitForLive()
        #expect(TmuxPane.pictureLines(live).count >= 10, "\(live)")
        try pane.keys("q")
        try pane.waitFor("the warning") { $0.contains("does not say it draws sixels") }
    }

    /// As a caller takes a photo: `photo=$(camroll pick)` in a shell holds the path, and after a
    /// cancel nothing, with status 130.
    @Test(arguments: [false, true])
    func aCommandSubstitutionGetsThePathOrNothing(cancel: Bool) throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(interactiveShellIn: dir)
        let command = ([CamrollBinary.path, "pick", "--terminal"] + arguments(dir)).map { "'" + $0 + "'" }.joined(separator: " ")
        try pane.keys("photo=$(" + command + "); echo $? > status.tmp; printf %s \"$photo\" > photo; mv status.tmp status", "Enter")
        try pane.waitForLive()
        if cancel {
            try pane.keys("q")
        } else {
            try pane.keys("Space")
            try pane.waitFor("the review") { $0.contains("taken") }
            try pane.keys("Enter")
        }
        let status = try pane.status()
        let photo = try String(contentsOfFile: dir.file("photo"), encoding: .utf8)
        let files = dir.files(in: "out", suffix: ".jpg")
        if cancel {
            #expect(status == 130 && photo.isEmpty && files.isEmpty, "\(String(describing: status)) [\(photo)]")
        } else {
            #expect(status == 0 && files.count == 1 && photo == files.first, "\(String(describing: status)) [\(photo)]")
        }
    }

    /// Ctrl-Z in the picker stops it as a shell's job, the terminal given back as it was
    /// (before, the key was ignored); `fg` brings the live preview back, and a shot is saved.
    @Test func ctrlZSuspendsWithTheTerminalGivenBackAndFgResumes() throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(interactiveShellIn: dir)
        let command = ([CamrollBinary.path, "pick", "--terminal"] + arguments(dir)).map { "'" + $0 + "'" }.joined(separator: " ")
        try pane.keys("stty -a > stty.before; " + command, "Enter")
        try pane.waitForLive()
        try pane.keys("C-z")
        try pane.waitFor("the shell's job stopped") { $0.contains("Stopped") }
        #expect(try pane.format("alternate_on") == "0" && pane.format("cursor_flag") == "1")
        try pane.keys("stty -a > stty.stopped", "Enter")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(try String(contentsOfFile: dir.file("stty.before"), encoding: .utf8)
                == String(contentsOfFile: dir.file("stty.stopped"), encoding: .utf8))
        try pane.keys("fg", "Enter")
        try pane.waitFor("the live preview again") { $0.contains("space shutter") && !$0.contains("Stopped") }
        #expect(try pane.format("alternate_on") == "1")
        try pane.keys("Space")
        try pane.waitFor("the shot held") { $0.contains("taken") }
        try pane.keys("Enter")
        try pane.waitFor("the shot saved") { $0.contains("saved 1 photo") }
        #expect(dir.files(in: "out", suffix: ".jpg").count == 1)
    }

    @Test func resizingTheWindowRedrawsAtTheNewSize() throws {
        let dir = try TemporaryDirectory()
        let pane = try TmuxPane(arguments(dir), width: 100, height: 30, directory: dir)
        let before = try pane.waitForLive()
        // 320x240 in 100x29 cells of 1:2: height-bound, 29 rows of about 77 columns.
        #expect(TmuxPane.pictureLines(before).count == 29)
        try pane.tmux(["resize-window", "-x", "50", "-y", "16"])
        let after = try pane.waitFor("a redraw at 50x16") { screen in
            let lines = screen.split(separator: "\n", omittingEmptySubsequences: false)
            return TmuxPane.pictureLines(screen).count <= 15 && lines.count <= 17 && screen.contains("fps")
        }
        let lines = TmuxPane.pictureLines(after)
        #expect(!lines.isEmpty && lines.count <= 15)
        #expect(lines.allSatisfy { $0.count <= 50 })
        try pane.keys("q")
        #expect(try pane.status() == 130)
    }

    @Test func showDrawsTheThumbnailOrTheFileNoWiderThanTheTerminal() throws {
        let dir = try TemporaryDirectory()
        let database = dir.file("c.sqlite3")
        #expect(try CamrollBinary.run(["snap", "-d", "pattern", "-r", "640x480", "-o", dir.file("a.jpg"), "--db", database]).status == 0)
        // Not a terminal: the rows only, unless a mode is asked for.
        let plain = try CamrollBinary.run(["show", "last", "--db", database])
        #expect(plain.status == 0 && !plain.stdout.contains("█"))
        for extra in [[], ["--full"]] {
            let drawn = try CamrollBinary.run(["show", "last", "--preview-mode", "symbols", "--db", database] + extra)
            #expect(drawn.status == 0, "\(extra): \(drawn.stderr)")
            let picture = drawn.stdout.split(separator: "\n").filter { $0.contains("█") }
            // 4:3 in 80x24 cells of 1:2: 23 rows (a line kept for the prompt), none wider than 80
            // (NO_COLOR: no escapes).
            #expect(picture.count >= 20 && picture.count <= 23, "\(extra): \(picture.count) rows")
            #expect(picture.allSatisfy { $0.count <= 80 }, "\(extra)")
        }
    }

    @Test func withoutATerminalOrADisplayPickRefusesWith64() throws {
        let result = try CamrollBinary.run(["pick", "-d", "pattern"], environment: ["DISPLAY": "", "WAYLAND_DISPLAY": ""])
        #expect(result.status == 64)
        #expect(result.stderr.contains("pick needs a display (for its window) or a terminal; there is neither"), "\(result.stderr)")
        let terminal = try CamrollBinary.run(["pick", "-d", "pattern", "--terminal"])
        #expect(terminal.status == 64 && terminal.stderr.contains("pick --terminal needs a terminal"), "\(terminal.stderr)")
        // Options of snap's that pick leaves out are refused as such, and its help offers none of them.
        for option in ["--frames", "--interval", "--fill", "--jobs", "--offline"] {
            let refused = try CamrollBinary.run(["pick", "-d", "pattern", option] + (["--fill", "--offline"].contains(option) ? [] : ["2"]))
            #expect(refused.status == 64 && refused.stderr.contains("'\(option)' is not an option of 'camroll pick'"), "\(option): \(refused.stderr)")
        }
        let help = try CamrollBinary.run(["pick", "--help"])
        #expect(help.status == 0 && ["--frames", "--interval", "--fill", "--jobs", "--offline", "file:"].allSatisfy { !help.stdout.contains($0) }, "\(help.stdout)")
        #expect(["--window", "--terminal", "--timer", "--mirror", "--json"].allSatisfy { help.stdout.contains($0) })
    }
}
