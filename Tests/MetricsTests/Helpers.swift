/// Sample lines of rendered exposition text keyed by everything before the value, e.g.
/// `jobs_total{kind="a"}` → `"3"`, so a test can read one value out of a large rendering.
func samples(_ rendered: String) -> [String: String] {
    var result: [String: String] = [:]
    for line in rendered.split(separator: "\n") where !line.hasPrefix("#") {
        guard let space = line.lastIndex(of: " ") else { continue }
        result[String(line[..<space])] = String(line[line.index(after: space)...])
    }
    return result
}
