extension HTTPURL {
    /// The URL of `s3://BUCKET/KEY` (`text`) through `configuration`'s endpoint, path-style or
    /// virtual-hosted as it says, with ``s3`` set.
    /// - Throws: ``PinFetchError/Code/usage`` for a malformed `s3://` URL or endpoint.
    static func objectStore(_ text: String, _ configuration: S3Configuration) throws(PinFetchError) -> HTTPURL {
        // Both end up in the URL: a region is a name (`eu-west-1`), an endpoint has no query.
        guard !configuration.region.isEmpty,
            configuration.region.utf8.allSatisfy({
                (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D
            })
        else {
            throw PinFetchError(
                .usage,
                "the AWS region '\(Redaction.text(String(configuration.region.prefix(40))))' is not a region name"
            )
        }
        guard !configuration.endpoint.contains("?"), !configuration.endpoint.contains("#") else {
            throw PinFetchError(
                .usage,
                "the S3 endpoint '\(Redaction.url(configuration.endpoint))' has a query or fragment"
            )
        }
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
