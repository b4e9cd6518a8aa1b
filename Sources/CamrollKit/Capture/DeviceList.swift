import FoundationEssentials
import Glibc

/// The capture devices of this machine, as `camroll devices` shows them.
public enum DeviceList {
    public struct Entry: Sendable {
        public var path: String
        public var capabilities: V4L2Device.Capabilities?
        public var byID: [String]
        public var byPath: [String]
        public var access: AccessCheck.Finding
        public var openError: String?
    }

    /// /dev/video0, /dev/video1, … in numeric order.
    public static func videoNodes() -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/dev")) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix("video"), let number = Int(name.dropFirst(5)) else { return nil }
            return (number, "/dev/" + name)
        }.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// Every node that can capture video; metadata-only nodes (the second node of a UVC camera)
    /// are left out. Nodes this user cannot open are listed, with why.
    public static func captureDevices() -> [Entry] {
        videoNodes().compactMap { path in
            let access = AccessCheck.examine(path: path)
            var entry = Entry(path: path, capabilities: nil, byID: links(in: "/dev/v4l/by-id", to: path),
                              byPath: links(in: "/dev/v4l/by-path", to: path), access: access, openError: nil)
            guard access.ok else { return entry }
            do {
                let caps = try V4L2Device(path: path, throughLibv4l2: false).capabilities()
                guard caps.canCapture else { return nil }
                entry.capabilities = caps
            } catch let error as CamrollError {
                if error.exitCode == .noInput { return nil }
                entry.openError = error.message
            } catch {
                entry.openError = "\(error)"
            }
            return entry
        }
    }

    /// The first device that can capture and stream, for `snap` without `-d`.
    public static func firstCamera() -> String? {
        captureDevices().first { $0.capabilities?.canStream == true || !$0.access.ok }?.path
    }

    static func links(in directory: String, to path: String) -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.sorted().compactMap { name in
            let link = directory + "/" + name
            return URL(fileURLWithPath: link).resolvingSymlinksInPath().path == path ? link : nil
        }
    }
}
