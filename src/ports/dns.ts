/**
 * The DNS port: TXT lookups for domain verification. The adapter (adapters/dns) asks the
 * server's configured resolver (`--dns-server`) or the system's; the core only reads what
 * it found or why it could not find anything.
 */
import { Context, Data, type Effect } from "effect"

/**
 * Why a lookup gave no answer: the resolver did not reply in time, or replied with a failure
 * (`SERVFAIL`, `REFUSED`, unreachable). A name without TXT records is not a failure: it
 * succeeds with no records.
 */
export class DnsLookupFailed extends Data.TaggedError("DnsLookupFailed")<{
  readonly reason: "timeout" | "resolver_error"
  /** The resolver's words for it (a DNS error code such as `ESERVFAIL`), safe to show. */
  readonly message: string
}> {}

export interface DnsResolverService {
  /** The TXT records at `name`, each one's strings joined; empty when the name has none or does not exist. */
  readonly resolveTxt: (name: string) => Effect.Effect<ReadonlyArray<string>, DnsLookupFailed>
}

export class DnsResolver extends Context.Tag("slotwise/DnsResolver")<DnsResolver, DnsResolverService>() {}
