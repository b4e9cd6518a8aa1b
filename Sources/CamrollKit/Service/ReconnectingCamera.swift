import FoundationEssentials
import Glibc

/// Which camera a node is: its driver, card name and bus (the USB port, or the platform
/// device), and its /dev/v4l/by-id names (which carry a USB camera's serial number). A camera
/// that comes back after an unplug is taken again only if all of them match: not "whatever is
/// at /dev/video0 now".
public struct CameraIdentity: Sendable, Equatable, CustomStringConvertible {
    public var driver: String
    public var card: String
    public var bus: String
    public var byID: [String]

    init(capabilities: V4L2Device.Capabilities, path: String) {
        let node = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        self.init(driver: capabilities.driver, card: capabilities.card, bus: capabilities.bus,
                  byID: DeviceList.links(in: "/dev/v4l/by-id", to: node))
    }

    public init(driver: String, card: String, bus: String, byID: [String]) {
        self.driver = driver
        self.card = card
        self.bus = bus
        self.byID = byID
    }

    public var description: String { "\(card) (\(driver), \(bus)\(byID.first.map { ", " + $0 } ?? ""))" }
}

/// A camera that may be unplugged: when it vanishes (ENODEV, its node gone), `nextFrame` logs
/// it, waits for the same camera (`CameraIdentity`) to come back under the name it was opened
/// by — a by-id, by-path or /dev/camroll name is resolved again at each try — reopens it with
/// the same request (format, size, rate, controls), and returns its next frame. Tries back off
/// from half a second to 5 s; after `bound` (nil: forever) the unplug ends the run as before.
/// Other faults pass through.
final class ReconnectingCamera: FrameSource {
    private var camera: V4L2Camera?
    private let path: String
    private let request: V4L2Camera.Request
    private let cancellation: Cancellation
    private let identity: CameraIdentity
    private let boundMicroseconds: Int?
    /// Told of each unplug and return, and of each wait (for the watchdog).
    var onEvent: (Event) -> Void = { _ in }
    /// Whether the run's end came (`--for`, `--until`) while the camera is away: the wait ends
    /// then, and the run with it, as it would have at that slot.
    var shouldEnd: () -> Bool = { false }

    enum Event {
        case unplugged(String)
        case waiting
        case otherCamera(CameraIdentity)
        case reconnected(awayMicroseconds: Int, tries: Int)
    }

    let deviceName: String
    var origin: PhotoOrigin { camera?.origin ?? lastOrigin }
    private var lastOrigin: PhotoOrigin

    init(camera: V4L2Camera, path: String, request: V4L2Camera.Request, cancellation: Cancellation, boundMicroseconds: Int?) {
        self.camera = camera
        self.path = path
        self.request = request
        self.cancellation = cancellation
        self.identity = camera.identity
        self.boundMicroseconds = boundMicroseconds
        self.deviceName = camera.deviceName
        self.lastOrigin = camera.origin
    }

    /// Lets the camera go now (FrameSource's promise), whoever still holds this object.
    func close() {
        camera?.close()
        camera = nil
    }

    var current: V4L2Camera? { camera }

    /// Tries back off to one every 5 s: trying costs nothing, and a camera back is used at once.
    static let longestPause = 5_000_000

    static func identity(at path: String) -> CameraIdentity? {
        guard let device = try? V4L2Device(path: path, throughLibv4l2: false), let caps = try? device.capabilities() else { return nil }
        return CameraIdentity(capabilities: caps, path: path)
    }

    static func isUnplug(_ error: Error) -> Bool {
        guard let error = error as? CamrollError else { return false }
        return error.systemErrno == ENODEV || (error.exitCode == .noInput && error.message.contains("no camera answers"))
    }

    func nextFrame() throws -> Frame {
        if let camera {
            do {
                return try camera.nextFrame()
            } catch where Self.isUnplug(error) {
                try reconnect(after: error)
            }
        } else {
            try reconnect(after: CamrollError(.ioError, "\(deviceName) was disconnected", systemErrno: ENODEV))
        }
        return try nextFrame()
    }

    private func reconnect(after error: Error) throws {
        if let camera {
            lastOrigin = camera.origin
            // Closed at once: the driver (vivid's, a USB camera's) is freed only once no one holds it.
            camera.close()
        }
        camera = nil
        onEvent(.unplugged((error as? CamrollError)?.message ?? "\(error)"))
        let began = monotonicMicroseconds()
        var pause = 500_000
        var tries = 0
        var reportedOther: CameraIdentity?
        while true {
            if let boundMicroseconds, monotonicMicroseconds() - began >= boundMicroseconds { throw error }
            let wake = monotonicMicroseconds() + pause
            while monotonicMicroseconds() < wake {
                // Not cancelled: the run's status is `completed` (BatchSaver).
                if cancellation.isCancelled || shouldEnd() { throw CancelledWhileWaiting() }
                usleep(50_000)
            }
            onEvent(.waiting)
            tries += 1
            pause = min(pause * 2, Self.longestPause)
            guard access(path, F_OK) == 0 else { continue }
            // Which camera is there, asked before it is opened for streaming (and warmed up).
            guard let found = Self.identity(at: path) else { continue }
            guard found == identity else {
                if reportedOther != found { onEvent(.otherCamera(found)) }
                reportedOther = found
                continue
            }
            guard let reopened = try? V4L2Camera(path: path, request: request, cancellation: cancellation) else { continue }
            guard reopened.identity == identity else {
                reopened.close()
                continue
            }
            camera = reopened
            onEvent(.reconnected(awayMicroseconds: monotonicMicroseconds() - began, tries: tries))
            return
        }
    }
}
