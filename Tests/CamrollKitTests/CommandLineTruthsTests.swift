@testable import CamrollKit
import Foundation
import Testing

/// What camroll says of itself — its libraries, its man page, its completions — is so; and
/// what a user types means one thing.
@Suite struct CommandLineTruthsTests {
    static let loadedOnUse = ["libv4l2.so.0", "libv4lconvert.so.0", "libspng.so.0", "libcurl.so.4", "libchafa.so.0",
                              "librsvg-2.so.2", "libpangocairo-1.0.so.0"]

    /// --version names every library camroll loads on use, with a version (or its file); a
    /// photo from the pattern loads none of them, --version all (LD_DEBUG says what is loaded).
    @Test func versionListsEveryLibraryItLoadsOnUseAndAPhotoLoadsNone() throws {
        let version = try CamrollBinary.run(["--version"], environment: ["LD_DEBUG": "files"])
        #expect(version.status == 0)
        for name in ["libv4l2 (v4l-utils) ", "libv4lconvert (v4l-utils) ", "libspng ", "libcurl ", "libchafa ", "librsvg ", "libpango "] {
            let line = version.stdout.split(separator: "\n").first { $0.hasPrefix(name) }
            #expect(line != nil && line?.hasSuffix("(not installed)") == false, "\(name): \(version.stdout)")
        }
        for name in ["libcurl", "librsvg", "libspng", "libpango"] {
            let numbered = try Regex("\n\(name) [0-9]+\\.[0-9]+\\.[0-9]+( \\([^)]+\\))?\n")
            #expect(version.stdout.contains(numbered), "\(name): \(version.stdout)")
        }
        for soname in Self.loadedOnUse { #expect(version.stderr.contains("file=\(soname) [0];"), "\(soname)") }

        let dir = try TemporaryDirectory()
        let photo = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "-o", dir.file("a.jpg"), "--db", dir.file("c.db")],
                                          environment: ["LD_DEBUG": "files"])
        #expect(photo.status == 0)
        for soname in Self.loadedOnUse { #expect(!photo.stderr.contains("file=\(soname)"), "a photo loaded \(soname)") }
    }

