/**
 * A small authoritative DNS responder on 127.0.0.1 (UDP, a free port) for tests: TXT records
 * set per name, NXDOMAIN for unknown names, and two failure modes: `silent` (a resolver that
 * never answers: lookups time out) and `servfail`.
 */
import * as packet from "dns-packet"
import * as dgram from "node:dgram"

const SERVFAIL = 2
const NXDOMAIN = 3

export interface DnsResponder {
  /** `127.0.0.1:<port>`, as `--dns-server` takes it. */
  readonly server: string
  /** Sets the TXT values at `name` (an empty list: the name exists without TXT records). */
  readonly setTxt: (name: string, values: ReadonlyArray<string>) => void
  readonly remove: (name: string) => void
  readonly setMode: (mode: "answer" | "silent" | "servfail") => void
  /** How many queries arrived (answered or not). */
  readonly queries: () => number
  readonly close: () => Promise<void>
}

export const startDnsResponder = async (): Promise<DnsResponder> => {
  const records = new Map<string, ReadonlyArray<string>>()
  let mode: "answer" | "silent" | "servfail" = "answer"
  let received = 0
  const socket = dgram.createSocket("udp4")
  socket.on("message", (message, remote) => {
    received++
    if (mode === "silent") return
    let query: packet.DecodedPacket
    try {
      query = packet.decode(message)
    } catch {
      return
    }
    const question = query.questions?.[0]
    const name = question?.name.toLowerCase() ?? ""
    const values = records.get(name)
    const rcode = mode === "servfail" ? SERVFAIL : values === undefined ? NXDOMAIN : 0
    const answers: Array<packet.Answer> = rcode === 0 && question?.type === "TXT"
      ? (values ?? []).map((value) => ({ type: "TXT", name, class: "IN", ttl: 1, data: value }))
      : []
    const reply = packet.encode({
      type: "response",
      id: query.id ?? 0,
      flags: packet.AUTHORITATIVE_ANSWER | rcode,
      ...(question !== undefined ? { questions: [question] } : {}),
      answers
    })
    socket.send(reply, remote.port, remote.address)
  })
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject)
    socket.bind(0, "127.0.0.1", () => resolve())
  })
  return {
    server: `127.0.0.1:${socket.address().port}`,
    setTxt: (name, values) => records.set(name.toLowerCase(), values),
    remove: (name) => records.delete(name.toLowerCase()),
    setMode: (next) => (mode = next),
    queries: () => received,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve()))
  }
}
