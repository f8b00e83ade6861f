/**
 * The client address a request is counted under (rate limits, visitors, sign-in attempts):
 * the first `X-Forwarded-For` entry when the server trusts its proxy, else the socket's peer.
 * The API and the OAuth server both read it here (this module imports nothing at run time,
 * so the OAuth server's Node handler may use it too).
 */
import type { HttpServerRequest } from "@effect/platform"

/** The rule over the raw parts: the request's headers, the socket's peer address, and whether a proxy is trusted. */
export const clientAddressOf = (
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  remoteAddress: string | undefined,
  trustProxy: boolean
): string => {
  const forwardedFor = trustProxy ? headers["x-forwarded-for"] : undefined
  if (forwardedFor !== undefined) {
    const forwarded = String(forwardedFor).split(",")[0]?.trim()
    if (forwarded) return forwarded
  }
  return remoteAddress ?? "unknown"
}

/** The client address of a platform request. */
export const clientAddress = (request: HttpServerRequest.HttpServerRequest, trustProxy: boolean): string =>
  clientAddressOf(request.headers, request.remoteAddress._tag === "Some" ? request.remoteAddress.value : undefined, trustProxy)
