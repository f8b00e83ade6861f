/**
 * A visitor: whoever calls through a publishable key. The key is public by design (anyone can
 * copy it from a web page), so visitors are told apart by client address, which the edge
 * passes in. Visitors see the public views of services and staff, are rate-limited per
 * address, hold only a few short holds and book only as new clients.
 */
export interface Visitor {
  /** The publishable key's id. */
  readonly key_id: string
  /** The client address the request came from, as `visitorAddress` counts it. */
  readonly address: string
}

/**
 * What a visitor's `Idempotency-Key` is kept under: apart from the keys of the account's own
 * integrations (a visitor must neither replay nor claim those), shared by the publishable
 * key's visitors so that a retry from a changed address still replays.
 */
export const visitorIdempotencyKey = (visitor: Visitor, key: string): string => `visitor ${visitor.key_id} ${key}`

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/
const GROUP = /^[0-9a-f]{1,4}$/i

/**
 * The address a visitor is counted by: an IPv4 address as it is (an IPv4-mapped IPv6 one
 * too), an IPv6 address by its /64 network, since one subscriber usually gets a whole /64 and
 * can move through it at will. Anything else is taken as it is.
 */
export const visitorAddress = (address: string): string => {
  const mapped = /^::ffff:(.+)$/i.exec(address)?.[1]
  if (mapped !== undefined && IPV4.test(mapped)) return mapped
  if (!address.includes(":")) return address
  const halves = address.replace(/%.*$/, "").split("::")
  if (halves.length > 2) return address
  const split = (half: string | undefined) =>
    half === undefined || half === "" ? [] : half.split(":").flatMap((part) => (IPV4.test(part) ? ["0", "0"] : [part]))
  const head = split(halves[0])
  const tail = split(halves[1])
  const missing = 8 - head.length - tail.length
  if ((halves.length === 1 ? missing !== 0 : missing < 1) || ![...head, ...tail].every((group) => GROUP.test(group))) return address
  const groups = [...head, ...Array<string>(missing).fill("0"), ...tail]
  return `${groups.slice(0, 4).map((group) => parseInt(group, 16).toString(16)).join(":")}::/64`
}
