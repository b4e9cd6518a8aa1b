@testable import CamrollKit
import Glibc
import Testing

/// The window's camera menu, on sources that record when they are closed: the camera left is
/// closed before the next is opened, although the command that opened it still holds a
/// reference (on vivid it went on streaming after a switch, and the driver refused anyone else).
@Suite struct PickerSwitchTests {
    final class Source: FrameSource {
        let deviceName: String
        let origin = PhotoOrigin.testPattern
        private let pattern = TestPattern(resolution: Resolution(width: 160, height: 120))
        private(set) var closed = false
        init(_ name: String) { deviceName = name }
        func nextFrame() throws -> Frame {
            guard !closed else { throw CamrollError(.ioError, "\(deviceName): a frame asked of a closed source") }
            return try pattern.nextFrame()
        }
        func close() { closed = true }
    }

    /// Plays its actions, one batch after each frame shown (as a user acts on what they see),
    /// then cancels.
    final class Screen: PickerScreen {
        var script: [[PickerAction]]
        var shownFrom: [String] = []
        private var shownSinceLastBatch = true
        init(_ script: [[PickerAction]]) { self.script = script }
        func actions(waiting microseconds: Int) throws -> [PickerAction] {
            guard shownSinceLastBatch else {
                usleep(UInt32(clamping: microseconds))
                return []
            }
            shownSinceLastBatch = false
            return script.isEmpty ? [.cancel] : script.removeFirst()
        }
        func show(_ frame: Frame, _ view: PickerView) throws {
            shownFrom.append(view.source)
            shownSinceLastBatch = true
        }
        func sourcesChanged(_ sources: PickerSources, controls: ControlPanel?) {}
    }

    @Test func switchingCamerasClosesTheOneLeftBeforeOpeningTheNext() throws {
        let first = Source("/dev/video0")
        var opened: [Source] = [first]
        var closedWhenOpened: [Bool] = []
        let screen = Screen([[.switchCamera(1)], [.switchCamera(0)], [.shutter], [.keep]])
        let picker = Picker(
            source: Picker.OpenSource(source: first, description: "/dev/video0", controls: nil, sizes: [], resolution: nil),
            screen: screen, cancellation: Cancellation(), copies: 1,
            sources: PickerSources(
                cameras: [.init(label: "one", device: .camera("/dev/video0")), .init(label: "two", device: .camera("/dev/video1"))],
                selectedCamera: 0, sizes: [], selectedSize: -1),
            reopen: { device, _ in
                closedWhenOpened.append(opened.last?.closed ?? false)
                guard case .camera(let path) = device else { throw CamrollError(.failure, "not a camera") }
                let source = Source(path)
                opened.append(source)
                return Picker.OpenSource(source: source, description: path, controls: nil, sizes: [], resolution: nil)
            })
        guard case .keep(_, let from) = try picker.run() else {
            Issue.record("the shot was not kept")
            return
        }
        #expect(closedWhenOpened == [true, true], "each camera left was closed before the next was opened")
        #expect(opened.map(\.deviceName) == ["/dev/video0", "/dev/video1", "/dev/video0"])
        #expect(opened.map(\.closed) == [true, true, false], "the camera in use stays open")
        #expect(from.deviceName == "/dev/video0" && from === opened.last)
        #expect(screen.shownFrom.contains("/dev/video1") && screen.shownFrom.last == "/dev/video0")
    }
}
