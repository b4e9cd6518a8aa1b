import FoundationEssentials
import Glibc

/// Why a camera cannot be opened, in words a user can act on, and the exact fix.
public enum AccessCheck {
    public struct Finding: Sendable {
        public var ok: Bool
        public var exitCode: ExitCode
        public var message: String
        public var hint: String?
    }

    /// Looks at the node before opening it: exists, is a character device, can this user open
    /// it read-write — and if not, why.
    public static func examine(path: String) -> Finding {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == EACCES {
                return Finding(ok: false, exitCode: .permissionDenied, message: "cannot look at \(path): permission denied", hint: nil)
            }
            return missing(path)
        }
        guard (status.st_mode & S_IFMT) == S_IFCHR else {
            return Finding(ok: false, exitCode: .noInput, message: "\(path) is not a camera (not a character device)",
                           hint: "List the cameras with 'camroll devices'.")
        }
        if access(path, R_OK | W_OK) != 0 {
            return permissionDenied(path, status: status)
        }
        return Finding(ok: true, exitCode: .success, message: "\(path): this user can open it", hint: nil)
    }

    /// The error for a failed open(2) of a camera node.
    static func openError(path: String, errno code: Int32) -> CamrollError {
        switch code {
        case ENOENT, ENODEV, ENXIO:
            // A node that is there with nothing answering behind it is not "no such device" with
            // a list of the cameras (`-d /dev/tty` without a terminal was told that).
            var status = stat()
            if code != ENOENT, stat(path, &status) == 0 {
                guard (status.st_mode & S_IFMT) == S_IFCHR, characterDeviceMajor(status.st_rdev) == videoForLinuxMajor else {
                    return notACamera(path)
                }
                return CamrollError(.noInput, "cannot open \(path): no camera answers behind it (unplugged, or its driver unloaded)",
                                    hint: "List the cameras with 'camroll devices'.")
            }
            let finding = missing(path)
            return CamrollError(finding.exitCode, finding.message, hint: finding.hint)
        case EACCES, EPERM:
            var status = stat()
            _ = stat(path, &status)
            let finding = permissionDenied(path, status: status)
            return CamrollError(finding.exitCode, finding.message, hint: finding.hint)
        case EBUSY:
            return busy(path)
        default:
            return CamrollError(.noInput, "cannot open \(path): \(String(cString: strerror(code)))")
        }
    }

    /// A node that opens (or is there) but is no V4L2 device: /dev/null, a terminal.
    static func notACamera(_ path: String) -> CamrollError {
        CamrollError(.noInput, "\(path) is not a camera (not a V4L2 device)", hint: "List the cameras with 'camroll devices'.")
    }

    /// The major number of every video4linux node (the kernel's devices.txt).
    static let videoForLinuxMajor: UInt64 = 81

    /// The major number of a device number, as glibc's `major()` (a macro Swift cannot call)
    /// takes it apart.
    static func characterDeviceMajor(_ device: dev_t) -> UInt64 {
        let number = UInt64(device)
        return ((number >> 8) & 0xfff) | ((number >> 32) & ~0xfff)
    }

    static func missing(_ path: String) -> Finding {
        let present = DeviceList.videoNodes()
        var hint: String
        if present.isEmpty {
            hint = "There is no /dev/video* device at all."
            if runningInContainer() {
                hint += " This looks like a container: start it with --device /dev/video0."
            }
            hint += " Use '-d pattern' for the built-in test pattern."
        } else {
            hint = "Video devices here: " + present.joined(separator: ", ") + " (see 'camroll devices')."
        }
        return Finding(ok: false, exitCode: .noInput, message: "no such device: \(path)", hint: hint)
    }

    static func permissionDenied(_ path: String, status: stat) -> Finding {
        let user = userName(getuid()) ?? "uid \(getuid())"
        let group = groupName(status.st_gid) ?? "gid \(status.st_gid)"
        let groups = currentGroups()
        let inGroup = groups.contains(status.st_gid)
        let mode = String(status.st_mode & 0o777, radix: 8)
        var message = "permission denied: \(path) (mode \(mode), group \(group))"
        var hint: String
        if !inGroup && status.st_mode & 0o060 == 0o060 {
            let names = groups.compactMap(groupName).joined(separator: ", ")
            message += "; \(user) is not in group '\(group)' (groups: \(names.isEmpty ? "none" : names))"
            hint = "Fix: sudo usermod -aG \(group) \(user), then log out and in again."
        } else {
            message += "; \(user) has no access to it"
            hint = "Fix: install camroll's udev rule, which gives group 'video' and the seat's user access:\n"
                + "  sudo install -m 644 udev/70-camroll.rules /etc/udev/rules.d/ && "
                + "sudo udevadm control --reload && sudo udevadm trigger --subsystem-match=video4linux\n"
                + "then: sudo usermod -aG video \(user), and log out and in again."
        }
        if ProcessInfo.processInfo.environment["SSH_CONNECTION"] != nil {
            hint += "\nOver ssh there is no seat ACL (uaccess): group membership is what grants access."
        }
        return Finding(ok: false, exitCode: .permissionDenied, message: message, hint: hint)
    }

    /// EBUSY: names the processes that hold the device open, from /proc/*/fd.
    static func busy(_ path: String) -> CamrollError {
        let holders = processesHolding(path)
        let names = holders.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", ")
        return CamrollError(
            .unavailable, "\(path) is busy" + (names.isEmpty ? "" : ": in use by \(names)"),
            hint: "Close the program using the camera, or wait for it to finish.")
    }

    public static func processesHolding(_ path: String) -> [(pid: Int32, name: String)] {
        let target = URL(fileURLWithPath: path).resolvingSymlinksInPath().path
        let me = getpid()
        var holders: [(Int32, String)] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != me else { continue }
            let fdDirectory = "/proc/\(entry)/fd"
            guard let fds = try? FileManager.default.contentsOfDirectory(atPath: fdDirectory) else { continue }
            let holds = fds.contains { fd in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdDirectory)/\(fd)")) == target
            }
            if holds {
                // A process names itself (prctl): printed as `printable`, never as it came.
                let name = (try? String(contentsOfFile: "/proc/\(entry)/comm", encoding: .utf8))?
                    .trimmed().printable ?? "?"
                holders.append((pid, name))
            }
        }
        return holders
    }

    static func userName(_ uid: uid_t) -> String? {
        guard let entry = getpwuid(uid) else { return nil }
        return String(cString: entry.pointee.pw_name)
    }

    static func groupName(_ gid: gid_t) -> String? {
        guard let entry = getgrgid(gid) else { return nil }
        return String(cString: entry.pointee.gr_name)
    }

    static func currentGroups() -> [gid_t] {
        let count = getgroups(0, nil)
        var groups = [gid_t](repeating: 0, count: Int(max(count, 0)))
        let filled = getgroups(count, &groups)
        var unique: [gid_t] = []
        for group in groups.prefix(Int(max(filled, 0))) + [getegid()] where !unique.contains(group) {
            unique.append(group)
        }
        return unique
    }

    static func runningInContainer() -> Bool {
        FileManager.default.fileExists(atPath: "/.dockerenv")
            || FileManager.default.fileExists(atPath: "/run/.containerenv")
            || ((try? String(contentsOfFile: "/proc/1/cgroup", encoding: .utf8)) ?? "").contains("docker")
    }
}
