import PinFetch

extension ArgumentError {
    /// Options that do not go together, or one given without what it needs: each case is one of
    /// the checks made once every option is read (the pins' while they are read).
    enum Conflict: Equatable, Sendable {
        /// A second pin (`--sha256`, `--checksum`, `--checksum-file`), `option`, after `first`.
        case secondPin(String, after: String)
        /// `--checksum-file` after a pin or another `--checksum-file`, `first`.
        case checksumFileAfterPin(first: String)
        /// `--signature` twice.
        case secondSignature
        /// `--base-url` without `-i` (or a lone `--checksum-file`).
        case baseURLWithoutInputFile
        /// `--checksum-file` with `-i FILE --base-url`, where FILE is the checksum file.
        case checksumFileWithBaseURL
        /// A pin, `option`, with `--base-url`: each entry has its own.
        case pinWithBaseURL(String)
        /// `--signature` or `--trusted-key` with no checksum file to check.
        case signatureWithoutChecksumFile
        /// `--signature` without `--trusted-key`.
        case signatureWithoutKey
        /// `--signature -` while the checksum file is standard input too.
        case signatureAndChecksumFileFromStandardInput
        /// `--shard-count` without `--shard auto`.
        case shardCountWithoutAutomaticShard
        /// `--shard auto` without `--shard-count`.
        case automaticShardWithoutCount
        /// `--shard auto` with `JOB_COMPLETION_INDEX` unset or empty.
        case automaticShardWithoutIndex
        /// `--shard auto` with `JOB_COMPLETION_INDEX`, `index`, not from 0 to `count - 1`.
        case automaticShardIndex(String, count: Int)
        /// URLs with `-i`.
        case urlsWithInputFile
        /// `-o` with `-i`.
        case outputWithInputFile
        /// `--shard` without `-i`.
        case shardWithoutInputFile
        /// `--include` or `--exclude` without `-i`.
        case filterWithoutInputFile
        /// `-o` and `--content-disposition`.
        case outputAndContentDisposition
        /// `--key` without `--cert`.
        case keyWithoutCertificate
        /// `-v` and `-q`.
        case verboseAndQuiet
        /// URLs on the command line that name different files (the two names, as the URLs
        /// give them), with no `-o` or pin to make them mirrors of one.
        case severalFiles(String, String)
        /// `-O` (curl's `--remote-name`) followed by something that is not a URL: wget's
        /// `-O FILE`, which is `-o FILE` here.
        case remoteNameWithFile(String)
        /// `-o` given again (as spelled): a second file, which one command line does not name.
        case secondOutput(String)
        /// `-P` (or `--output-dir`) given again, as spelled.
        case secondDirectory(String)
        /// curl's spelling (as given) without `-O` or `-o`: curl would write the body to
        /// standard output, pinfetch to a file, so a `| sh` after it would run nothing.
        case curlStandardOutput(String)

        /// The line pinfetch prints for it.
        var message: String {
            switch self {
            case .secondPin(let option, let first): "\(option) given after \(first): give one checksum"
            case .checksumFileAfterPin(let first): "--checksum-file given with \(first): give one checksum"
            case .secondSignature: "--signature given twice: give one"
            case .baseURLWithoutInputFile:
                "--base-url goes with -i FILE (or --checksum-file FILE without a URL): every entry of FILE is fetched"
            case .checksumFileWithBaseURL: "--checksum-file with -i FILE --base-url: FILE is the checksum file already"
            case .pinWithBaseURL(let option): "\(option) with --base-url: each entry has its own pin"
            case .signatureWithoutChecksumFile:
                "--signature and --trusted-key check a checksum file: give --checksum-file, or -i with --base-url"
            case .signatureWithoutKey: "--signature needs --trusted-key: the key the signature must be by"
            case .signatureAndChecksumFileFromStandardInput:
                "--signature - and the checksum file both read standard input: give one a file"
            case .shardCountWithoutAutomaticShard: "--shard-count goes with --shard auto"
            case .automaticShardWithoutCount: "--shard auto needs --shard-count N (the Job's completions)"
            case .automaticShardWithoutIndex:
                "--shard auto reads JOB_COMPLETION_INDEX (a Kubernetes Indexed Job's index), which is not set"
            case .automaticShardIndex(let index, let count):
                "JOB_COMPLETION_INDEX is \(SafeFileName.quoted(index)): --shard auto needs 0 to \(count - 1)"
            case .urlsWithInputFile: "give URLs on the command line or with -i, not both"
            case .outputWithInputFile: "-o names one file; with -i use -P DIR"
            case .shardWithoutInputFile: "--shard goes with -i"
            case .filterWithoutInputFile:
                "--include and --exclude choose entries of -i FILE or an oci:// artifact's files"
            case .outputAndContentDisposition: "-o and --content-disposition both name the file: give one"
            case .keyWithoutCertificate: "--key goes with --cert"
            case .verboseAndQuiet: "-v and -q: give one"
            case .severalFiles(let first, let other):
                "the URLs name different files (\(SafeFileName.quoted(first)), \(SafeFileName.quoted(other))), "
                    + "and URLs on one line are mirrors of one file: for several files give -i FILE (a line "
                    + "'URL [checksum] [name]' each), for mirrors give -o NAME or a pin"
            case .remoteNameWithFile(let file):
                "-O is curl's --remote-name (the URL's name, pinfetch's default) and takes no file: "
                    + "for wget's -O \(SafeFileName.quoted(file)) give -o \(SafeFileName.quoted(file))"
            case .secondOutput(let option):
                "\(option) given twice: one command line fetches one file; for several give -i FILE "
                    + "(a line 'URL [checksum] [name]' each)"
            case .secondDirectory(let option): "\(option) given twice: give one directory"
            case .curlStandardOutput(let option):
                "\(option) is curl's, and curl without -O or -o writes the body to standard output: "
                    + "give -o - for that (the verified bytes), or -O to save the file"
            }
        }
    }
}
