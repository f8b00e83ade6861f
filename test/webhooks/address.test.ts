/**
 * The SSRF guard's rules on their own: IP parsing (src/webhooks/address.ts), which ranges
 * are refused, URLs in the odd notations the URL parser turns into loopback, and the
 * connection-time lookup (adapters/webhooks/guard.ts) with an injected resolver.
 */
import type { LookupOptions } from "node:dns"
import { describe, expect, it } from "vitest"
import { BlockedAddressError, firstBlocked, guardedLookup, type Resolver } from "../../adapters/webhooks/guard.js"
import { addressBlockReason, isIpLiteral, literalHostBlockReason, parseIPv4, parseIPv6 } from "../../src/webhooks/address.js"

const bytes6 = (text: string) => parseIPv6(text)?.join(".")

describe("parsing", () => {
  it("IPv4: four decimal octets, nothing else", () => {
    expect(parseIPv4("127.0.0.1")).toEqual([127, 0, 0, 1])
    expect(parseIPv4("255.255.255.255")).toEqual([255, 255, 255, 255])
    expect(parseIPv4("0.0.0.0")).toEqual([0, 0, 0, 0])
    for (const text of ["256.0.0.1", "1.2.3", "1.2.3.4.5", "127.1", "0x7f.0.0.1", "1.2.3.-4", "1.2.3.4 ", "", "a.b.c.d", "1..2.3"]) {
      expect(parseIPv4(text), text).toBeUndefined()
    }
  })

  it("IPv4: a leading zero is no address (inet_aton would read it as octal)", () => {
    expect(parseIPv4("012.0.0.1")).toBeUndefined() // octal 10.0.0.1 to a C resolver
    expect(parseIPv4("0177.0.0.1")).toBeUndefined()
    expect(addressBlockReason("012.0.0.1")).toBe("not an IP address")
  })

  it("IPv6: full, compressed, bracketed, with a zone or a trailing dotted quad", () => {
    expect(bytes6("::1")).toBe("0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.1")
    expect(bytes6("[::1]")).toBe(bytes6("0:0:0:0:0:0:0:1"))
    expect(bytes6("::")).toBe(Array(16).fill(0).join("."))
    expect(bytes6("FE80::1")).toBe(bytes6("fe80:0:0:0:0:0:0:1"))
    expect(bytes6("fe80::1%eth0")).toBe(bytes6("fe80::1"))
    expect(bytes6("::ffff:127.0.0.1")).toBe(bytes6("::ffff:7f00:1"))
    expect(bytes6("1:2:3:4:5:6:1.2.3.4")).toBe(bytes6("1:2:3:4:5:6:102:304"))
    expect(bytes6("1:2:3:4:5:6:7::")).toBe(bytes6("1:2:3:4:5:6:7:0"))
    for (
      const text of [
        "1::2::3",
        "1:2:3:4:5:6:7:8:9",
        "1:2:3:4:5:6:7",
        "12345::",
        "::ffff:1.2.3",
        "::ffff:256.0.0.1",
        "1:2:3:4:5:6:7:8::",
        "g::1",
        ":1",
        "127.0.0.1",
        ""
      ]
    ) {
      expect(parseIPv6(text), text).toBeUndefined()
    }
    expect(isIpLiteral("::1")).toBe(true)
    expect(isIpLiteral("10.0.0.1")).toBe(true)
    expect(isIpLiteral("example.com")).toBe(false)
  })
})

describe("which addresses are refused", () => {
  it("IPv4 ranges: loopback, private, link-local and the other non-public blocks, at their edges", () => {
    const cases: ReadonlyArray<readonly [string, string | undefined]> = [
      ["127.0.0.1", "loopback"],
      ["127.255.255.255", "loopback"],
      ["10.0.0.0", "private"],
      ["10.255.255.255", "private"],
      ["11.0.0.0", undefined],
      ["172.15.255.255", undefined],
      ["172.16.0.0", "private"],
      ["172.31.255.255", "private"],
      ["172.32.0.0", undefined],
      ["192.168.1.1", "private"],
      ["192.169.0.0", undefined],
      ["169.254.169.254", "link-local"], // cloud metadata
      ["100.64.0.1", "shared (carrier-grade NAT)"],
      ["100.128.0.0", undefined],
      ["0.0.0.0", "unspecified (\"this network\")"],
      ["192.0.2.1", "documentation"],
      ["198.18.0.1", "benchmarking"],
      ["198.20.0.0", undefined],
      ["224.0.0.1", "multicast"],
      ["239.255.255.255", "multicast"],
      ["255.255.255.255", "reserved"],
      ["8.8.8.8", undefined],
      ["1.1.1.1", undefined],
      ["93.184.216.34", undefined]
    ]
    for (const [address, reason] of cases) expect(addressBlockReason(address), address).toBe(reason)
  })

  it("IPv6 ranges, and IPv4 carried inside IPv6 decided by the IPv4 address", () => {
    const cases: ReadonlyArray<readonly [string, string | undefined]> = [
      ["::1", "loopback"],
      ["::", "unspecified"],
      ["fe80::1", "link-local"],
      ["febf:ffff::1", "link-local"],
      ["fec0::1", "site-local"],
      ["fc00::1", "unique-local"],
      ["fd12:3456::1", "unique-local"],
      ["ff02::1", "multicast"],
      ["2001:db8::1", "documentation"],
      ["100::1", "discard-only"],
      ["::ffff:127.0.0.1", "IPv4 loopback inside IPv6"],
      ["::ffff:7f00:1", "IPv4 loopback inside IPv6"],
      ["::ffff:169.254.169.254", "IPv4 link-local inside IPv6"],
      ["::ffff:10.1.2.3", "IPv4 private inside IPv6"],
      ["::127.0.0.1", "IPv4 loopback inside IPv6"], // IPv4-compatible (deprecated)
      ["64:ff9b::127.0.0.1", "IPv4 loopback inside NAT64"],
      ["2002:c0a8:0101::1", "IPv4 private inside 6to4"], // 192.168.1.1
      ["::ffff:8.8.8.8", undefined],
      ["64:ff9b::8.8.8.8", undefined],
      ["2606:4700:4700::1111", undefined],
      ["2a00:1450:4001::200e", undefined],
      ["4000::1", "reserved"] // outside 2000::/3
    ]
    for (const [address, reason] of cases) expect(addressBlockReason(address), address).toBe(reason)
  })

  it("text that is no IP address is refused too (fail closed)", () => {
    for (const text of ["localhost", "example.com", "", "127.1", "0x7f.1", "[::1"]) {
      expect(addressBlockReason(text), text).toBe("not an IP address")
    }
  })
})

