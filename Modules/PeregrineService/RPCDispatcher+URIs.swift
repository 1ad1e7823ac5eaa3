import Peregrine

extension RPCDispatcher {
    /// `aria2.getServers(gid)`: the sources an active download fetches from — its own URL and
    /// the mirrors it has not dropped — with the download's speed on the first, as aria2 lists
    /// its servers (one file, index 1). A download that is not active is aria2's error.
    func getServers(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let (gid, url) = try task(text)
        guard status(of: url) == .active, let snapshot = manager.engine.task(url) else {
            throw RPCError("No active download for GID#\(gid)")
        }
        let dropped = snapshot.droppedURLs
        let sources = ([url] + snapshot.record.mirrors).filter { dropped[$0] == nil }
        let speed = speed(of: url)
        let servers: [JSONValue] = sources.enumerated().map { index, source in
            [
                "uri": .string(source), "currentUri": .string(source),
                "downloadSpeed": .string(String(index == 0 ? speed : 0)),
            ]
        }
        return [["index": "1", "servers": .array(servers)]]
    }

    /// `aria2.changeUri(gid, fileIndex, delUris, addUris[, position])`: removes URIs from a
    /// download and adds others (its mirrors), as aria2 does for its one file (index 1); returns
    /// `[deleted, added]`. The download's own URL names it in Peregrine: it stays first and is
    /// never deleted (not counted). `position` places the additions among the URIs (0 before
    /// the mirrors, as the own URL stays first); a running transfer goes on with the sources it
    /// has, the next one uses the new list.
    func changeUri(_ params: RPCParameters) throws(RPCError) -> JSONValue {
        let text = try params.string(0)
        let (_, url) = try task(text)
        guard try params.integer(1) == 1 else { throw RPCError("fileIndex is out of range") }
        let deleting = try params.strings(2) ?? []
        let adding = try params.strings(3) ?? []
        let position: Int? = params.count > 4 ? try params.integer(4) : nil
        if let position, position < 0 { throw RPCError("position must be zero or more") }
        guard let snapshot = manager.engine.task(url) else { throw RPCError("No such download: \(text)") }
        var mirrors = snapshot.record.mirrors
        var deleted = 0
        for uri in deleting {
            // aria2 deletes one URI per entry of delUris.
            if let index = mirrors.firstIndex(of: uri) {
                mirrors.remove(at: index)
                deleted += 1
            }
        }
        for uri in adding {
            do throws(URLValidationError) {
                _ = try DownloadURL(uri)
            } catch {
                throw RPCError("Invalid URI \(uri): \(error)")
            }
        }
        let fresh = adding.filter { $0 != url && !mirrors.contains($0) }
        let at = position.map { min(max($0 - 1, 0), mirrors.count) } ?? mirrors.count
        mirrors.insert(contentsOf: fresh, at: at)
        do throws(URLValidationError) {
            try manager.engine.setMirrors(mirrors, forTask: url)
        } catch {
            throw RPCError("Invalid URI: \(error)")
        }
        let kept = Set(manager.engine.task(url)?.record.mirrors ?? [])
        return [.integer(Int64(deleted)), .integer(Int64(fresh.filter { kept.contains($0) }.count))]
    }

    /// aria2's `bitfield` of a download: a hexadecimal digit for each four pieces, the highest
    /// bit the first piece, a bit set for a piece whose bytes are all here.
    static func bitfield(total: Int64, pieceLength: Int64, have ranges: [Range<Int64>]) -> String {
        let pieces = Int((total + pieceLength - 1) / pieceLength)
        guard pieces > 0 else { return "" }
        var bits = [Bool](repeating: false, count: (pieces + 7) / 8 * 8)
        var sorted: [Range<Int64>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) where !range.isEmpty {
            if let last = sorted.last, range.lowerBound <= last.upperBound {
                sorted[sorted.count - 1] = last.lowerBound..<max(last.upperBound, range.upperBound)
            } else {
                sorted.append(range)
            }
        }
        var next = 0
        for piece in 0..<pieces {
            let start = Int64(piece) * pieceLength
            let end = min(start + pieceLength, total)
            while next < sorted.count, sorted[next].upperBound <= start { next += 1 }
            if next < sorted.count, sorted[next].lowerBound <= start, sorted[next].upperBound >= end {
                bits[piece] = true
            }
        }
        let digits = Array("0123456789abcdef")
        var text = ""
        text.reserveCapacity(bits.count / 4)
        for nibble in stride(from: 0, to: bits.count, by: 4) {
            var value = 0
            for bit in 0..<4 where bits[nibble + bit] { value |= 8 >> bit }
            text.append(digits[value])
        }
        return text
    }
}
