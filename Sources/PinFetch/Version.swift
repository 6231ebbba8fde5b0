/// The version of this package, as `pinfetch --version` prints it.
public enum PinFetchVersion {
    /// Semantic version string.
    public static let current = "0.1.0"
}
