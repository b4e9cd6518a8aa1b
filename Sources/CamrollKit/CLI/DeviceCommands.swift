import FoundationEssentials
import Glibc

/// `camroll devices`, `formats`, `check` and `controls`: what cameras there are, what they can
/// do, and whether this user may use them.
struct DeviceCommands {
    let command: String
    var device: String?
    var global = GlobalOptions()
    let console: Console

    init(command: String, arguments: [String], environment: [String: String]) throws {
        self.command = command
        var scanner = ArgumentScanner(arguments, command: command)
        var global = GlobalOptions()
        var device: String?
        let spec = CommandTable.command(command) ?? CommandTable.devices
        while let parsed = try scanner.next(in: spec) {
            switch parsed {
            case .positional(let word):
                throw scanner.usageError("unexpected argument '\(word)'")
            case .option(let option, let value, _):
                if try global.apply(option, value: value, scanner) { continue }
                switch option.id {
                case "--help": throw HelpRequest(command: command)
                case "--device":
                    let text = value ?? ""
                    guard case .camera(let path) = try DeviceChoice(parsing: text) else {
                        throw CamrollError.usage("'\(command)' needs a camera, not '\(text)'")
                    }
                    device = path
                default:
                    throw CommandTable.unhandled(option, in: command)
                }
            }
        }
        try global.validate(scanner)
        self.device = device
        self.global = global
        self.console = Console(colorMode: global.color, environment: environment)
    }

    func run() throws -> ExitCode {
        switch command {
        case "devices": return listDevices()
        case "formats": return try listFormats()
        case "controls": return try listControls()
        default: return check()
        }
    }

    /// The device named with -d, or the first camera.
    private func chosenDevice() throws -> String {
        if let device { return device }
        guard let first = DeviceList.firstCamera() else {
            throw CamrollError(.unavailable, "no camera found",
                               hint: "Name one with -d /dev/videoN; 'camroll devices' lists them.")
        }
        return first
    }

    private func listDevices() -> ExitCode {
        let devices = DeviceList.captureDevices()
        if global.json {
            let objects: [[String: Any]] = devices.map { entry in
                var object: [String: Any] = [
                    "path": entry.path, "by_id": entry.byID, "by_path": entry.byPath, "accessible": entry.access.ok,
                ]
                if let caps = entry.capabilities {
                    object["card"] = caps.card
                    object["driver"] = caps.driver
                    object["bus"] = caps.bus
                    object["streaming"] = caps.canStream
                }
                if !entry.access.ok { object["problem"] = entry.access.message }
                if let error = entry.openError { object["problem"] = error }
                return object
            }
            console.outRaw(JSONLine.encode(objects))
            return .success
        }
        guard !devices.isEmpty else {
            console.out("no cameras found\n")
            console.err("Use '-d pattern' for the built-in test pattern.\n")
            return .success
        }
        var text = ""
        for entry in devices {
            if let caps = entry.capabilities {
                text += "\(entry.path)  \(caps.card)  (driver \(caps.driver), \(caps.bus))\n"
            } else {
                text += "\(entry.path)\n"
            }
            for link in entry.byID { text += "    by-id:   \(link)\n" }
            for link in entry.byPath { text += "    by-path: \(link)\n" }
            if !entry.access.ok {
                text += "    access:  no: \(entry.access.message)\n"
            } else if let error = entry.openError {
                text += "    access:  \(error)\n"
            } else {
                text += "    access:  ok\n"
            }
        }
        console.out(text)
        return .success
    }

