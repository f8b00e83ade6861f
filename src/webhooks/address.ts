/**
 * Which network addresses a webhook may reach (SSRF guard, docs/api.md §4). Only public unicast
 * addresses pass: loopback, private, link-local, unique-local, carrier-grade NAT,
 * documentation, benchmarking, multicast, broadcast and reserved ranges are refused, in
 * IPv4 and IPv6, including IPv4 addresses carried inside IPv6 (mapped, compatible, NAT64,
 * 6to4). Pure functions: the URL check at create/update time and the delivery adapter's
 * check of every resolved address share them.
 */

/**
 * The four octets of a dotted-quad IPv4 address, or undefined. Decimal only, without leading
 * zeros: `inet_aton` reads `012` as octal 10, so "012.0.0.1" is no address here (and thus
 * refused) rather than the public 12.0.0.1.
 */
export const parseIPv4 = (text: string): ReadonlyArray<number> | undefined => {
  const parts = text.split(".")
  if (parts.length !== 4) return undefined
  const octets: Array<number> = []
  for (const part of parts) {
    if (!/^(0|[1-9]\d{0,2})$/.test(part)) return undefined
    const n = Number(part)
    if (n > 255) return undefined
    octets.push(n)
  }
  return octets
}

/** The sixteen bytes of an IPv6 address (`::` and a trailing dotted quad allowed), or undefined. */
export const parseIPv6 = (input: string): ReadonlyArray<number> | undefined => {
  let text = input
  if (text.startsWith("[") && text.endsWith("]")) text = text.slice(1, -1)
  if (text.includes("%")) text = text.slice(0, text.indexOf("%")) // zone id: the address is what counts
  if (!/^[0-9a-fA-F:.]+$/.test(text) || !text.includes(":")) return undefined
  const lastColon = text.lastIndexOf(":")
  if (text.slice(lastColon + 1).includes(".")) {
    // A trailing dotted quad (::ffff:1.2.3.4) stands for the last two groups.
    const v4 = parseIPv4(text.slice(lastColon + 1))
    if (v4 === undefined) return undefined
    const hex = (hi: number, lo: number) => ((hi << 8) | lo).toString(16)
    text = `${text.slice(0, lastColon + 1)}${hex(v4[0]!, v4[1]!)}:${hex(v4[2]!, v4[3]!)}`
  }
  const halves = text.split("::")
  if (halves.length > 2) return undefined
  const groupsOf = (part: string): Array<number> | undefined => {
    if (part === "") return []
    const groups: Array<number> = []
    for (const group of part.split(":")) {
      if (!/^[0-9a-fA-F]{1,4}$/.test(group)) return undefined
      groups.push(parseInt(group, 16))
    }
    return groups
  }
  const head = groupsOf(halves[0]!)
  const rest = halves.length === 2 ? groupsOf(halves[1]!) : []
  if (head === undefined || rest === undefined) return undefined
  let groups: Array<number>
  if (halves.length === 2) {
    const missing = 8 - head.length - rest.length
    if (missing < 1) return undefined
    groups = [...head, ...Array.from({ length: missing }, () => 0), ...rest]
  } else {
    groups = head
  }
  if (groups.length !== 8) return undefined
  return groups.flatMap((g) => [g >> 8, g & 0xff])
}

const inRange4 = (ip: ReadonlyArray<number>, base: ReadonlyArray<number>, bits: number): boolean => {
  const value = ((ip[0]! << 24) | (ip[1]! << 16) | (ip[2]! << 8) | ip[3]!) >>> 0
  const start = ((base[0]! << 24) | (base[1]! << 16) | (base[2]! << 8) | base[3]!) >>> 0
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0
  return (value & mask) >>> 0 === (start & mask) >>> 0
}

const V4_BLOCKED: ReadonlyArray<readonly [ReadonlyArray<number>, number, string]> = [
  [[0, 0, 0, 0], 8, "unspecified (\"this network\")"],
  [[10, 0, 0, 0], 8, "private"],
  [[100, 64, 0, 0], 10, "shared (carrier-grade NAT)"],
  [[127, 0, 0, 0], 8, "loopback"],
  [[169, 254, 0, 0], 16, "link-local"],
  [[172, 16, 0, 0], 12, "private"],
  [[192, 0, 0, 0], 24, "reserved (IETF protocol assignments)"],
  [[192, 0, 2, 0], 24, "documentation"],
  [[192, 88, 99, 0], 24, "reserved (6to4 relay)"],
  [[192, 168, 0, 0], 16, "private"],
  [[198, 18, 0, 0], 15, "benchmarking"],
  [[198, 51, 100, 0], 24, "documentation"],
  [[203, 0, 113, 0], 24, "documentation"],
  [[224, 0, 0, 0], 4, "multicast"],
  [[240, 0, 0, 0], 4, "reserved"]
]

