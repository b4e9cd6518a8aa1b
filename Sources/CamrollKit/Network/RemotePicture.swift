/// `-d http(s)://…`: a picture on the web, downloaded once and kept in the cache directory, the
/// catalog's `sources` table saying where and what it should hash to. Later runs ask the server
/// whether it changed (If-None-Match / If-Modified-Since) and use the cached copy on a 304, or
/// without asking at all with `--offline`. Nothing is cached or recorded until the download is
/// complete and decodes as a picture.
struct RemotePicture {
    let url: String
    let catalog: Catalog
    let cacheDirectory: String
    let fetcher: HTTPFetcher

    func open(offline: Bool) throws -> ImageFile {
        // What is kept and shown: never the password (`WebAddress`).
        let url = WebAddress.withoutPassword(self.url)
        let known = try catalog.source(url: url)
        // The cached copy counts only while it is the bytes that were recorded.
        let cached = known.flatMap { known in
            RegularFile.contents(known.cachedPath, limit: HTTPFetcher.maxBytes)
                .flatMap { XXH128.hex(of: $0) == known.xxh128 ? $0 : nil }
        }
        if offline {
            guard let cached else {
                throw CamrollError(
                    .noInput, "no cached copy of \(url)" + (known == nil ? "" : " (the cached file is gone or changed)"),
                    hint: "Fetch it once without --offline.")
            }
            return try ImageFile(bytes: cached, name: url, subject: url)
        }

        let response = try fetcher.get(
            self.url, ifNoneMatch: cached == nil ? nil : known?.etag, ifModifiedSince: cached == nil ? nil : known?.lastModified)
        if response.status == 304, let cached, let known {
            try catalog.recordSource(known, checkedOnly: true)
            return try ImageFile(bytes: cached, name: url, subject: url)
        }
        guard response.status == 200 else { throw HTTPFetcher.error(status: response.status, url: url) }

        let picture: ImageFile
        do {
            picture = try ImageFile(bytes: response.body, name: url, subject: "the download from \(url)")
        } catch let error as CamrollError where error.exitCode == .dataError {
            throw CamrollError(
                .dataError, error.message + "; nothing saved",
                hint: response.contentType.map { "The server sent Content-Type: \($0.printable)." })
        }
        let path = cacheDirectory + "/" + XXH128.hex(of: Array(url.utf8)) + (picture.isJPEG ? ".jpg" : ".png")
        do {
            try response.body.withUnsafeBytes { bytes in
                _ = try AtomicFileWriter(existing: .replace, sync: false).write([bytes], to: path)
            }
        } catch let error as CamrollError {
            // Said of the cache, which the user may not know camroll keeps, and where it is set.
            throw CamrollError(error.exitCode, "cannot keep the download in the cache: " + error.message,
                               hint: "The cache is $XDG_CACHE_HOME/camroll (else ~/.cache/camroll): point XDG_CACHE_HOME at a directory you can write.")
        }
        try catalog.recordSource(
            Catalog.Source(
                url: url, cachedPath: path, bytes: response.body.count, xxh128: XXH128.hex(of: response.body),
                etag: response.etag, lastModified: response.lastModified))
        return picture
    }
}
