/// Secrets StoreSync hands out once and keeps only as a hash: account tokens' client secrets, API clients'
/// secrets.
enum Secrets {
    /// 48 characters from a 62-letter alphabet (≈ 285 bits), from the system's CSPRNG. Each 64-bit draw
    /// (one `getrandom` call) yields ten 6-bit indices; the two above the alphabet are rejected, which keeps
    /// every letter equally likely. Drawing per character cost a system call per character.
    static func random() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        var secret: [UInt8] = []
        secret.reserveCapacity(48)
        while secret.count < 48 {
            var bits = generator.next()
            for _ in 0..<10 where secret.count < 48 {
                let index = Int(bits & 63)
                bits >>= 6
                if index < alphabet.count { secret.append(alphabet[index]) }
            }
        }
        return String(decoding: secret, as: UTF8.self)
    }
}
