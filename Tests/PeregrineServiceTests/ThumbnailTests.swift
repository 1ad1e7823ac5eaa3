import Foundation
import Peregrine
import PeregrineService
import TestSupport
import Testing

/// `GET /thumbnail/GID?height=N`: a downloaded image's thumbnail as PNG, the secret required.
@Suite struct ThumbnailTests {
    @Test func aDownloadedImageHasAPNGThumbnailOfTheHeightAsked() async throws {
        try await ServiceRig.with { rig in
            // A 200×100 gradient, served as a PNG.
            var pixels: [UInt8] = []
            for y in 0..<100 {
                for x in 0..<200 { pixels += [UInt8(x), UInt8(y * 2), 128] }
            }
            let png = try RasterImage(width: 200, height: 100, pixelFormat: .rgb8, pixels: pixels).pngData()
            try png.write(to: URL(fileURLWithPath: rig.server.documentPath("/picture.png")))
            let url = rig.server.httpURL("/picture.png")
            let events = rig.manager.events()
            let gid = try #require(try await rig.result("aria2.addUri", "[\"\(url)\"]") as? String)
            _ = await ServiceRig.await(events) {
                if case .finished(url, _) = $0 { return true }
                return false
            }
            let port = rig.port
            let secret = rig.secret!
            let answer = try await onOwnThread {
                try RPCTestClient(port: port).request("GET", path: "/thumbnail/\(gid)?height=50&token=\(secret)")
            }
            #expect(answer.status == 200)
            #expect(answer.headers["content-type"] == "image/png")
            let thumbnail = try Thumbnail(data: Data(answer.bodyBytes))
            #expect(thumbnail.height == 50 && thumbnail.width == 100)

            let refused = try await onOwnThread {
                try RPCTestClient(port: port).request("GET", path: "/thumbnail/\(gid)?height=50&token=wrong")
            }
            #expect(refused.status == 401)
            let unknown = try await onOwnThread {
                try RPCTestClient(port: port).request("GET", path: "/thumbnail/0123456789abcdef?token=\(secret)")
            }
            #expect(unknown.status == 404)
        }
    }
}
