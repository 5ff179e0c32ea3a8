/// A compact JWS with one signature byte changed, for tests that a verifier refuses it. Swapping the
/// signature's first base64url character changes the top six bits of its first byte, so the result is always
/// well-formed and always different. Editing the last characters instead is not: the final character carries
/// two bits and four zero padding bits, so a replacement can decode to the original signature or fail to
/// decode at all — a 1-in-256 flake.
public func tamperingSignature(of token: String) -> String {
    guard let dot = token.lastIndex(of: "."), token.index(after: dot) < token.endIndex else {
        preconditionFailure("not a compact JWS with a signature: \(token.prefix(40))")
    }
    let first = token.index(after: dot)
    return token.replacingCharacters(in: first...first, with: token[first] == "A" ? "B" : "A")
}
