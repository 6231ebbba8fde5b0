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
    ],
    targets: [
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto", providers: [.apt(["libssl-dev"])]),
        .target(name: "PinFetch", dependencies: ["CCurl", "COpenSSL"], swiftSettings: swiftSettings),
        .target(name: "PinFetchCLI", dependencies: ["PinFetch"], swiftSettings: swiftSettings),
        .executableTarget(name: "pinfetch", dependencies: ["PinFetchCLI"], swiftSettings: swiftSettings),
        .testTarget(
            name: "PinFetchTests",
            dependencies: ["PinFetch", "PinFetchCLI", "pinfetch", "COpenSSL"],
            swiftSettings: swiftSettings
        ),
    ]
)