describe("webhook URLs by their host", () => {
  const reason = (url: string) => literalHostBlockReason(new URL(url))

  it("odd notations the URL parser reads as loopback are refused", () => {
    for (
      const url of [
        "http://0x7f.1/",
        "http://127.1/",
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://0x7f000001/",
        "http://127.0.0.1./"
      ]
    ) {
      expect(reason(url), url).toBe("loopback")
    }
    expect(reason("http://[::ffff:127.0.0.1]/")).toBe("IPv4 loopback inside IPv6")
    expect(reason("http://[0:0:0:0:0:ffff:7f00:1]:8080/x")).toBe("IPv4 loopback inside IPv6")
    expect(reason("http://[::1]:9/x")).toBe("loopback")
    expect(reason("http://0/")).toBe("unspecified (\"this network\")")
    expect(reason("http://012.0.0.1/")).toBe("private") // the URL parser reads octal: 10.0.0.1
  })

  it("localhost names are loopback; other names wait for resolution", () => {
    for (const url of ["http://localhost/", "http://LOCALHOST:8080/", "http://localhost./", "https://api.localhost/"]) {
      expect(reason(url), url).toBe("loopback (localhost)")
    }
    expect(reason("https://example.com/hooks")).toBeUndefined()
    expect(reason("https://localhost.example.com/hooks")).toBeUndefined()
    expect(reason("https://8.8.8.8/hooks")).toBeUndefined()
    expect(reason("https://[2606:4700:4700::1111]/hooks")).toBeUndefined()
  })
})

describe("connection-time lookup", () => {
  type Answer = { error: NodeJS.ErrnoException | null; address?: unknown; family?: number | undefined }
  const lookup = (resolver: Resolver, options: LookupOptions = {}, allowPrivate = false) =>
    new Promise<Answer>((resolve) => {
      guardedLookup(resolver, allowPrivate)("hooks.example", options, (error, address, family) => resolve({ error, address, family }))
    })
  const resolving = (...addresses: Array<[string, number]>): Resolver => async () =>
    addresses.map(([address, family]) => ({ address, family }))

  it("refuses a name that resolves to any non-public address, even next to a public one", async () => {
    const answer = await lookup(resolving(["93.184.216.34", 4], ["127.0.0.1", 4]))
    expect(answer.error).toBeInstanceOf(BlockedAddressError)
    expect(answer.error).toMatchObject({ code: "EBLOCKEDADDRESS", address: "127.0.0.1", reason: "loopback" })
    expect((await lookup(resolving(["::ffff:169.254.169.254", 6]))).error).toMatchObject({ reason: "IPv4 link-local inside IPv6" })
    expect(firstBlocked([{ address: "8.8.8.8" }, { address: "fd00::1" }])).toEqual({ address: "fd00::1", reason: "unique-local" })
    expect(firstBlocked([{ address: "8.8.8.8" }])).toBeUndefined()
  })

  it("passes public addresses on, honouring the family and `all`", async () => {
    const both = resolving(["2606:4700::1111", 6], ["1.1.1.1", 4])
    expect(await lookup(both)).toEqual({ error: null, address: "2606:4700::1111", family: 6 })
    expect(await lookup(both, { family: 4 })).toEqual({ error: null, address: "1.1.1.1", family: 4 })
    expect((await lookup(both, { all: true })).address).toEqual([
      { address: "2606:4700::1111", family: 6 },
      { address: "1.1.1.1", family: 4 }
    ])
    expect((await lookup(resolving(["1.1.1.1", 4]), { family: 6 })).error).toMatchObject({ code: "ENOTFOUND" })
  })

  it("no addresses or a failed resolution is an error; private addresses pass when allowed", async () => {
    expect((await lookup(resolving())).error).toMatchObject({ code: "ENOTFOUND" })
    const failing: Resolver = () => Promise.reject(Object.assign(new Error("queryA ESERVFAIL"), { code: "ESERVFAIL" }))
    expect((await lookup(failing)).error).toMatchObject({ code: "ESERVFAIL" })
    expect(await lookup(resolving(["127.0.0.1", 4]), {}, true)).toEqual({ error: null, address: "127.0.0.1", family: 4 })
  })
})
