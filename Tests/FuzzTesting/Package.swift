// swift-tools-version:6.0
import PackageDescription

// libFuzzer harnesses, kept out of the main package so a plain `swift build` / `swift test` never links them.
// Build and run with `bash Tests/FuzzTesting/run.sh` (it passes `-sanitize=fuzzer,address -parse-as-library`).
let package = Package(
    name: "FuzzTesting",
    dependencies: [.package(name: "StoreSync", path: "../..")],
    targets: [
        // Declares libFuzzer's LLVMFuzzerRunDriver; the symbol comes from -sanitize=fuzzer at link time.
        .target(name: "CFuzzSupport"),
        .executableTarget(name: "FuzzJWS",
                          dependencies: ["CFuzzSupport", .product(name: "StoreSyncCrypto", package: "StoreSync")],
                          swiftSettings: [.enableUpcomingFeature("ExistentialAny")],
                          // The project's one C shim target also wraps libcurl and libmicrohttpd; its object file
                          // comes along with Crypto, so their libraries must be on the link line too.
                          linkerSettings: [.linkedLibrary("curl"), .linkedLibrary("microhttpd")]),
        // The strict JSON reader on its own: every value kind, read and skipped, and the error paths between.
        .executableTarget(name: "FuzzJSON",
                          dependencies: ["CFuzzSupport", .product(name: "StoreSyncStrictJSON", package: "StoreSync")],
                          swiftSettings: [.enableUpcomingFeature("ExistentialAny")]),
        // The app endpoints' parsing: the account token pair's headers and the purchase report's body.
        .executableTarget(name: "FuzzAppRequest",
                          dependencies: ["CFuzzSupport", .product(name: "StoreSyncAPI", package: "StoreSync")],
                          swiftSettings: [.enableUpcomingFeature("ExistentialAny")],
                          linkerSettings: [.linkedLibrary("curl"), .linkedLibrary("microhttpd")]),
    ]
)
