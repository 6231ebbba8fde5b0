// swift-tools-version:6.0
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "pinfetch",
    products: [
        .library(name: "PinFetch", targets: ["PinFetch"]),
        .executable(name: "pinfetch", targets: ["pinfetch"]),
        .executable(name: "pinfetch-bench", targets: ["pinfetch-bench"]),
    ],
    targets: [
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        // glibc's <sys/xattr.h>, which the Glibc module does not include.
        .systemLibrary(name: "CXattr"),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .target(
            name: "PinFetch",
            dependencies: ["CCurl", "COpenSSL", "CXattr", "CZlib"],
            swiftSettings: swiftSettings
        ),
        .target(name: "PinFetchCLI", dependencies: ["PinFetch"], swiftSettings: swiftSettings),
        // pinfetch.1, the manual page, sits beside the tool's main.swift (ManPageTests checks it).
        .executableTarget(
            name: "pinfetch",
            dependencies: ["PinFetchCLI"],
            exclude: ["pinfetch.1"],
            swiftSettings: swiftSettings
        ),
        // The benchmark (README, "Benchmark"). It runs the built `pinfetch` binary as a child process (it imports
        // no library); the dependencies make `swift run -c release pinfetch-bench` build both
        // executables it runs. `pinfetch-bench-measure` measures each child's own ru_maxrss.
        .executableTarget(
            name: "pinfetch-bench",
            dependencies: ["pinfetch", "pinfetch-bench-measure"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "pinfetch-bench-measure", swiftSettings: swiftSettings),
        .testTarget(
            name: "PinFetchTests",
            dependencies: ["PinFetch", "PinFetchCLI", "pinfetch", "COpenSSL"],
            swiftSettings: swiftSettings
        ),
    ]
)
