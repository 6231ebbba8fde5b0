extension HTTPURL {
    /// The URL of `s3://BUCKET/KEY` (`text`) through `configuration`'s endpoint, path-style or
    /// virtual-hosted as it says, with ``s3`` set.
    /// - Throws: ``PinFetchError/Code/usage`` for a malformed `s3://` URL or endpoint.
    static func objectStore(_ text: String, _ configuration: S3Configuration) throws(PinFetchError) -> HTTPURL {
        let location = try S3Location(text, region: configuration.region)
        var url: HTTPURL
        do throws(PinFetchError) {
            url = try HTTPURL(
                location.url(endpoint: configuration.endpoint, virtualHosted: configuration.virtualHosted)
            )
        } catch {
            throw PinFetchError(
                .usage,
                "the S3 endpoint '\(configuration.endpoint)' is not an http(s) URL: \(error.message)"
            )
        }
        url.s3 = location
        return url
    }
}