    private func listFormats() throws -> ExitCode {
        let (path, device) = try openChosenDevice()
        let formats = device.formats().filter { !$0.emulated }
        if global.json {
            let objects: [[String: Any]] = formats.map { format in
                [
                    "fourcc": format.format.code, "description": format.description, "compressed": format.compressed,
                    "sizes": device.sizes(for: format.format).map { size in
                        ["width": size.width, "height": size.height,
                         "fps": device.frameRates(for: format.format, size: size)] as [String: Any]
                    },
                ]
            }
            console.outRaw(JSONLine.encode(["device": path, "formats": objects] as [String: Any]))
            return .success
        }
        var text = "\(path):\n"
        for format in formats {
            text += "  \(format.format.code.padded(to: 5)) \(format.description)"
                + (format.compressed ? " (compressed)" : "") + "\n"
            for size in device.sizes(for: format.format) {
                let rates = device.frameRates(for: format.format, size: size).map { Format.significant($0, 4) }
                text += "        \(size)" + (rates.isEmpty ? "" : "  @ " + rates.joined(separator: ", ") + " fps") + "\n"
            }
        }
        console.out(text)
        return .success
    }

    private func listControls() throws -> ExitCode {
        let (path, device) = try openChosenDevice()
        let controls = CameraControls(device: device)
        let list = controls.list()
        if global.json {
            let objects: [[String: Any]] = list.map { control in
                var object: [String: Any] = [
                    "name": control.name, "label": control.label, "type": control.kind, "min": control.minimum,
                    "max": control.maximum, "step": control.step, "default": control.defaultValue,
                ]
                if let value = controls.value(of: control) { object["value"] = value }
                if !control.menu.isEmpty {
                    object["menu"] = control.menu.map { ["index": $0.index, "name": $0.name] as [String: Any] }
                }
                return object
            }
            console.outRaw(JSONLine.encode(["device": path, "controls": objects] as [String: Any]))
            return .success
        }
        var text = "\(path):\n"
        for control in list {
            let value = controls.value(of: control).map(String.init) ?? "-"
            text += "  \(control.name) (\(control.kind)) = \(value)"
            if control.kind == "int" || control.kind == "int64" {
                text += "  [\(control.minimum)…\(control.maximum)" + (control.step > 1 ? " step \(control.step)" : "")
                    + ", default \(control.defaultValue)]"
            }
            text += "\n"
            for entry in control.menu { text += "        \(entry.index): \(entry.name)\n" }
        }
        console.out(text)
        return .success
    }

    /// `camroll check`: each step of opening the camera, and the fix when one fails.
    private func check() -> ExitCode {
        let path: String
        do {
            path = try chosenDevice()
        } catch let error as CamrollError {
            console.error(error.message, hint: error.hint)
            return error.exitCode
        } catch {
            return .failure
        }
        let finding = AccessCheck.examine(path: path)
        guard finding.ok else {
            console.error(finding.message, hint: finding.hint)
            return finding.exitCode
        }
        do {
            let caps = try V4L2Device(path: path, throughLibv4l2: false).capabilities()
            guard caps.canCapture else {
                console.error("\(path) (\(caps.card)) cannot capture video",
                              hint: "It may be a metadata node; list the cameras with 'camroll devices'.")
                return .noInput
            }
            guard caps.canStream else {
                console.error("\(path) (\(caps.card)) does not support streaming I/O")
                return .unavailable
            }
            let holders = AccessCheck.processesHolding(path)
            var text = "\(path): ok: \(caps.card) (driver \(caps.driver), \(caps.bus)) can be opened by this user\n"
            if !holders.isEmpty {
                text += "note: also open in " + holders.map { "\($0.name) (pid \($0.pid))" }.joined(separator: ", ") + "\n"
            }
            if !global.quiet { console.out(text) }
            return .success
        } catch let error as CamrollError {
            console.error(error.message, hint: error.hint)
            return error.exitCode
        } catch {
            console.error("\(path): \(error)")
            return .failure
        }
    }

    /// The -d device (or the first camera), checked for access and opened as V4L2.
    private func openChosenDevice() throws -> (String, V4L2Device) {
        let path = try chosenDevice()
        let finding = AccessCheck.examine(path: path)
        if !finding.ok { throw CamrollError(finding.exitCode, finding.message, hint: finding.hint) }
        return (path, try V4L2Device(path: path))  // opening checks that it is V4L2

    }
}
