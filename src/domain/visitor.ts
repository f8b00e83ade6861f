/**
 * A visitor: whoever calls through a publishable key. The key is public by design (anyone can
 * copy it from a web page), so visitors are told apart by client address, which the edge
 * passes in. Visitors see the public views of services and staff, are rate-limited per
 * address, hold only a few short holds and book only as new clients.
 */
export interface Visitor {
  /** The publishable key's id. */
  readonly key_id: string
  /** The client address the request came from. */
  readonly address: string
}
