import CCurl
import Glibc

/// One GET over HTTP(S) with libcurl (loaded when first needed): redirects followed, a
/// connection timeout, a stall timeout, a size limit, a conditional request when a cached copy
/// exists. Every way it can fail is one `CamrollError` with its own exit status.
struct HTTPFetcher {
    struct Response {
        var status: Int
        var body: [UInt8]
        var etag: String?
        var lastModified: String?
        var contentType: String?
    }

    /// The largest picture downloaded (a 100-megapixel JPEG is far smaller).
    static let maxBytes = 256 << 20
    static let connectTimeoutMilliseconds = 10_000
    /// The slowest a download may go, in bytes a second over `stallSeconds`: a server sending a
    /// few bytes a second once held a 23 kB download for two hours.
    static let minimumBytesPerSecond = 1024
    /// The longest a whole download may take without --timeout.
    static let defaultDeadlineMilliseconds = 60_000

    var stallSeconds: Int
    /// The whole download's time limit: --timeout, else `defaultDeadlineMilliseconds`.
    var deadlineMilliseconds = Self.defaultDeadlineMilliseconds
    /// `user:password` for the request (`--user-from`); nil: the URL's own, else ~/.netrc's.
    var credentials: String?
    var cancellation: Cancellation?
    /// Called with bytes received and expected (0: unknown) as data arrives.
    var progress: ((Int, Int) -> Void)?

    /// Lives for one transfer: what the C progress callback reaches through its context pointer.
    private final class Observer {
        let cancellation: Cancellation?
        let progress: ((Int, Int) -> Void)?
        init(cancellation: Cancellation?, progress: ((Int, Int) -> Void)?) {
            self.cancellation = cancellation
            self.progress = progress
        }
    }

    /// `url` as given (with any password, which only the request carries); messages name it
    /// without (`WebAddress`).
    func get(_ url: String, ifNoneMatch: String? = nil, ifModifiedSince: String? = nil) throws -> Response {
        let shown = WebAddress.withoutPassword(url)
        var transfer = ccurl_transfer()
        transfer.max_bytes = Self.maxBytes
        let observer = Observer(cancellation: cancellation, progress: progress)
        transfer.context = Unmanaged.passUnretained(observer).toOpaque()
        transfer.progress = { context, received, expected in
            let observer = Unmanaged<Observer>.fromOpaque(context!).takeUnretainedValue()
            if observer.cancellation?.isCancelled == true { return 1 }
            observer.progress?(Int(received), Int(expected))
            return 0
        }
        let userpwd = credentials.map { strdup($0) } ?? nil
        defer {
            if let userpwd {
                memset(userpwd, 0, strlen(userpwd))
                free(userpwd)
            }
        }
        transfer.userpwd = UnsafePointer(userpwd)
        defer { ccurl_release(&transfer) }
        let ran = withExtendedLifetime(observer) {
            ccurl_fetch(
                &transfer, url, ifNoneMatch, ifModifiedSince, Int(Self.connectTimeoutMilliseconds), stallSeconds,
                Self.minimumBytesPerSecond, deadlineMilliseconds, Help.version.replacing(" ", with: "/"))
        }
        let message = withUnsafeBytes(of: transfer.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        guard ran == 0 else {
            throw CamrollError(
                .unavailable, "cannot fetch \(shown): libcurl is not available (\(message))",
                hint: "Install it: apt install libcurl4.")
        }
        if transfer.curl_code != CURLE_OK.rawValue {
            if cancellation?.isCancelled == true { throw CancelledWhileWaiting() }
            if transfer.headers_too_large != 0 {
                throw CamrollError(
                    .protocolError, "cannot fetch \(shown): the server's response headers are over \(CCURL_MAX_HEADER_BYTES >> 10) kB (no picture server's are): not downloaded")
            }
            throw Self.error(CURLcode(UInt32(transfer.curl_code)), tooLarge: transfer.too_large != 0, url: shown,
                             message: WebAddress.withoutPassword(message), deadline: deadlineMilliseconds)
        }
        func text<T>(_ field: T) -> String? {
            let value = withUnsafeBytes(of: field) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            return value.isEmpty ? nil : value
        }
        return Response(
            status: transfer.status,
            body: transfer.body == nil ? [] : Array(UnsafeBufferPointer(start: transfer.body, count: transfer.body_size)),
            etag: text(transfer.etag), lastModified: text(transfer.last_modified), contentType: text(transfer.content_type))
    }

    /// libcurl's failures as the user meets them, each with its sysexits status.
    static func error(_ code: CURLcode, tooLarge: Bool, url: String, message: String, deadline: Int = defaultDeadlineMilliseconds) -> CamrollError {
        if tooLarge || code == CURLE_FILESIZE_EXCEEDED {
            return CamrollError(.dataError, "\(url) is larger than \(maxBytes >> 20) MB: not downloaded")
        }
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            return CamrollError(.noHost, "cannot fetch \(url): \(message)", hint: "Check the host name, or use the cached copy with --offline.")
        case CURLE_COULDNT_CONNECT:
            return CamrollError(.unavailable, "cannot fetch \(url): \(message)", hint: "Is the server running? The cached copy, if any: --offline.")
        case CURLE_OPERATION_TIMEDOUT where message.hasPrefix("Operation too slow"):
            return CamrollError(
                .frameTimeout, "cannot fetch \(url): timed out, the server sending under \(minimumBytesPerSecond) bytes a second (\(message))",
                hint: "Try again later, or use the cached copy with --offline.")
        case CURLE_OPERATION_TIMEDOUT:
            return CamrollError(
                .frameTimeout, "cannot fetch \(url): timed out (\(message); the whole download may take \(Format.fixed(Double(deadline) / 1000, 0)) s)",
                hint: "Try again, or raise --timeout.")
        case CURLE_OUT_OF_MEMORY:
            // What libcurl says of a single header over its 100 kB limit (a server's 1 MB header).
            return CamrollError(
                .protocolError, "cannot fetch \(url): the server's response has a header too large to read (over 100 kB), or memory ran out: not downloaded")
        case CURLE_TOO_MANY_REDIRECTS:
            return CamrollError(.protocolError, "cannot fetch \(url): too many redirects (a redirect loop?)")
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_GOT_NOTHING:
            return CamrollError(.ioError, "cannot fetch \(url): the download was cut short (\(message)); nothing saved")
        case CURLE_UNSUPPORTED_PROTOCOL:
            return CamrollError(.protocolError, "cannot fetch \(url): \(message) (only http and https are followed)")
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CONNECT_ERROR, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CACERT_BADFILE:
            return CamrollError(.protocolError, "cannot fetch \(url): TLS failed: \(message)")
        default:
            return CamrollError(.protocolError, "cannot fetch \(url): \(message)")
        }
    }

    /// An HTTP status other than 200 and 304, as an error.
    static func error(status: Int, url: String) -> CamrollError {
        switch status {
        case 404, 410: CamrollError(.noInput, "\(url): not found (HTTP \(status))")
        case 401, 403: CamrollError(.permissionDenied, "\(url): access refused (HTTP \(status))")
        case 500...599: CamrollError(.unavailable, "\(url): the server failed (HTTP \(status))", hint: "Try again later, or use the cached copy with --offline.")
        default: CamrollError(.protocolError, "\(url): unexpected answer HTTP \(status)")
        }
    }
}
