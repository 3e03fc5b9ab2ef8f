import FleetIngest
import FleetTestSupport
import Foundation
import NIOCore
import NIOPosix
import Testing
#if canImport(Glibc)
import Glibc
#endif

// The subscriber over TLS.
extension MQTTSubscriberTests {
    @Test("TLS: a server certificate from the given CA is accepted; one from another CA is refused")
    func tls() async throws {
        let directory = try makeServerDirectory("tls")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = { (name: String) in directory.appendingPathComponent(name).path }
        try await makeCertificateAuthority(path("ca"))
        try await makeCertificateAuthority(path("other-ca"))
        try await run("/usr/bin/openssl", ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                                           "-keyout", path("server.key"), "-out", path("server.csr"),
                                           "-subj", "/CN=fleet broker"])
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: path("san.cnf"), atomically: true, encoding: .utf8)
        try await run("/usr/bin/openssl", ["x509", "-req", "-in", path("server.csr"), "-CA", path("ca.pem"),
                                           "-CAkey", path("ca.key"), "-CAcreateserial", "-days", "1",
                                           "-extfile", path("san.cnf"), "-out", path("server.pem")])
        let tlsPort = freeLoopbackPort()
        let extra = ["listener \(tlsPort) 127.0.0.1", "cafile \(path("ca.pem"))", "certfile \(path("server.pem"))",
                     "keyfile \(path("server.key"))"]
        try await withBroker(extraConfiguration: extra) { broker in
            let subscriber = try await MQTTSubscriber.connect(host: "127.0.0.1", port: tlsPort, clientID: "ingest",
                                                              caFile: path("ca.pem"))
            #expect(try await subscriber.subscribe("fleet/+/fix", qos: 1) == 1)
            try await publish(["over TLS"], port: broker.port)
            try await subscriber.receive { inbound in
                var messages = inbound.messages.makeAsyncIterator()
                let message = try #require(try await messages.next())
                #expect(message.text == "over TLS")
                await inbound.acknowledge(message.packetID.map { [$0] } ?? [])
                await subscriber.disconnect()

                do {
                    _ = try await MQTTSubscriber.connect(host: "127.0.0.1", port: tlsPort, clientID: "ingest",
                                                         caFile: path("other-ca.pem"))
                    Issue.record("connected to a server whose certificate the CA did not sign")
                } catch let error as MQTTSubscriberError {
                    guard case .io(let what) = error else { Issue.record("\(error)"); return }
                    #expect(what.contains("TLS"))
                }
            }
        }
    }
}