    /// Without libcurl (its file made unreadable in a mount namespace), --version says so, and
    /// still lists the rest. Root only (a mount namespace); CI runs as root.
    @Test func versionSaysALibraryIsNotInstalled() throws {
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return }
        let dir = try TemporaryDirectory()
        let library = URL(fileURLWithPath: "/usr/lib/x86_64-linux-gnu/libcurl.so.4").resolvingSymlinksInPath().path
        guard FileManager.default.fileExists(atPath: library) else { return }
        #expect(FileManager.default.createFile(atPath: dir.file("empty.so"), contents: Data()))
        // libcurl-gnutls is the other libcurl camroll takes: hidden too, where it is there.
        let gnutls = URL(fileURLWithPath: "/usr/lib/x86_64-linux-gnu/libcurl-gnutls.so.4").resolvingSymlinksInPath().path
        let script = """
            mount --bind '\(dir.file("empty.so"))' '\(library)' || exit 99
            [ ! -e '\(gnutls)' ] || mount --bind '\(dir.file("empty.so"))' '\(gnutls)' || exit 98
            exec '\(CamrollBinary.path)' --version
            """
        let result = try CamrollBinary.runProgram(["/usr/bin/unshare", "--mount", "sh", "-c", script])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.split(separator: "\n").contains("libcurl (not installed)"), "\(result.stdout)")
        #expect(result.stdout.contains("\nlibspng ") && !result.stdout.contains("libspng (not installed)"))
    }

    /// The man page's DESCRIPTION names every source, what comes out, and every command.
    @Test func theManPageDescribesEverySourceOutputAndCommand() throws {
        let page = try CamrollBinary.run(["__generate", "man"]).stdout
        let description = try #require(page.components(separatedBy: ".SH DESCRIPTION\n").dropFirst().first?
            .components(separatedBy: ".SH COMMANDS").first)
        for words in ["/dev/videoN", ".B pattern", ".BI file: PATH", "a JPEG", "a PNG", "http://", "https://", "\\-\\-offline",
                      ".B JPEG files", "\\-o \\-\\fR sends the JPEG to standard output", ".B the catalog", "thumbnail",
                      "\\-\\-json", "CSV", "SVG or PNG", "MB/s (the bytes saved over the saving time)"] {
            #expect(description.contains(words), "DESCRIPTION lacks \(words)")
        }
        for command in CommandTable.commands {
            #expect(description.contains(".TP\n.B \(command.name)\n"), "DESCRIPTION lacks \(command.name)")
        }
    }

    /// bash splits `file:/tm` at the colon (COMP_WORDBREAKS has ':'): the completion joins it
    /// again and answers with what bash replaces, so that the line reads `file:/tmp/`. Without
    /// ':' in COMP_WORDBREAKS, the whole word.
    @Test func bashCompletesAFilePathAfterFileColon() throws {
        let dir = try TemporaryDirectory()
        try Completions.bash.write(toFile: dir.file("camroll.bash"), atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: dir.file("pictures/in"), withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: dir.file("pictures/photo.jpg"), contents: Data([0xFF, 0xD8])))
        let script = """
            source \(dir.file("camroll.bash"))
            complete -p camroll
            try() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _camroll; echo $(printf '%s\n' "${COMPREPLY[@]}" | sort); }
            [[ $COMP_WORDBREAKS == *:* ]] && echo "COMP_WORDBREAKS has :"
            cd \(dir.file("pictures"))
            try camroll snap -d file : /tm
            try camroll snap -d file :
            try camroll -d file : \(dir.file("pictures/p"))
            try camroll snap -d fil
            try camroll snap -o \(dir.file("pictures/i"))
            COMP_WORDBREAKS=${COMP_WORDBREAKS//:/}
            try camroll snap -d file:/tm
            """
        let result = try CamrollBinary.runProgram(["/bin/bash", "-c", script], environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) == [
            "complete -F _camroll camroll", "COMP_WORDBREAKS has :", "/tmp/", "in/ photo.jpg", dir.file("pictures/photo.jpg"), "file:",
            dir.file("pictures/in/"), "file:/tmp/", "",
        ], "\(result.stdout)\(result.stderr)")
    }

    /// `--set ` offers the chosen camera's control names (with '='), `-r ` its sizes, both asked
    /// of `camroll __complete` with the -d given; a camroll slower than 100 ms offers nothing,
    /// and the completion does not wait for it. (A stand-in camroll answers: there is no camera
    /// here; the VM suite asks vivid.)
    @Test func bashCompletesControlsAndSizesFromTheChosenCamera() throws {
        let dir = try TemporaryDirectory()
        try Completions.bash.write(toFile: dir.file("camroll.bash"), atomically: true, encoding: .utf8)
        for (name, delay) in [("quick", "0"), ("slow", "2")] {
            try FileManager.default.createDirectory(atPath: dir.file(name), withIntermediateDirectories: true)
            try """
                #!/bin/sh
                echo "$*" >> \(dir.file("asked"))
                sleep \(delay)
                case "$2" in controls) printf 'brightness\\ncontrast\\n' ;; sizes) printf '1280x720\\n640x480\\n' ;; esac
                """.write(toFile: dir.file("\(name)/camroll"), atomically: true, encoding: .utf8)
            chmod(dir.file("\(name)/camroll"), 0o755)
        }
        let script = """
            source \(dir.file("camroll.bash"))
            try() { COMP_WORDS=("$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 )); COMPREPLY=(); _camroll; echo "${COMPREPLY[*]}"; }
            PATH=\(dir.file("quick")):$PATH
            try camroll snap -d /dev/video3 --set ""
            try camroll --set co
            try camroll pick -d 2 -r ""
            try camroll snap -d pattern --set ""
            PATH=\(dir.file("slow")):${PATH#*:}
            start=$(date +%s%N)
            try camroll snap -d /dev/video3 --set ""
            echo $(( ($(date +%s%N) - start) / 1000000 < 1000 ))
            """
        let result = try CamrollBinary.runProgram(["/bin/bash", "-c", script], environment: ["PATH": "/usr/bin:/bin"])
        #expect(result.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) == [
            "brightness= contrast=", "contrast=", "1280x720 640x480", "", "", "1", "",
        ], "\(result.stdout)\(result.stderr)")
        let asked = try String(contentsOfFile: dir.file("asked"), encoding: .utf8)
        #expect(asked == "__complete controls -d /dev/video3\n__complete controls\n__complete sizes -d 2\n__complete controls -d /dev/video3\n",
                "\(asked)")
        // camroll's own answer for a source that is not a camera: nothing, status 0.
        for source in ["pattern", "file:/tmp/a.jpg", "/dev/null"] {
            let own = try CamrollBinary.run(["__complete", "controls", "-d", source])
            #expect(own.status == 0 && own.stdout.isEmpty, "\(source): \(own.stdout)\(own.stderr)")
        }
    }

    /// `{frame}` names each frame's one save: `--frames 2` is two files. Copies of one frame
    /// still need {seq} or {uuid}.
    @Test func aFrameTemplateNamesEachFramesSave() throws {
        let dir = try TemporaryDirectory()
        let result = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "--frames", "2", "-o", dir.file("t{frame}.jpg"),
                                            "--db", dir.file("c.db")])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(dir.files(in: "").map { PathText.lastComponent(of: $0) }.filter { $0.hasSuffix(".jpg") } == ["t1.jpg", "t2.jpg"])
        let copies = try CamrollBinary.run(["-d", "pattern", "-r", "64x48", "--frames", "2", "-n", "2", "-o", dir.file("u{frame}.jpg"),
                                            "--db", dir.file("c.db")])
        #expect(copies.status == 64 && copies.stderr.contains("gives every copy of a frame the same name"), "\(copies.stderr)")
    }

    /// One value an option: `-d pattern -d file:x` was the last silently; now an error that
    /// names both. `--set` may be repeated.
    @Test(arguments: [
        (["snap", "-d", "pattern", "-d", "file:x.jpg"], "'-d' given twice: 'pattern' and 'file:x.jpg'; give one"),
        (["snap", "-o", "a.jpg", "--output=b.jpg"], "'-o' and '--output' both given: 'a.jpg' and 'b.jpg'; give one"),
        (["snap", "-r", "64x48", "-r", "32x24"], "'-r' given twice: '64x48' and '32x24'; give one"),
        (["snap", "-q", "80", "-q90"], "'-q' given twice: '80' and '90'; give one"),
        (["pick", "--db", "a.db", "--db", "b.db"], "'--db' given twice: 'a.db' and 'b.db'; give one"),
        (["list", "--db", "a.db", "--db", "b.db"], "'--db' given twice: 'a.db' and 'b.db'; give one"),
        (["formats", "-d", "0", "-d", "1"], "'-d' given twice: '0' and '1'; give one"),
    ])
    func anOptionGivenTwiceIsAnErrorNamingBoth(arguments: [String], message: String) throws {
        let result = try CamrollBinary.run(arguments)
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.hasPrefix("camroll: error: \(message)\n"), "\(result.stderr)")
    }

    @Test func setMayBeRepeated() throws {
        let result = try CamrollBinary.run(["snap", "--set", "brightness=1", "--set", "contrast=2", "-d", "pattern"])
        #expect(result.status == 64 && result.stderr.contains("'pattern' has no controls"), "\(result.stderr)")
    }
}
