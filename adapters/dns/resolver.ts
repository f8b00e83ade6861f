/**
 * The DNS port on node:dns: TXT lookups through c-ares (never the system's getaddrinfo), on
 * the servers given (`--dns-server host:port`) or the system's configured ones. A name with
 * no TXT records, or that does not exist, has no records; a resolver that does not answer in
 * time, or answers with a failure, is a `DnsLookupFailed` saying which.
 */
import { Effect, Layer } from "effect"
import { Resolver } from "node:dns/promises"
import { DnsLookupFailed, DnsResolver, type DnsResolverService } from "../../src/ports/dns.js"

export interface DnsResolverOptions {
  /** Resolvers as `host:port` (`127.0.0.1:5353`, `[::1]:53`); absent: the system's. */
  readonly servers?: ReadonlyArray<string> | undefined
  /** About how long a lookup may take, its retry included (default 5000 ms), before it fails as a timeout. */
  readonly timeoutMs?: number | undefined
}

/** Error codes of node:dns that mean "no such records", not a failure. */
const NO_RECORDS = new Set(["ENODATA", "ENOTFOUND"])

const codeOf = (cause: unknown): string =>
  typeof (cause as { code?: unknown })?.code === "string" ? (cause as { code: string }).code : "unknown error"

export const makeDnsResolver = (options: DnsResolverOptions = {}): DnsResolverService => {
  const timeoutMs = options.timeoutMs ?? 5000
  const resolveTxt = (name: string) =>
    Effect.suspend(() => {
      // One resolver per lookup: cancelling it (on interruption) touches no other lookup. c-ares
      // waits `timeout` for the first try and twice that for the second: the deadline in all.
      const resolver = new Resolver({ timeout: Math.max(1, Math.floor(timeoutMs / 3)), tries: 2 })
      if (options.servers !== undefined && options.servers.length > 0) resolver.setServers([...options.servers])
      return Effect.tryPromise({
        try: () => resolver.resolveTxt(name),
        catch: (cause) => cause
      }).pipe(
        Effect.map((records): ReadonlyArray<string> => records.map((chunks) => chunks.join(""))),
        Effect.catchAll((cause) => {
          const code = codeOf(cause)
          if (NO_RECORDS.has(code)) return Effect.succeed<ReadonlyArray<string>>([])
          return Effect.fail(
            new DnsLookupFailed({
              reason: code === "ETIMEOUT" ? "timeout" : "resolver_error",
              message: code === "ETIMEOUT" ? `no answer within about ${timeoutMs} ms` : code
            })
          )
        }),
        Effect.ensuring(Effect.sync(() => resolver.cancel()))
      )
    })
  return { resolveTxt }
}

export const DnsResolverLive = (options: DnsResolverOptions = {}): Layer.Layer<DnsResolver> =>
  Layer.succeed(DnsResolver, makeDnsResolver(options))