const blockedV4 = (ip: ReadonlyArray<number>): string | undefined => V4_BLOCKED.find(([base, bits]) => inRange4(ip, base, bits))?.[2]

const prefixIs = (bytes: ReadonlyArray<number>, prefix: ReadonlyArray<number>, bits: number): boolean => {
  for (let i = 0; i < bits; i++) {
    const byte = i >> 3
    const bit = 7 - (i & 7)
    if (((bytes[byte]! >> bit) & 1) !== ((prefix[byte] ?? 0) >> bit & 1)) return false
  }
  return true
}

const blockedV6 = (b: ReadonlyArray<number>): string | undefined => {
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0)
  if (zeros(0, 16)) return "unspecified"
  if (zeros(0, 15) && b[15] === 1) return "loopback"
  const embedded = (from: number) => blockedV4(b.slice(from, from + 4))
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible, deprecated)
  if (zeros(0, 10) && ((b[10] === 0xff && b[11] === 0xff) || (b[10] === 0 && b[11] === 0))) {
    return embedded(12) === undefined ? undefined : `IPv4 ${embedded(12)} inside IPv6`
  }
  // 64:ff9b::/96 (NAT64): the IPv4 address it stands for decides.
  if (prefixIs(b, [0, 0x64, 0xff, 0x9b], 32) && zeros(4, 12)) {
    return embedded(12) === undefined ? undefined : `IPv4 ${embedded(12)} inside NAT64`
  }
  if (prefixIs(b, [0, 0x64, 0xff, 0x9b, 0, 1], 48)) return "NAT64 local use"
  // 2002::/16 (6to4): bytes 2–5 are the IPv4 address.
  if (prefixIs(b, [0x20, 0x02], 16)) return embedded(2) === undefined ? undefined : `IPv4 ${embedded(2)} inside 6to4`
  if (prefixIs(b, [0xfe, 0x80], 10)) return "link-local"
  if (prefixIs(b, [0xfe, 0xc0], 10)) return "site-local"
  if (prefixIs(b, [0xfc], 7)) return "unique-local"
  if (prefixIs(b, [0xff], 8)) return "multicast"
  if (prefixIs(b, [0x01, 0x00], 64)) return "discard-only"
  if (prefixIs(b, [0x20, 0x01, 0x0d, 0xb8], 32)) return "documentation"
  if (prefixIs(b, [0x20, 0x01, 0x00, 0x00], 32)) return "Teredo"
  if (prefixIs(b, [0x20, 0x01, 0x00, 0x10], 28)) return "ORCHID"
  // Global unicast is 2000::/3; everything else is reserved.
  if (!prefixIs(b, [0x20], 3)) return "reserved"
  return undefined
}

/** Whether `text` is an IP address literal (IPv4 dotted quad or IPv6, brackets allowed). */
export const isIpLiteral = (text: string): boolean => parseIPv4(text) !== undefined || parseIPv6(text) !== undefined

/**
 * Why a webhook may not reach this IP address (`"loopback"`, `"private"`, …), or undefined
 * if it is a public unicast address. Text that is no IP address at all is refused too.
 */
export const addressBlockReason = (address: string): string | undefined => {
  const v4 = parseIPv4(address)
  if (v4 !== undefined) return blockedV4(v4)
  const v6 = parseIPv6(address)
  if (v6 !== undefined) return blockedV6(v6)
  return "not an IP address"
}

/** The URL's host as an address or name: brackets stripped, lower case. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[|\]$/g, "").toLowerCase()

/**
 * Why a webhook URL is refused by its host alone (a literal non-public address, or a
 * `localhost` name), or undefined. Hostnames are resolved by the caller (delivery adapter).
 */
export const literalHostBlockReason = (url: URL): string | undefined => {
  const host = hostOf(url)
  if (host === "localhost" || host.endsWith(".localhost") || host === "localhost.") return "loopback (localhost)"
  if (!isIpLiteral(host)) return undefined
  return addressBlockReason(host)
}
