/// The partial as it stood when another mirror's bytes were first appended (``Partial/handOver``).
struct HandOver {
    /// Bytes of the partial from the mirror that served them first.
    var offset: Int64
    /// The digest's state after those bytes.
    var digestState: [UInt8]
    var validator: Validator?
    /// That mirror (``PartialState/source``).
    var source: String?
    /// Where a redirect led that mirror's answer (``PartialState/location``).
    var location: String?
    var totalLength: Int64?
    var resumable: Bool
    var mixedSources: Bool
}
